package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/tape"
)

// TestTapeShowFormat3: tape show prints a stop before the cell started, a
// stop in a host-call wait and a JavaScript call's number (tape format 3)
// in words.
func TestTapeShowFormat3(t *testing.T) {
	tp := &tape.Tape{
		Header: tape.Header{Format: tape.FormatVersion, Wasmeval: "test", Root: "/r"},
		Events: []tape.Record{
			{Type: tape.TypeRequest, N: 1, Request: json.RawMessage(`{"cells":[{"language":"js","code":"1"}]}`)},
			{Type: tape.TypeCall, Call: json.RawMessage(`{"op":"tool","name":"b"}`), Answer: json.RawMessage(`{"result":2}`), Made: 2},
			{Type: tape.TypeStop, Cell: 0, Cause: tape.CauseInterrupt, BeforeStart: true},
			{Type: tape.TypeStop, Cell: 1, Cause: tape.CauseTimeout, Waits: 3, Fuel: 99},
		},
	}
	var b strings.Builder
	if err := showTape(&b, tp); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  call tool (the cell's call 2) {\"op\":\"tool\",\"name\":\"b\"}\n",
		"  cell 0 stopped by interrupt before it started (none of its code ran)\n",
		"  cell 1 stopped by timeout in host-call wait 3 (99 units of fuel)\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("tape show lacks %q:\n%s", want, b.String())
		}
	}
}

// TestTapeShowNested: tape show prints an eval nested in a waiting cell
// as such, its result with the wait of that cell it ran in (format 5) or
// began beside (format 9), a Python call's wait and a nested cell's stop
// (format 4) in words.
func TestTapeShowNested(t *testing.T) {
	tp := &tape.Tape{
		Header: tape.Header{Format: tape.FormatVersion, Wasmeval: "test", Root: "/r"},
		Events: []tape.Record{
			{Type: tape.TypeRequest, N: 1, Request: json.RawMessage(`{"cells":[{"language":"py","code":"agent('look')"}]}`)},
			{Type: tape.TypeRequest, N: 2, Nested: true, Request: json.RawMessage(`{"cells":[{"language":"py","code":"print(1)"}]}`)},
			{Type: tape.TypeCall, Call: json.RawMessage(`{"op":"tool","name":"quick"}`), Answer: json.RawMessage(`{"result":2}`), Made: 2, Wait: 1},
			{Type: tape.TypeStop, N: 2, Cell: 0, Cause: tape.CauseTimeout, Checks: 4, Fuel: 10},
			{Type: tape.TypeResult, N: 2, Nested: true, Wait: 2, Result: json.RawMessage(`{"content":[],"details":{"cells":[{"index":0,"status":"timeout","output":"1\n"}]}}`)},
			{Type: tape.TypeRequest, N: 3, Nested: true, Request: json.RawMessage(`{"cells":[{"language":"js","code":"2"}]}`)},
			{Type: tape.TypeResult, N: 3, Nested: true, Result: json.RawMessage(`{"content":[],"details":{"cells":[{"index":0,"status":"complete"}]}}`)},
			{Type: tape.TypeRequest, N: 4, Nested: true, Request: json.RawMessage(`{"cells":[{"language":"js","code":"3"}]}`)},
			{Type: tape.TypeResult, N: 4, Nested: true, Beside: 2, Result: json.RawMessage(`{"content":[],"details":{"cells":[{"index":0,"status":"complete"}]}}`)},
			{Type: tape.TypeResult, N: 1, Result: json.RawMessage(`{"content":[],"details":{"cells":[{"index":0,"status":"complete"}]}}`)},
		},
	}
	var b strings.Builder
	if err := showTape(&b, tp); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\n=== request 1\n",
		"\n=== request 2: nested eval, run inside a cell of request 1 while it waited in agent() or tool()\n--- cell 0 (py)\n  > print(1)\n",
		"  call tool (the cell's call 2, answer taken in its host-call wait 1) {\"op\":\"tool\",\"name\":\"quick\"}\n",
		"  cell 0 of nested request 2 stopped by timeout at fuel check 4, sleep 0 (10 units of fuel)\n",
		"=== result 2: nested eval, run while its waiting cell (of request 1) was in its host-call wait 2\n--- cell 0: timeout\n  | 1\n",
		"\n=== request 3: nested eval, run inside a cell of request 1 while it waited in agent() or tool()\n",
		"=== result 3: nested eval, in request 1\n",
		"=== result 4: nested eval, begun beside its waiting cell (of request 1), on an instance of its own, in that cell's host-call wait 2\n",
		"=== result 1\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("tape show lacks %q:\n%s", want, b.String())
		}
	}
}

