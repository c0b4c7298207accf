package replay_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// TestConcurrentNestedEvalsReplay: a JavaScript cell starts two agent()
// calls at once (Promise.all), and each sub-agent's host evals in the
// session: a Python cell that reads the wall clock nine times, 30 ms
// apart, and, once that has begun (its llm call), a JavaScript cell
// nested in the waiting one that reads it eight times between loops. Run
// at once, their reads interleaved on the tape by timing, and the replay,
// which runs the recorded evals one after the other, handed each some of
// the other's readings (b's output differed). A recording runs them one
// at a time, so each one's records are one stretch of the tape, and the
// session replays byte for byte, again and again.
func TestConcurrentNestedEvalsReplay(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	var sess *sandbox.Session
	evals := map[string]sandbox.Cell{
		"a": {Language: "py", Code: "import time\nts = [time.time_ns()]\nllm('reading')\nfor _ in range(8):\n    time.sleep(0.03)\n    ts.append(time.time_ns())\nprint('a', ts)"},
		"b": {Language: "js", Code: "const ts = [];\nfor (let i = 0; i < 8; i++) { ts.push(Date.now()); for (let j = 0; j < 100000; j++) {} }\nconsole.log('b', ts.join(','))"},
	}
	reading := make(chan struct{}) // a has begun reading its clock
	host := hostcalls.HostFuncs{
		AgentFunc: func(ctx context.Context, r hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
			if r.Prompt == "b" {
				select { // so that, run at once, the two would read in turns
				case <-reading:
				case <-time.After(testenv.Stretch(5 * time.Second)):
				}
			}
			res, err := sess.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{evals[r.Prompt]}})
			if err != nil {
				return hostcalls.AgentResponse{}, err
			}
			return hostcalls.AgentResponse{Text: res.Details.Cells[0].Output}, nil
		},
		LLMFunc: func(context.Context, hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
			close(reading)
			return hostcalls.LLMResponse{Text: "go on"}, nil
		},
	}
	s, buf := recordingSession(t, sandbox.Options{Host: host})
	sess = s
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: `const [a, b] = await Promise.all([agent("a"), agent("b")]);
console.log(a.trim());
console.log(b.trim());`}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	if out := res.Details.Cells[0].Output; !strings.Contains(out, "a [") || !strings.Contains(out, "b ") {
		t.Fatalf("the recorded cell: %q", out)
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	// Each nested request's records are one stretch: nothing of the
	// other comes between its request and its result.
	open := 0
	for _, r := range tp.Events {
		switch {
		case r.Type == tape.TypeRequest && r.Nested:
			if open != 0 {
				t.Fatalf("nested request %d began while request %d ran", r.N, open)
			}
			open = r.N
		case r.Type == tape.TypeResult && r.Nested:
			open = 0
		}
	}
	replaysIdentically(t, tp, 4)
}
