package replay_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"bytes"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// TestNestedEvalReplaysInItsWait: a Python cell runs two thunks at once
// (parallel): one calls agent(), the other works a while, calls a tool,
// and notes in state that it has its answer. The sub-agent's host evals in
// the session once the tool has answered and the guest has gone on, so
// the nested eval ran in the cell's second wait for host calls, and saw
// the note. The replay made the agent() call, and ran the eval, at
// once: in the first wait, before the guest took the tool's answer (it
// printed []). It now waits until the guest has taken the answers the
// tape holds before the eval, and replays byte for byte.
func TestNestedEvalReplaysInItsWait(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	var sess *sandbox.Session
	answered := make(chan struct{})
	host := hostcalls.HostFuncs{
		ToolFunc: func(ctx context.Context, r hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
			close(answered)
			return hostcalls.ToolResponse{Result: json.RawMessage(`"quick"`)}, nil
		},
		AgentFunc: func(ctx context.Context, r hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
			<-answered
			time.Sleep(testenv.Stretch(300 * time.Millisecond)) // the guest takes it and goes on
			res, err := sess.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "print('sub-agent saw', state)"}}})
			if err != nil {
				return hostcalls.AgentResponse{}, err
			}
			return hostcalls.AgentResponse{Text: res.Details.Cells[0].Output}, nil
		},
	}
	s, buf := recordingSession(t, sandbox.Options{Host: host})
	sess = s
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: `state = []
def sub():
    return agent("look").strip()
def quick():
    sum(range(10**6))
    r = tool.quick({})
    state.append("took the tool's answer")
    return r
print(parallel([sub, quick], concurrency=2))`}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	if out := res.Details.Cells[0].Output; !strings.Contains(out, `sub-agent saw ["took the tool`) {
		t.Fatalf("the recorded cell: %q", out)
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	replaysIdentically(t, tp, 3)
}