// TestTapeShowWakes: tape show prints what woke a JavaScript cell's event
// loop (format 6): a timer, with its due time, and a call's answer, of a
// nested cell too.
func TestTapeShowWakes(t *testing.T) {
	due := int64(50_100_000)
	tp := &tape.Tape{
		Header: tape.Header{Format: tape.FormatVersion, Wasmeval: "test", Root: "/r"},
		Events: []tape.Record{
			{Type: tape.TypeRequest, N: 1, Request: json.RawMessage(`{"cells":[{"language":"js","code":"1"}]}`)},
			{Type: tape.TypeWake, Timer: 2, NS: &due},
			{Type: tape.TypeWake, Made: 1},
			{Type: tape.TypeWake, N: 2, Cell: 1, Made: 3},
		},
	}
	var b strings.Builder
	if err := showTape(&b, tp); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  cell 0 woke: timer 2 fired (due at 50.1ms on its clock)\n",
		"  cell 0 woke: the answer of its call 1\n",
		"  cell 1 of nested request 2 woke: the answer of its call 3\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("tape show lacks %q:\n%s", want, b.String())
		}
	}
}

// TestTapeShowReaders: tape show counts the clock reads and random bytes
// of each runtime instance apart, naming it, from the reader records
// (format 8): the reads before the first are the Python instance's, and
// so are those right after a fork. A tape without reader records names
// none.
func TestTapeShowReaders(t *testing.T) {
	ns := int64(5)
	tp := &tape.Tape{
		Header: tape.Header{Format: tape.FormatVersion, Wasmeval: "test", Root: "/r"},
		Events: []tape.Record{
			{Type: tape.TypeRequest, N: 1, Request: json.RawMessage(`{"cells":[{"language":"py","code":"1"}]}`)},
			{Type: tape.TypeClock, Clock: tape.ClockWall, NS: &ns},
			{Type: tape.TypeReader, Lang: tape.ReaderJavaScript},
			{Type: tape.TypeClock, Clock: tape.ClockWall, NS: &ns},
			{Type: tape.TypeClock, Clock: tape.ClockMono, NS: &ns},
			{Type: tape.TypeRand, Data: []byte("abc")},
			{Type: tape.TypeReader, Lang: tape.ReaderPython},
			{Type: tape.TypeRand, Data: []byte("ab")},
			{Type: tape.TypeResult, N: 1, Result: json.RawMessage(`{"content":[],"details":{"cells":[{"index":0,"status":"complete"}]}}`)},
			{Type: tape.TypeFork, Header: &tape.Header{Format: tape.FormatVersion, Wasmeval: "test", Root: "/f"}},
			{Type: tape.TypeRand, Data: []byte("a")},
		},
	}
	var b strings.Builder
	if err := showTape(&b, tp); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  (1 clock read, 0 random bytes by the Python instance)\n  (2 clock reads, 3 random bytes by the JavaScript instance)\n  (0 clock reads, 2 random bytes by the Python instance)\n",
		"  (0 clock reads, 1 random bytes by the Python instance)\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("tape show lacks %q:\n%s", want, b.String())
		}
	}
	tp.Events = []tape.Record{tp.Events[0], tp.Events[1], tp.Events[8]}
	b.Reset()
	if err := showTape(&b, tp); err != nil {
		t.Fatal(err)
	}
	if want := "  (1 clock read, 0 random bytes)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("tape show of a tape without reader records lacks %q:\n%s", want, b.String())
	}
}
