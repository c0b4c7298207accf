package attack_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// evalHost answers agent("py:CODE") as a sub-agent that evaluates CODE in
// the same session (the way a server's client would, from elsewhere: a
// context of its own), counting the evals it started.
type evalHost struct {
	s     *sandbox.Session
	evals atomic.Int64
}

func (h *evalHost) Agent(ctx context.Context, r hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
	lang, code, ok := strings.Cut(r.Prompt, ":")
	if !ok {
		return hostcalls.AgentResponse{}, errors.New("the prompt is not LANG:CODE")
	}
	h.evals.Add(1)
	ectx, cancel := context.WithTimeout(sandbox.WithHost(context.Background(), h), 60*time.Second)
	defer cancel()
	res, err := h.s.Eval(ectx, sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: code, TimeoutSeconds: 2}}})
	if err != nil {
		return hostcalls.AgentResponse{}, err
	}
	return hostcalls.AgentResponse{Text: res.Details.Cells[0].Output}, nil
}

func (h *evalHost) Tool(context.Context, hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
	return hostcalls.ToolResponse{}, errors.New("no tools")
}

func (h *evalHost) LLM(context.Context, hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
	return hostcalls.LLMResponse{}, errors.New("no llm")
}

// TestAgentBombs: sub-agents that start sub-agents (a fork bomb through
// agent() and the nested evals it leads to) stop at the nesting cap, end
// however wide each level fans out, and leave the session usable. The
// evals nested in a cell spend its timeout, so a bomb ends about its 3 s
// timeout, not at its 30 s hard limit (TestNestedEvalsKeepTheTimeout).
func TestAgentBombs(t *testing.T) {
	for _, tc := range []struct {
		name, code string
		want       string
	}{
		{"a chain past the depth cap", `def dive(n):
    return agent(f"py:print(dive({n + 1}))")
print(dive(1))`, "agents nest at most 3 deep"},
		{"a fan-out at every level", `bomb = '''
for i in range(50):
    try:
        agent("py:" + bomb)
    except Exception as e:
        print(type(e).__name__)
'''
exec(bomb)`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testenv.RequirePython(t)
			w := newWorld(t)
			s, err := sharedSandbox(t).NewSession(context.Background(), sessionOptions(w.root))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			h := &evalHost{s: s}
			ctx := sandbox.WithHost(context.Background(), h)
			start := time.Now()
			res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: tc.code, TimeoutSeconds: 3}}})
			took := time.Since(start)
			if err != nil {
				t.Fatalf("Eval: %v", err)
			}
			out := res.Details.Cells[0].Output
			if took > testenv.Stretch(15*time.Second) {
				t.Errorf("the bomb ran %v with a 3 s timeout (%d sub-agent evals)", took.Round(time.Second), h.evals.Load())
			}
			if tc.want != "" && !strings.Contains(out, tc.want) {
				t.Errorf("no %q in the output:\n%s", tc.want, clip(out))
			}
			for _, bad := range []string{"crashed", "rolled back", "restarted"} {
				if strings.Contains(out, bad) {
					t.Errorf("the session %s:\n%s", bad, clip(out))
				}
			}
			alive(t, s, "py")
		})
	}
}
