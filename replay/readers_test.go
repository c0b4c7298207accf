package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// readersPython is the waiting cell of TestConcurrentReadersReplay: it
// starts the tool call sub, whose host evals the JavaScript cell
// readersJS in the session (on its own instance, while this cell goes
// on), reads the wall clock and random bytes (before), does %s (the
// JavaScript cell reads meanwhile, or not), reads them again (after),
// makes the tool call go (which lets sub's host eval, where it waits for
// it), and prints what it read and what sub answered (the JavaScript
// cell's output).
const readersPython = `import _wasmeval_helpers as h, os, time
s = h._start({"op": "tool", "name": "sub", "args": {}})
before = (time.time_ns(), os.urandom(8).hex())
%s
after = (time.time_ns(), os.urandom(8).hex())
g = h._start({"op": "tool", "name": "go", "args": {}})
sub = h._decode(h._wait_for(s))
h._wait_for(g)
print("py", before[0], after[0], before[1], after[1])
print(sub)`

// readersJS is the nested JavaScript cell: it works a while (%s loop
// steps), then reads its clock and random numbers.
const readersJS = `let x = 0;
for (let i = 0; i < %s; i++) x += i;
console.log("js", Date.now(), Math.random(), crypto.randomUUID());`

// TestConcurrentReadersReplay: a JavaScript eval nested in a waiting
// Python cell reads its clock and random numbers while the Python cell
// reads its own, and the recording and the replay read in different
// orders. "between": when recorded, the Python cell sleeps between its
// two reads and the JavaScript cell reads meanwhile; replayed, the sleep
// does not wait and the JavaScript cell works a while first, so Python
// reads twice before it. "after": when recorded, sub's host evals only
// once the Python cell has read twice (at its go call); replayed, the
// eval runs at once while the Python cell works between its reads. With
// one stream of reads for the request, the replay handed each instance
// some of the other's (a printed time.time_ns(), os.urandom(),
// Date.now(), Math.random() differed): the tape now says which instance
// read (reader records), and each is served its own, byte for byte,
// time after time. (The tape's beside, format 9, holds the replayed eval
// until the Python cell's first wait, after both its reads; the replays
// that read in another order than recorded leave it out.)
func TestConcurrentReadersReplay(t *testing.T) {
	testenv.RequirePython(t)
	for _, tt := range []struct {
		name      string
		pyWork    string // between the Python cell's two reads
		jsLoop    string // steps the JavaScript cell works before it reads
		waitForGo bool   // sub's host evals once the cell calls go
		jsBetween bool   // when recorded, JavaScript read between Python's reads
	}{
		{name: "between", pyWork: fmt.Sprintf("time.sleep(%g)", testenv.Stretch(2*time.Second).Seconds()), jsLoop: "2e6", jsBetween: true},
		{name: "after", pyWork: "sum(range(3 * 10**6))", jsLoop: "1", waitForGo: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The recording read in the order the case says: "between" is
			// recorded again, up to three times, where a loaded machine
			// held the JavaScript cell back past the Python cell's sleep.
			var tp *tape.Tape
			for try := 1; ; try++ {
				var out string
				tp, out = recordReaders(t, fmt.Sprintf(readersPython, tt.pyWork), fmt.Sprintf(readersJS, tt.jsLoop), tt.waitForGo)
				before, after, js := readersTimes(t, out)
				if between := before < js && js < after; between == tt.jsBetween && js >= before {
					break
				}
				if try == 3 {
					t.Fatalf("the recorded JavaScript cell read its clock at %d ns, the Python cell at %d and %d ns: not the order this case records, %d times (a loaded machine?); output %q", js, before, after, try, out)
				}
				t.Logf("recording %d read in another order than this case's; recording again", try)
			}
			var readers []string
			for _, r := range tp.Events {
				if r.Type == tape.TypeReader {
					readers = append(readers, r.Lang)
				}
			}
			if len(readers) == 0 || readers[0] != "js" || tt.jsBetween && (len(readers) < 2 || readers[1] != "py") {
				t.Fatalf("the tape's reader records name %q; want the JavaScript instance (then Python again, where it read between)", readers)
			}
			replaysIdentically(t, tp, 2)
			// The tape places the eval in the Python cell's first wait
			// (beside, format 9), which makes the replay read in the
			// recorded order; without it, the eval runs when sub's call
			// does (at once), and the instances read in another order.
			for i := range tp.Events {
				tp.Events[i].Beside = 0
			}
			replaysIdentically(t, tp, 5)
		})
	}
}

