package jupyter_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// nestHost answers agent(prompt) with an eval of the prompt ("py:CODE" or
// "js:CODE") in the session of the cell that called it: a sub-agent that
// shares its parent's session. timeout is the sub-agent cells' timeout.
type nestHost struct {
	mu      sync.Mutex
	s       *sandbox.Session
	timeout int
}

func (h *nestHost) Agent(ctx context.Context, r hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
	lang, code, ok := strings.Cut(r.Prompt, ":")
	if !ok {
		return hostcalls.AgentResponse{}, fmt.Errorf("prompt %q is not LANG:CODE", r.Prompt)
	}
	h.mu.Lock()
	s, timeout := h.s, h.timeout
	h.mu.Unlock()
	// As serve and MCP reach the session: not through the agent call's
	// context.
	ectx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := s.Eval(ectx, sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: code, TimeoutSeconds: timeout}}})
	if err != nil {
		return hostcalls.AgentResponse{}, err
	}
	out := res.Content[0].Text
	if res.Details.IsError {
		out = "FAILED: " + out
	}
	return hostcalls.AgentResponse{Text: out}, nil
}

func (h *nestHost) Tool(context.Context, hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
	return hostcalls.ToolResponse{}, errors.New("no tools here")
}

func (h *nestHost) LLM(context.Context, hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
	return hostcalls.LLMResponse{}, errors.New("no llm here")
}

// TestNestedEvalInKernel: while a cell of a jupyter-backed session waits
// in agent(), the sub-agent's Python eval of the same session runs inside
// it, in the kernel's namespace: it sees the parent's variables, what it
// defines is there when agent() returns, its output, result and errors
// are its own, and its own host calls work. Before, the nested eval
// failed ("the py runtime cannot run a cell inside a cell that waits").
func TestNestedEvalInKernel(t *testing.T) {
	py := testenv.JupyterPython(t)
	ctx := context.Background()
	h := &nestHost{}
	sb, err := sandbox.New(ctx, sandbox.Options{Host: h, PythonBackend: sandbox.PythonJupyter,
		Jupyter: sandbox.JupyterOptions{Python: py}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	h.s = s
	run := func(code string) (string, bool) {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		res, err := s.Eval(cctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: code, TimeoutSeconds: 60}}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Details.Cells[0].Output, res.Details.IsError
	}

	out, failed := run(`secret = 'from the parent'
r = agent("py:inner = secret.upper()\nprint('sub-agent saw', secret)\nwrite('sub.txt', 'written by the sub-agent')\n6 * 7")
print(inner)
print(repr(r))
print(read('sub.txt'))`)
	if failed {
		t.Fatalf("the parent cell failed:\n%s", out)
	}
	for _, want := range []string{"FROM THE PARENT\n", "sub-agent saw from the parent", "42", "written by the sub-agent"} {
		if !strings.Contains(out, want) {
			t.Errorf("parent output %q lacks %q", out, want)
		}
	}
	if strings.Contains(out, "FAILED") {
		t.Errorf("the nested eval failed: %q", out)
	}

	// A nested error is the nested cell's: the parent goes on.
	out, failed = run(`r = agent("py:1 / 0")
print('parent goes on;', 'ZeroDivisionError' in r, r.startswith('FAILED'))`)
	if failed || !strings.Contains(out, "parent goes on; True True") {
		t.Errorf("a failing nested cell: failed %v, %q", failed, out)
	}

	// A JavaScript sub-agent in a Python parent runs on its own runtime,
	// and a nested cell in a nested cell works too.
	out, failed = run(`r = agent("py:deeper = agent('py:print(\"two deep\")')\nprint(deeper.strip())")
print(r.strip())`)
	if failed || !strings.Contains(out, "two deep") {
		t.Errorf("two levels of nesting: failed %v, %q", failed, out)
	}

	// A nested cell that outlives its timeout ends as timed out at once;
	// the kernel finishes its code (it is not interrupted, which could
	// stop the parent instead), then the parent goes on.
	h.mu.Lock()
	h.timeout = 1
	h.mu.Unlock()
	start := time.Now()
	out, failed = run(`r = agent("py:import time\ntime.sleep(3)\nslept = True")
print('parent after;', r.startswith('FAILED'), 'timed out' in r, slept)`)
	if failed || !strings.Contains(out, "parent after; True True True") {
		t.Errorf("a nested cell past its timeout: failed %v, %q", failed, out)
	}
	if d := time.Since(start); d < 3*time.Second {
		t.Errorf("the parent went on after %s, before the kernel finished the nested code (3 s)", d)
	}
	h.mu.Lock()
	h.timeout = 0
	h.mu.Unlock()

	// The session is whole after: the kernel runs plain cells.
	if out, failed = run("print(secret, inner)"); failed || !strings.Contains(out, "from the parent FROM THE PARENT") {
		t.Errorf("after the nested evals: failed %v, %q", failed, out)
	}
}
