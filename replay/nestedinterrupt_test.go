package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// TestNestedInterruptReplays: a session interrupted (Session.Interrupt, a
// soft stop) while an eval nested in its waiting cell loops stops the
// nested cell at its own point and then the waiting cell in its wait for
// agent()'s answer; both are recorded at their points and replay byte
// for byte.
func TestNestedInterruptReplays(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	var sess *sandbox.Session
	host := hostcalls.HostFuncs{AgentFunc: func(ctx context.Context, r hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
		go func() {
			time.Sleep(500 * time.Millisecond)
			sess.Interrupt()
		}()
		res, err := sess.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "n = 0\ntry:\n    while True:\n        n += 1\nexcept KeyboardInterrupt:\n    print('nested stopped at', n)\n    raise"}}})
		if err != nil {
			return hostcalls.AgentResponse{}, err
		}
		return hostcalls.AgentResponse{Text: res.Details.Cells[0].Output}, nil
	}}
	s, buf := recordingSession(t, sandbox.Options{Host: host})
	sess = s
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: `try:
    said = agent("spin")
except KeyboardInterrupt:
    print("outer stopped in agent(); nested counted to", n)
    raise`}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	out := res.Details.Cells[0].Output
	if !strings.Contains(out, "outer stopped in agent(); nested counted to ") {
		t.Fatalf("the recorded cell: %q", out)
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var stops []string
	for _, r := range tp.Events {
		if r.Type == tape.TypeStop {
			stops = append(stops, fmt.Sprintf("request %d cell %d %s checks>0 %v waits %d", r.N, r.Cell, r.Cause, r.Checks > 0, r.Waits))
		}
	}
	if want := "request 2 cell 0 interrupt checks>0 true waits 0,request 0 cell 0 interrupt checks>0 false waits 1"; strings.Join(stops, ",") != want {
		t.Fatalf("stop records %q; want %q", stops, want)
	}
	replaysIdentically(t, tp, 2)
}
