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
