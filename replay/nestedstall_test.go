package replay_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// recordNestedWithLateCall is recordNestedInSecondWait with a third call,
// late, whose answer comes after sub's: the cell waits for sub's answer
// (its second wait, the one the nested eval ran in) with late's still
// out, and takes late's in its third wait. On the tape late's call comes
// after the nested eval's result, so a replay answers it once that eval
// has run. It returns the tape and the nested request's number.
func recordNestedWithLateCall(t *testing.T) (*tape.Tape, int) {
	t.Helper()
	testenv.RequirePython(t)
	ctx := context.Background()
	var sess *sandbox.Session
	subDone := make(chan struct{})
	host := nestingTools(&sess, subDone, []sandbox.Cell{
		{Language: "js", Code: "console.log('js got', await tool.slow({}))"},
		{Language: "py", Code: "print('sub saw', state)"},
	})
	s, buf := recordingSession(t, sandbox.Options{Host: host})
	sess = s
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", TimeoutSeconds: 20, Code: `import _wasmeval_helpers as h
state = []
s = h._start({"op": "tool", "name": "sub", "args": {}})
q = h._start({"op": "tool", "name": "quick", "args": {}})
l = h._start({"op": "tool", "name": "late", "args": {}})
sum(range(10**6))
print(h._decode(h._wait_for(q)))
state.append("took quick")
print(h._decode(h._wait_for(s)))
print(h._decode(h._wait_for(l)))`}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	if out := res.Details.Cells[0].Output; out != "quick\nsub done\nlate\n" {
		t.Fatalf("the recorded cell: %q", out)
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	n, waits := 0, map[string]int{}
	for _, r := range tp.Events {
		switch {
		case r.Type == tape.TypeResult && r.Nested:
			n, waits["nested"] = r.N, r.Wait
		case r.Type == tape.TypeCall && n != 0 && bytes.Contains(r.Call, []byte(`"late"`)):
			waits["late"] = r.Wait
		}
	}
	if waits["nested"] != 2 || waits["late"] != 3 {
		t.Fatalf("the nested eval ran in wait %d and late's answer (after it on the tape: %v) was taken in wait %d; want 2 and 3",
			waits["nested"], waits["late"] != 0, waits["late"])
	}
	return tp, n
}

// TestTamperedNestedWaitDoesNotStall: a tape whose nested result names a
// wait other than the one the eval ran in, the second. Named a later one
// (3, or 100, which the cell never reaches), the replay held the eval
// for that wait while the cell, in its second wait, waited for late's
// answer, which the replay holds until the eval has run: nothing moved
// until the cell's timeout (20 s) stopped it. Now the eval runs as soon
// as the cell waits with no answer to take but the ones held for it, and
// the report names the nested request and both waits, and nothing else:
// the cell was not stopped. Named an earlier one (1), the eval runs there
// and sees the state of that wait, which the report shows as its
// result's diff, again with nothing else.
func TestTamperedNestedWaitDoesNotStall(t *testing.T) {
	tp0, n := recordNestedWithLateCall(t)
	for _, tc := range []struct {
		name string
		wait int
		want []string // in the one divergence
	}{
		{"later", 3, []string{"nested request: the replayed eval (nested request", "in that cell's wait 2", "recorded it in wait 3"}},
		{"never reached", 100, []string{"nested request: the replayed eval (nested request", "in that cell's wait 2", "recorded it in wait 100"}},
		{"earlier", 1, []string{"result: the cell's output differs", "-sub saw ['took quick']", "+sub saw []"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := *tp0
			tp.Events = slices.Clone(tp0.Events)
			for i, r := range tp.Events {
				if r.Type == tape.TypeResult && r.N == n {
					tp.Events[i].Wait = tc.wait
				}
			}
			rep, err := replay.Run(context.Background(), &tp, replay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			divs := divergences(rep)
			if len(rep.Divergences) != 1 || rep.Divergences[0].Request != n {
				t.Fatalf("want one divergence, of nested request %d; got:\n%s", n, strings.Join(divs, "\n"))
			}
			for _, w := range tc.want {
				if !strings.Contains(divs[0], w) {
					t.Errorf("the divergence does not say %q:\n%s", w, divs[0])
				}
			}
		})
	}
}
