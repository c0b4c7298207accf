package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// nestingTools is the tool host of the nested-eval recordings: "slow"
// answers after 600 ms (stretched by load), so that the waiting cell
// takes "quick"'s answer meanwhile; "sub" evals the nested cells in
// *sess; "late" (with subDone not nil, closed once sub's eval is done)
// answers 300 ms after that; any other tool answers "quick".
func nestingTools(sess **sandbox.Session, subDone chan struct{}, nested []sandbox.Cell) hostcalls.HostFuncs {
	return hostcalls.HostFuncs{
		ToolFunc: func(ctx context.Context, r hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
			switch r.Name {
			case "slow":
				time.Sleep(testenv.Stretch(600 * time.Millisecond))
				return hostcalls.ToolResponse{Result: json.RawMessage(`"slow"`)}, nil
			case "sub":
				if subDone != nil {
					defer close(subDone)
				}
				if _, err := (*sess).Eval(ctx, sandbox.Request{Cells: nested}); err != nil {
					return hostcalls.ToolResponse{}, err
				}
				return hostcalls.ToolResponse{Result: json.RawMessage(`"sub done"`)}, nil
			case "late":
				if subDone != nil {
					<-subDone
					time.Sleep(testenv.Stretch(300 * time.Millisecond)) // the guest takes sub's answer first
					return hostcalls.ToolResponse{Result: json.RawMessage(`"late"`)}, nil
				}
			}
			return hostcalls.ToolResponse{Result: json.RawMessage(`"quick"`)}, nil
		},
	}
}

// recordNestedInSecondWait records a Python cell that starts two tool
// calls, sub and quick, works a while, waits for quick's answer (its
// first wait for host calls), notes in state that it has it, and waits
// for sub's (its second). sub's host evals in the session at once: a
// JavaScript cell that waits for a slow tool, then a Python cell, which
// runs inside the waiting cell and prints what it sees of state. The
// eval's request is on the tape before quick's answer, which the guest
// took before the Python cell came, in its second wait: it saw the note.
// It returns the tape and the number of the nested request.
func recordNestedInSecondWait(t *testing.T) (*tape.Tape, int) {
	t.Helper()
	testenv.RequirePython(t)
	ctx := context.Background()
	var sess *sandbox.Session
	host := nestingTools(&sess, nil, []sandbox.Cell{
		{Language: "js", Code: "console.log('js got', await tool.slow({}))"},
		{Language: "py", Code: "print('sub saw', state)"},
	})
	s, buf := recordingSession(t, sandbox.Options{Host: host})
	sess = s
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: `import _wasmeval_helpers as h
state = []
s = h._start({"op": "tool", "name": "sub", "args": {}})
q = h._start({"op": "tool", "name": "quick", "args": {}})
sum(range(10**6))
print(h._decode(h._wait_for(q)))
state.append("took quick")
print(h._decode(h._wait_for(s)))`}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	if out := res.Details.Cells[0].Output; out != "quick\nsub done\n" {
		t.Fatalf("the recorded cell: %q", out)
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	n, wait, sawNote := 0, 0, false
	for _, r := range tp.Events {
		switch {
		case r.Type == tape.TypeResult && r.Nested:
			n, wait = r.N, r.Wait
			sawNote = bytes.Contains(r.Result, []byte(`sub saw ['took quick']`))
		case r.Type == tape.TypeCall && bytes.Contains(r.Call, []byte(`"quick"`)) && n != 0:
			t.Fatalf("quick's answer is on the tape after the nested eval's result")
		}
	}
	if n == 0 || !sawNote {
		t.Fatalf("the nested eval did not run in the cell's second wait (it did not see the note): %+v", tp.Events)
	}
	if wait != 2 {
		t.Fatalf("the nested result records wait %d; want 2", wait)
	}
	return tp, n
}

// TestNestedEvalReplaysInRecordedWait: the nested eval of
// recordNestedInSecondWait, whose request the tape holds before the
// answer the guest took in its first wait, is recorded with the wait it
// ran in (its result's wait, 2), and replayed in that wait, byte for byte,
// time after time. Before, the replay ran it once the answers the tape
// holds before its request were taken (none), so its Python cell, there
// at once, and quick's answer raced for the cell's first wait, and half
// the time it ran there and printed [].
func TestNestedEvalReplaysInRecordedWait(t *testing.T) {
	tp, _ := recordNestedInSecondWait(t)
	replaysIdentically(t, tp, 6)
}

// TestNestedEvalInAnotherWaitDiverges: a tape that says the nested eval
// ran in the cell's third wait (it ran in its second, the last it has)
// fails, with a divergence that names the nested request and both waits.
func TestNestedEvalInAnotherWaitDiverges(t *testing.T) {
	tp, n := recordNestedInSecondWait(t)
	for i, r := range tp.Events {
		if r.Type == tape.TypeResult && r.N == n {
			tp.Events[i].Wait = 3
		}
	}
	rep, err := replay.Run(context.Background(), tp, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Identical {
		t.Fatal("a tape whose nested eval was moved to another wait replayed identically")
	}
	var all []string
	for _, d := range rep.Divergences {
		all = append(all, d.String())
		if d.What == "nested request" && d.Request == n && strings.Contains(d.Message, "wait 2") && strings.Contains(d.Message, "wait 3") {
			return
		}
	}
	t.Fatalf("no divergence names nested request %d and both waits:\n%s", n, strings.Join(all, "\n"))
}
