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

// nestHost answers agent("LANG:CODE") with an eval of CODE in the same
// session, from a context of its own (as serve's or MCP's client would),
// with a timeout of its own for the sub-agent's cells, counting the
// evals it started and when the last one did.
type nestHost struct {
	s       *sandbox.Session
	timeout int // of the sub-agents' cells
	evals   atomic.Int64
	last    atomic.Int64 // unix nanoseconds of the last eval's start
	// late counts the agent calls that reached the host after the cell
	// that made them was stopped.
	late atomic.Int64
	// lastOut is the last sub-agent eval's cell output.
	lastOut atomic.Value
}

func (h *nestHost) Agent(ctx context.Context, r hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
	lang, code, ok := strings.Cut(r.Prompt, ":")
	if !ok {
		return hostcalls.AgentResponse{}, errors.New("the prompt is not LANG:CODE")
	}
	if ctx.Err() != nil {
		h.late.Add(1)
	}
	h.evals.Add(1)
	h.last.Store(time.Now().UnixNano())
	ectx, cancel := context.WithTimeout(sandbox.WithHost(context.Background(), h), 90*time.Second)
	defer cancel()
	res, err := h.s.Eval(ectx, sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: code, TimeoutSeconds: h.timeout}}})
	if err != nil {
		return hostcalls.AgentResponse{}, err
	}
	h.lastOut.Store(res.Details.Cells[0].Output)
	return hostcalls.AgentResponse{Text: res.Details.Cells[0].Output}, nil
}

func (h *nestHost) Tool(context.Context, hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
	return hostcalls.ToolResponse{}, errors.New("no tools")
}

func (h *nestHost) LLM(context.Context, hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
	return hostcalls.LLMResponse{}, errors.New("no llm")
}

// TestNestedEvalsKeepTheTimeout: a cell cannot outlive its timeout by
// looping over agent() whose sub-agent runs cells in the same session
// (nested cells), nor by one nested cell that computes past it. The
// nested cells' run time is the waiting cell's own, so its 3 s timeout
// stops it (a timeout, not the 30 s hard limit): a nested cell running
// then is stopped, the waiting cell reports its own timeout, an agent()
// called after it is refused, and the session, with what the nested
// cells defined, lives on.
func TestNestedEvalsKeepTheTimeout(t *testing.T) {
	for _, tc := range []struct {
		name, lang, code string
		nested           int // the sub-agents' cells' timeout
		// swallows: the cell catches its KeyboardInterrupt, so Python
		// stops it hard after the grace period and rolls it back.
		swallows bool
	}{
		{"py loop over agent", "py", `n = 0
while True:
    agent("py:x = 1")
    n += 1`, 2, false},
		{"py loop that swallows its stop", "py", `while True:
    try:
        agent("py:x = 1")
    except BaseException:
        pass`, 2, true},
		{"py loop over agent running js", "py", `while True:
    agent("js:var x = 1")`, 2, false},
		{"py nested cell past the timeout", "py", `agent("py:while True: pass")`, 60, false},
		{"py nested cell that sleeps past the timeout", "py", `agent("py:import time\ntime.sleep(60)")`, 60, false},
		{"js loop over agent", "js", `while (true) { await agent("js:globalThis.x = 1") }`, 2, false},
		{"js loop that swallows its stop", "js", `while (true) { try { await agent("js:globalThis.x = 1") } catch (e) {} }`, 2, true},
		{"js loop over agent running py", "js", `while (true) { await agent("py:x = 1") }`, 2, false},
		{"js nested cell past the timeout", "js", `await agent("js:while (true) {}")`, 60, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testenv.RequirePython(t)
			w := newWorld(t)
			s, err := sharedSandbox(t).NewSession(context.Background(), sessionOptions(w.root))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			h := &nestHost{s: s, timeout: tc.nested}
			ctx, cancel := context.WithTimeout(sandbox.WithHost(context.Background(), h), 120*time.Second)
			defer cancel()
			start := time.Now()
			res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: tc.lang, Code: tc.code, TimeoutSeconds: 3}}})
			took := time.Since(start)
			if err != nil {
				t.Fatalf("Eval: %v", err)
			}
			t.Logf("ran %v, %d sub-agent evals", took.Round(100*time.Millisecond), h.evals.Load())
			c := res.Details.Cells[0]
			if took > testenv.Stretch(10*time.Second) {
				t.Errorf("the cell ran %v with a 3 s timeout (%d sub-agent evals)", took.Round(100*time.Millisecond), h.evals.Load())
			}
			if c.Status != fail || !strings.Contains(c.Output, "timed out after 3 seconds") || strings.Contains(c.Output, "hard limit") {
				t.Errorf("status %s, want an error that says the cell timed out after 3 seconds:\n%s", c.Status, clip(c.Output))
			}
			// No sub-agent eval starts after the cell's stop: a cell that
			// goes on after it (catching its KeyboardInterrupt) starts no
			// sub-agent. One call may race the stop.
			if n := h.late.Load(); n > 1 {
				t.Errorf("%d agent calls reached the host after the cell was stopped", n)
			}
			if last := time.Unix(0, h.last.Load()); h.evals.Load() > 0 && last.Sub(start) > testenv.Stretch(8*time.Second) {
				t.Errorf("a sub-agent eval started %v after the cell did", last.Sub(start).Round(100*time.Millisecond))
			}
			// A nested cell that ran past the waiting cell's stop says why
			// it was stopped.
			if out, _ := h.lastOut.Load().(string); tc.nested > 3 && !strings.Contains(out, "cancelled: the cell this eval ran inside (it waited in agent() or tool()) timed out") {
				t.Errorf("the nested cell's output does not say it was stopped with the cell it ran in:\n%s", clip(out))
			}
			for _, bad := range []string{"crashed", "rolled back", "restarted"} {
				if strings.Contains(c.Output, bad) && !(tc.swallows && bad == "rolled back") {
					t.Errorf("the session %s:\n%s", bad, clip(c.Output))
				}
			}
			alive(t, s, "js")
			alive(t, s, "py")
		})
	}
}