// recordReaders records the Python cell py, whose tool call sub has its
// host eval the JavaScript cell js in the session (once the cell calls
// go, with waitForGo) and answer with its output; it returns the tape
// and the cell's output.
func recordReaders(t *testing.T, py, js string, waitForGo bool) (*tape.Tape, string) {
	t.Helper()
	ctx := context.Background()
	var sess *sandbox.Session
	goCalled := make(chan struct{})
	host := hostcalls.HostFuncs{
		ToolFunc: func(ctx context.Context, r hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
			if r.Name == "go" {
				close(goCalled)
				return hostcalls.ToolResponse{Result: json.RawMessage(`"gone"`)}, nil
			}
			if waitForGo {
				select {
				case <-goCalled:
				case <-time.After(testenv.Stretch(20 * time.Second)):
					return hostcalls.ToolResponse{}, fmt.Errorf("the cell did not call go")
				}
			}
			res, err := sess.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: js}}})
			if err != nil {
				return hostcalls.ToolResponse{}, err
			}
			b, _ := json.Marshal(res.Details.Cells[0].Output)
			return hostcalls.ToolResponse{Result: b}, nil
		},
	}
	s, buf := recordingSession(t, sandbox.Options{Host: host})
	sess = s
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: py}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	out := res.Details.Cells[0].Output
	if c := res.Details.Cells[0]; c.Status != "complete" {
		t.Fatalf("the recorded cell: %s, %q", c.Status, out)
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return tp, out
}

// readersTimes are the times the recorded cells of recordReaders printed:
// the Python cell's two (ns) and the JavaScript cell's, in ns too.
func readersTimes(t *testing.T, out string) (before, after, js int64) {
	t.Helper()
	var py, j []string
	for _, l := range strings.Split(out, "\n") {
		switch f := strings.Fields(l); {
		case len(f) == 5 && f[0] == "py":
			py = f
		case len(f) == 4 && f[0] == "js":
			j = f
		}
	}
	if py == nil || j == nil {
		t.Fatalf("the recorded output: %q", out)
	}
	parse := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("the recorded output %q: %v", out, err)
		}
		return n
	}
	return parse(py[1]), parse(py[2]), parse(j[1]) * int64(time.Millisecond)
}

// TestFormat7ReadsOneStream: a tape of format 7, whose reads have no
// reader records, replays as one stream of reads for both instances, as
// it always did: a session recorded now whose Python and JavaScript cells
// read clocks and random bytes one after the other, its reader records
// left out and its header saying format 7, replays byte for byte (served
// by instance, the JavaScript cell would find no reads of its own).
func TestFormat7ReadsOneStream(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	s, buf := recordingSession(t, sandbox.Options{})
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{
		{Language: "py", Code: "import time, os\nprint(time.time_ns(), os.urandom(4).hex())"},
		{Language: "js", Code: "console.log(Date.now(), Math.random())"},
		{Language: "py", Code: "print(time.time_ns(), os.urandom(4).hex())"},
	}})
	if err != nil || res.Details.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	s.Close(ctx)
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var events []tape.Record
	readers := 0
	for _, r := range tp.Events {
		if r.Type == tape.TypeReader {
			readers++
			continue
		}
		events = append(events, r)
	}
	if readers < 2 {
		t.Fatalf("the tape holds %d reader records; want the JavaScript cell's and the Python cell's after it", readers)
	}
	tp.Header.Format, tp.Events = 7, events
	replaysIdentically(t, tp, 1)
}
