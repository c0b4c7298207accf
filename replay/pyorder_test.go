package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// lateHost answers a cell's three concurrent calls in another order than
// they were made, with real waits: llm at once, tool t1 once llm has
// answered and 50 ms later, tool t2 once t1 has answered and 50 ms later.
func lateHost() hostcalls.HostFuncs {
	llmDone, t1Done := make(chan struct{}), make(chan struct{})
	return hostcalls.HostFuncs{
		ToolFunc: func(ctx context.Context, r hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
			switch r.Name {
			case "t1":
				<-llmDone
				time.Sleep(50 * time.Millisecond)
				defer close(t1Done)
			case "t2":
				<-t1Done
				time.Sleep(50 * time.Millisecond)
			}
			return hostcalls.ToolResponse{Result: json.RawMessage(fmt.Sprintf(`{"tool":%q}`, r.Name))}, nil
		},
		LLMFunc: func(context.Context, hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
			defer close(llmDone)
			return hostcalls.LLMResponse{Text: "the model's answer"}, nil
		},
	}
}

// pyOrderCell starts tool t1, tool t2 and an llm call at once (parallel:
// each thunk runs again once its call has answered) and prints each
// answer as the guest takes it, then the results in order.
const pyOrderCell = `import time
def thunk(name):
    def run():
        r = llm("a prompt") if name == "llm" else getattr(tool, name)({})
        print("took", name, r, time.monotonic_ns() > 0)
        return r
    return run
print(parallel([thunk(n) for n in ("t1", "t2", "llm")], concurrency=3))`

// recordPyOrder records pyOrderCell against lateHost and returns its tape.
func recordPyOrder(t *testing.T) *tape.Tape {
	t.Helper()
	testenv.RequirePython(t)
	ctx := context.Background()
	s, buf := recordingSession(t, sandbox.Options{Host: lateHost()})
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: pyOrderCell}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	c := res.Details.Cells[0]
	want := `took llm the model's answer True
took t1 {'tool': 't1'} True
took t2 {'tool': 't2'} True
[{'tool': 't1'}, {'tool': 't2'}, "the model's answer"]
`
	if c.Status != sandbox.StatusComplete || c.Output != want {
		t.Fatalf("recorded %s %q; want %q", c.Status, c.Output, want)
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// callRecords are the indexes of tp's call records that reach the world
// (tool, llm), in order.
func callRecords(tp *tape.Tape) []int {
	var idx []int
	for i, r := range tp.Events {
		if r.Type == tape.TypeCall && (bytes.Contains(r.Call, []byte(`"op":"tool"`)) || bytes.Contains(r.Call, []byte(`"op":"llm"`))) {
			idx = append(idx, i)
		}
	}
	return idx
}

// TestPythonConcurrentCallsReplayInOrder: a Python cell's concurrent host
// calls (parallel, over call_start and call_wait) whose answers came in
// another order than they were made (llm, t1, t2 for calls made t1, t2,
// llm) are recorded in the order the guest took their answers, each with
// the wait that took it, and replayed, where the tape has every answer at
// once, in that order and in the same waits: the cell that prints each
// answer as it takes it replays byte for byte, every time.
func TestPythonConcurrentCallsReplayInOrder(t *testing.T) {
	tp := recordPyOrder(t)
	var got []string
	for _, i := range callRecords(tp) {
		r := tp.Events[i]
		got = append(got, fmt.Sprintf("made %d wait %d", r.Made, r.Wait))
	}
	if want := []string{"made 3 wait 1", "made 1 wait 2", "made 2 wait 3"}; !slices.Equal(got, want) {
		t.Fatalf("the calls are recorded as %q; want %q (the order the guest took their answers, and the waits that took them)", got, want)
	}
	replaysIdentically(t, tp, 3) // the replay's own goroutines must not decide the order
}

// TestPythonCallOrderTampered: a tape whose calls were put in another
// order (t1's answer first, then llm's) replays them in that order, and
// the report names the call whose answer the guest took in another wait
// than the tape says it was, with both waits.
func TestPythonCallOrderTampered(t *testing.T) {
	ctx := context.Background()
	tp := recordPyOrder(t)
	idx := callRecords(tp)
	if len(idx) != 3 {
		t.Fatalf("%d world calls on the tape; want 3", len(idx))
	}
	tp.Events[idx[0]], tp.Events[idx[1]] = tp.Events[idx[1]], tp.Events[idx[0]]
	rep, err := replay.Run(ctx, tp, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Identical {
		t.Fatal("a tape whose calls were reordered replayed identically")
	}
	var named bool
	var all []string
	for _, d := range rep.Divergences {
		all = append(all, d.String())
		if d.What == "host call" && strings.Contains(d.Expected, `"name":"t1"`) &&
			strings.Contains(d.Message, "in its wait 1 for host calls; the tape recorded it taken in its wait 2") {
			named = true
		}
	}
	if !named {
		t.Fatalf("no divergence names the t1 call and its waits:\n%s", strings.Join(all, "\n"))
	}
}
