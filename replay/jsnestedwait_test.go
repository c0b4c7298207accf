package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// recordJSNestedInSecondWait is recordNestedInSecondWait with a
// JavaScript waiting cell: it starts two tool calls, sub and quick, works
// a while, awaits quick's answer (its loop's first wait), notes in state
// that it has it, and awaits sub's. sub's host evals in the session: a
// Python cell that waits for a slow tool (on its own instance, while the
// JavaScript cell takes quick's answer), then a JavaScript cell, which
// runs inside the waiting one, in its second wait, and prints what it
// sees of state. It returns the tape and the nested request's number.
func recordJSNestedInSecondWait(t *testing.T) (*tape.Tape, int) {
	t.Helper()
	testenv.RequirePython(t)
	ctx := context.Background()
	var sess *sandbox.Session
	host := nestingTools(&sess, nil, []sandbox.Cell{
		{Language: "py", Code: "print('py got', tool.slow({}))"},
		{Language: "js", Code: "console.log('sub saw', JSON.stringify(globalThis.state))"},
	})
	s, buf := recordingSession(t, sandbox.Options{Host: host})
	sess = s
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: `globalThis.state = [];
const s = tool.sub({});
const q = tool.quick({});
let x = 0;
for (let i = 0; i < 1e6; i++) x += i;
console.log(await q);
state.push("took quick");
console.log(await s);`}}})
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
	waits := map[string]int{}
	for _, r := range tp.Events {
		switch {
		case r.Type == tape.TypeResult && r.Nested:
			n, wait = r.N, r.Wait
			sawNote = bytes.Contains(r.Result, []byte(`sub saw [\"took quick\"]`))
		case r.Type == tape.TypeCall:
			var c struct{ Name string }
			json.Unmarshal(r.Call, &c)
			waits[c.Name] = r.Wait
		}
	}
	if n == 0 || !sawNote {
		t.Fatalf("the nested eval did not run after the cell took quick's answer (it did not see the note): %+v", tp.Events)
	}
	if wait != 2 || waits["quick"] != 1 || waits["sub"] != 3 {
		t.Fatalf("the nested result records wait %d, quick's and sub's calls waits %d and %d; want 2, 1 and 3", wait, waits["quick"], waits["sub"])
	}
	return tp, n
}

// TestJSNestedEvalReplaysInRecordedWait: an eval nested in a waiting
// JavaScript cell is recorded with the wait of that cell's event loop it
// ran in, and the cell's calls with the waits that took their answers
// (format 7); the replay runs the eval in that wait, after the guest took
// quick's answer, byte for byte, time after time. Before, JavaScript
// waits were not counted: the eval was placed as in format 4, and its
// JavaScript cell, there at once, could run before quick's answer was
// taken and print [].
func TestJSNestedEvalReplaysInRecordedWait(t *testing.T) {
	tp, _ := recordJSNestedInSecondWait(t)
	replaysIdentically(t, tp, 6)
}

// TestJSNestedEvalInAnotherWaitDiverges: a tape that says the eval nested
// in the JavaScript cell ran in its loop's fifth wait (it ran in its
// second; the cell takes sub's answer in its third and ends) fails with a
// divergence that names the nested request and both waits, and nothing
// else: the cell was not left waiting until its timeout.
func TestJSNestedEvalInAnotherWaitDiverges(t *testing.T) {
	tp, n := recordJSNestedInSecondWait(t)
	for i, r := range tp.Events {
		if r.Type == tape.TypeResult && r.N == n {
			tp.Events[i].Wait = 5
		}
	}
	rep, err := replay.Run(context.Background(), tp, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	divs := divergences(rep)
	if len(rep.Divergences) != 1 {
		t.Fatalf("want one divergence; got:\n%s", strings.Join(divs, "\n"))
	}
	if d := rep.Divergences[0]; d.What != "nested request" || d.Request != n || !strings.Contains(d.Message, "wait 2") || !strings.Contains(d.Message, "wait 5") {
		t.Fatalf("the divergence does not name nested request %d and both waits:\n%s", n, divs[0])
	}
}
