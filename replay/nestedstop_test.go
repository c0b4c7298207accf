package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// TestNestedStopsReplayAtTheirPoints: a Python cell whose agent() call
// runs evals in its session (a sub-agent that shares it), one stopped by
// its own timeout and one by its fuel, and which is then stopped by its
// own timeout, is recorded with each stop at its own point (the nested
// cell's stop under its request's number, counted in its own work) and
// replays byte for byte: each loop stops at the count it stopped at.
func TestNestedStopsReplayAtTheirPoints(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	var sess *sandbox.Session
	host := hostcalls.HostFuncs{AgentFunc: func(ctx context.Context, r hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
		var outs []string
		for _, c := range []sandbox.Cell{
			{Language: "py", TimeoutSeconds: 1, Code: "n = 0\ntry:\n    while True:\n        n += 1\nexcept KeyboardInterrupt:\n    print('nested stopped at', n)\n    raise"},
			{Language: "py", Fuel: 30_000_000, Code: "k = 0\nwhile True:\n    k += 1"},
		} {
			res, err := sess.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{c}})
			if err != nil {
				return hostcalls.AgentResponse{}, err
			}
			outs = append(outs, fmt.Sprintf("%s: %s", res.Details.Cells[0].Status, res.Details.Cells[0].Output))
		}
		return hostcalls.AgentResponse{Text: strings.Join(outs, "\n")}, nil
	}}
	s, buf := recordingSession(t, sandbox.Options{Host: host})
	sess = s
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", TimeoutSeconds: 3, Code: `said = agent("spin")
print("agent said:", said)
print("k counted", k > 0)
m = 0
try:
    while True:
        m += 1
except KeyboardInterrupt:
    print("outer stopped at", m, "after nested", n)
    raise`}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	out := res.Details.Cells[0].Output
	if !strings.Contains(out, "agent said: error: nested stopped at ") || !strings.Contains(out, "fuel exhausted") ||
		!strings.Contains(out, "outer stopped at ") || !strings.Contains(out, "timed out after 3 seconds") {
		t.Fatalf("the recorded cell: %q", out)
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var stops []string
	for _, r := range tp.Events {
		if r.Type == tape.TypeStop {
			stops = append(stops, fmt.Sprintf("request %d cell %d %s at check>0 %v", r.N, r.Cell, r.Cause, r.Checks > 0))
		}
	}
	if want := "request 2 cell 0 timeout at check>0 true,request 0 cell 0 timeout at check>0 true"; strings.Join(stops, ",") != want {
		t.Fatalf("stop records %q; want %q (the nested cell's under its request, at its own fuel check)", stops, want)
	}
	replaysIdentically(t, tp, 2)
}
