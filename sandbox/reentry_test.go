package sandbox_test

import (
	"context"
	"encoding/json"
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

// subAgentHost is a Host whose sub-agents run their prompt as code in the
// session of the cell that called agent(), as the seed's sub-agents do:
// the prompt is "py:CODE" or "js:CODE", the answer the cell's output (with
// "FAILED: " before it when the cell failed). tool.eval({lang, code})
// does the same through tool(). Its evals get a bounded context, so that
// a session that makes them wait (as main did) fails the test instead of
// hanging it.
type subAgentHost struct {
	mu      sync.Mutex
	s       *sandbox.Session
	depths  []int // of the agent requests
	timeout int   // of the sub-agents' cells; 0: the default
	// passContext hands the agent call's context to Eval (the library
	// way); without it the eval comes as from elsewhere (serve, MCP).
	passContext bool
}

func (h *subAgentHost) eval(ctx context.Context, lang, code string) (string, error) {
	reset := false
	if l, ok := strings.CutPrefix(lang, "reset-"); ok {
		lang, reset = l, true
	}
	if !h.passContext {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	h.mu.Lock()
	s, timeout := h.s, h.timeout
	h.mu.Unlock()
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: code, TimeoutSeconds: timeout, Reset: reset}}})
	if err != nil {
		return "", err
	}
	out := res.Details.Cells[0].Output
	if res.Details.IsError {
		out = "FAILED: " + out
	}
	return out, nil
}

func (h *subAgentHost) Agent(ctx context.Context, r hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
	h.mu.Lock()
	h.depths = append(h.depths, r.Depth)
	h.mu.Unlock()
	lang, code, ok := strings.Cut(r.Prompt, ":")
	if !ok {
		return hostcalls.AgentResponse{}, fmt.Errorf("prompt %q is not LANG:CODE", r.Prompt)
	}
	out, err := h.eval(ctx, lang, code)
	return hostcalls.AgentResponse{Text: out}, err
}

func (h *subAgentHost) Tool(ctx context.Context, r hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
	var a struct{ Lang, Code string }
	if err := json.Unmarshal(r.Args, &a); err != nil {
		return hostcalls.ToolResponse{}, err
	}
	out, err := h.eval(ctx, a.Lang, a.Code)
	if err != nil {
		return hostcalls.ToolResponse{}, err
	}
	b, _ := json.Marshal(out)
	return hostcalls.ToolResponse{Result: b}, nil
}

func (h *subAgentHost) LLM(ctx context.Context, r hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
	return hostcalls.LLMResponse{}, errors.New("no llm here")
}

// subAgentSession is a session whose Host is a subAgentHost on it.
func subAgentSession(t *testing.T, passContext bool) (*sandbox.Session, *subAgentHost) {
	t.Helper()
	h := &subAgentHost{passContext: passContext}
	sb, err := sandbox.New(context.Background(), sandbox.Options{Host: h})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(context.Background()) })
	s, err := sb.NewSession(context.Background(), sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h.s = s
	return s, h
}

// evalOut runs cells and returns each one's output; it fails the test on
// a cell that did not complete.
func evalOut(t *testing.T, s *sandbox.Session, cells ...sandbox.Cell) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	res, err := s.Eval(ctx, sandbox.Request{Cells: cells})
	if err != nil {
		t.Fatalf("Eval: %v", err)
	}
	var outs []string
	for _, c := range res.Details.Cells {
		if c.Status != sandbox.StatusComplete {
			t.Fatalf("cell %d: %s\n%s", c.Index, c.Status, c.Output)
		}
		outs = append(outs, c.Output)
	}
	return outs
}

// TestNestedEvalSharesState: a sub-agent's eval of the session, made while
// the parent cell waits in agent() (or tool()), runs at once inside the
// parent's runtime state: the parent sees its globals when agent()
// returns, and the sub-agent sees the parent's. Both languages, both ways
// of reaching the session (the agent call's context passed on, or not).
func TestNestedEvalSharesState(t *testing.T) {
	testenv.RequirePython(t)
	tests := []struct {
		name  string
		cells []sandbox.Cell
		want  []string
	}{
		{"py agent", []sandbox.Cell{
			py("secret = 'from the parent'"),
			py(`r = agent("py:inner = secret.upper()\nprint('sub-agent saw', secret)")
print(inner)
print(r, end='')`),
		}, []string{"", "FROM THE PARENT\nsub-agent saw from the parent\n"}},
		{"py tool", []sandbox.Cell{
			py(`r = tool.eval({"lang": "py", "code": "via_tool = 7\nprint(via_tool * 6)"})
print(via_tool, r, end='')`),
		}, []string{"7 42\n"}},
		{"js agent", []sandbox.Cell{
			js("let secret = 'from the parent'"),
			js(`const r = await agent("js:let inner = secret.toUpperCase(); print('sub-agent saw', secret)")
print(inner)
print(r)`),
		}, []string{"", "FROM THE PARENT\nsub-agent saw from the parent\n\n"}},
		{"js tool", []sandbox.Cell{
			js(`const r = await tool.eval({lang: "js", code: "var viaTool = 7; print(viaTool * 6)"})
print(viaTool, r.trim())`),
		}, []string{"7 42\n"}},
		{"py parent, js sub-agent", []sandbox.Cell{
			js("let shared = 1"),
			py(`r = agent("js:shared += 41; print(shared)")
print(r, end='')`),
			js("print(shared)"),
		}, []string{"", "42\n", "42\n"}},
		{"js parent, py sub-agent", []sandbox.Cell{
			js(`const r = await agent("py:made_in_py = 5\nprint(made_in_py)"); print(r.trim())`),
			py("print(made_in_py)"),
		}, []string{"5\n", "5\n"}},
	}
	for _, pass := range []bool{true, false} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/context=%v", tt.name, pass), func(t *testing.T) {
				s, h := subAgentSession(t, pass)
				got := evalOut(t, s, tt.cells...)
				for i := range tt.want {
					if got[i] != tt.want[i] {
						t.Errorf("cell %d: %q, want %q", i, got[i], tt.want[i])
					}
				}
				h.mu.Lock()
				defer h.mu.Unlock()
				for _, d := range h.depths {
					if d != 1 {
						t.Errorf("agent request depth %d, want 1", d)
					}
				}
			})
		}
	}
}

// TestNestedEvalDepth: evals nest three deep, as the seed caps sub-agent
// recursion; the cell at depth 3 cannot start a fourth level, through
// agent() or through an eval its tool() makes, and says why.
func TestNestedEvalDepth(t *testing.T) {
	testenv.RequirePython(t)
	for _, lang := range []string{"py", "js"} {
		t.Run(lang, func(t *testing.T) {
			s, h := subAgentSession(t, true)
			var define, dive, viaTool string
			if lang == "py" {
				define = `def dive(n):
    return agent(f"py:reached = {n}\nprint(dive({n + 1}), end='')")
def dive_tool(n):
    return tool.eval({"lang": "py", "code": f"reached_tool = {n}\nprint(dive_tool({n + 1}), end='')"})`
				dive = "print(dive(1), reached)"
				viaTool = "print(dive_tool(1), reached_tool)"
			} else {
				define = "var dive = (n) => agent(`js:var reached = ${n}; print(await dive(${n + 1}))`);" +
					"var diveTool = (n) => tool.eval({lang: 'js', code: `var reachedTool = ${n}; print(await diveTool(${n + 1}))`})"
				dive = "print(await dive(1), reached)"
				viaTool = "print(await diveTool(1), reachedTool)"
			}
			evalOut(t, s, sandbox.Cell{Language: lang, Code: define})
			out := evalOut(t, s, sandbox.Cell{Language: lang, Code: dive})[0]
			for _, want := range []string{"agents nest at most 3 deep, and this cell already runs at depth 3", " 3\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("agent() chain: no %q in\n%s", want, out)
				}
			}
			h.mu.Lock()
			depths := fmt.Sprint(h.depths)
			h.mu.Unlock()
			if depths != "[1 2 3]" {
				t.Errorf("agent request depths %s, want [1 2 3]", depths)
			}
			out = evalOut(t, s, sandbox.Cell{Language: lang, Code: viaTool})[0]
			for _, want := range []string{"evals nest too deep: a cell at depth 3 waits in agent() or tool(), and an eval inside it would run at depth 4", " 3\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("tool() chain: no %q in\n%s", want, out)
				}
			}
		})
	}
}

// TestNestedEvalFailures: a nested cell that raises, times out or reaches
// for a reset fails alone; the cell it ran in goes on, and so does the
// session.
func TestNestedEvalFailures(t *testing.T) {
	testenv.RequirePython(t)
	s, h := subAgentSession(t, false)
	// asyncio is imported before the nested cells get 1 s each: importing
	// it inside one has taken over a second on a loaded machine.
	evalOut(t, s, py("import asyncio"))
	h.timeout = 1
	out := evalOut(t, s,
		py(`r = agent("py:1/0")
print('ZeroDivisionError' in r, r.startswith('FAILED'))
r = agent("py:import time\ntime.sleep(30)")
print('timed out after 1 second' in r)
r = agent("py:print(1)")
print(r, end='')
r = agent("py:import asyncio\nprint(await asyncio.sleep(0, result=True))")
print(r, end='')`),
		js(`let r = await agent("js:null.x")
print(r.includes("TypeError"), r.startsWith("FAILED"))
r = await agent("js:while (true) {}")
print(r.includes("timed out after 1 second"))`),
	)
	if out[0] != "True True\nTrue\n1\nTrue\n" || out[1] != "true true\ntrue\n" {
		t.Fatalf("%q", out)
	}
	res, err := s.Eval(context.Background(), sandbox.Request{Cells: []sandbox.Cell{
		py(`print(agent("py:print('x')"), end='')`),
	}})
	if err != nil || res.Details.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	// A reset inside a waiting cell of its language would destroy the
	// waiting cell: refused, with the reason. Of another language it is
	// what it always is.
	evalOut(t, s, py("keep = 1"), js("var keepJS = 2"))
	out = evalOut(t, s, py(`print(agent("reset-py:print(keep)"), end='')
print(agent("reset-js:print(typeof keepJS)"), end='')`))
	want := "FAILED: reset is not possible here: this cell runs inside a cell of the same language that waits in agent() or tool(), whose state a reset would destroy\nundefined\n"
	if out[0] != want {
		t.Fatalf("resets: %q, want %q", out[0], want)
	}
	if got := evalOut(t, s, py("print(keep)"))[0]; got != "1\n" {
		t.Fatalf("state after nested failures: %q", got)
	}
}

// TestNestedEvalParentCancelled: when the waiting cell is cancelled, the
// eval running inside it is cancelled too, both end promptly, and the
// session keeps its state.
func TestNestedEvalParentCancelled(t *testing.T) {
	testenv.RequirePython(t)
	for _, lang := range []string{"py", "js"} {
		t.Run(lang, func(t *testing.T) {
			s, _ := subAgentSession(t, false)
			evalOut(t, s, py("kept = 'py'"), js("var kept = 'js'"))
			code := `agent("py:import time\ntime.sleep(60)")`
			if lang == "js" {
				code = `await agent("js:while (true) {}")`
			}
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			start := time.Now()
			res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: code}}})
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("the cancelled eval took %v", took)
			}
			if st := res.Details.Cells[0].Status; st != sandbox.StatusCancelled {
				t.Errorf("status %s, want cancelled: %s", st, res.Details.Cells[0].Output)
			}
			out := evalOut(t, s, py("print(kept)"), js("print(kept)"))
			if out[0] != "py\n" || out[1] != "js\n" {
				t.Fatalf("after: %q", out)
			}
		})
	}
}

// TestNestedEvalConcurrent: sub-agents started together (parallel) each
// eval into the waiting cell, while another session runs cells of its
// own; every result lands where it belongs.
func TestNestedEvalConcurrent(t *testing.T) {
	testenv.RequirePython(t)
	s, _ := subAgentSession(t, false)
	other, _ := subAgentSession(t, true)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var otherErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			lang := []string{"py", "js"}[i%2]
			code := fmt.Sprintf("n%d = %d\nprint(n%d)", i, i, i)
			if lang == "js" {
				code = fmt.Sprintf("var n%d = %d; print(n%d)", i, i, i)
			}
			res, err := other.Eval(context.Background(), sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: code}}})
			if err == nil && res.Details.Cells[0].Output != fmt.Sprintf("%d\n", i) {
				err = fmt.Errorf("other session, cell %d: %q", i, res.Details.Cells[0].Output)
			}
			if err != nil {
				otherErr = err
				return
			}
		}
	}()
	for round := range 3 {
		out := evalOut(t, s,
			py(`rs = parallel([lambda i=i: agent(f"py:got_{i} = {i} * 10\nprint(got_{i})") for i in range(4)])
print([r.strip() for r in rs], got_0 + got_1 + got_2 + got_3)`),
			js(`const rs = await parallel([0, 1, 2, 3].map((i) => () => agent(`+"`js:var got_${i} = ${i} * 10; print(got_${i})`"+`)))
print(JSON.stringify(rs.map((r) => r.trim())), got_0 + got_1 + got_2 + got_3)`),
		)
		if out[0] != "['0', '10', '20', '30'] 60\n" || out[1] != `["0","10","20","30"] 60`+"\n" {
			t.Fatalf("round %d: %q", round, out)
		}
	}
	close(stop)
	wg.Wait()
	if otherErr != nil {
		t.Fatal(otherErr)
	}
}

// TestNestedEvalClose: closing the session while an eval runs nested in a
// waiting cell stops both and frees the session.
func TestNestedEvalClose(t *testing.T) {
	testenv.RequirePython(t)
	for _, lang := range []string{"py", "js"} {
		t.Run(lang, func(t *testing.T) {
			s, _ := subAgentSession(t, false)
			code := `agent("py:while True: pass")`
			if lang == "js" {
				code = `await agent("js:while (true) {}")`
			}
			done := make(chan *sandbox.Result, 1)
			go func() {
				res, _ := s.Eval(context.Background(), sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: code}}})
				done <- res
			}()
			// Close once the nested cell runs (the session waits in agent()).
			deadline := time.Now().Add(30 * time.Second)
			for {
				if ready, _ := s.NestedReady(); ready || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := s.Close(ctx); err != nil {
				t.Fatalf("Close: %v", err)
			}
			select {
			case res := <-done:
				if res == nil || res.Details.Cells[0].Status != sandbox.StatusCancelled ||
					!strings.Contains(res.Details.Cells[0].Output, "the session was closed") {
					t.Fatalf("after Close: %+v", res)
				}
			case <-time.After(testenv.Stretch(30 * time.Second)):
				t.Fatal("the eval did not end after Close")
			}
			if _, err := s.Eval(context.Background(), sandbox.Request{Cells: []sandbox.Cell{py("1")}}); !errors.Is(err, sandbox.ErrClosed) {
				t.Fatalf("Eval after Close: %v", err)
			}
		})
	}
}

// TestNestedEvalFuel: a nested cell has its own fuel budget (none here),
// not the one of the cell it runs in, which does not pay for it either.
func TestNestedEvalFuel(t *testing.T) {
	testenv.RequirePython(t)
	s, _ := subAgentSession(t, true)
	out := evalOut(t, s, sandbox.Cell{Language: "py", Fuel: 50_000_000,
		Code: `print(agent("py:for i in range(2_000_000): pass\nprint('spent')"), end='')`})
	if out[0] != "spent\n" {
		t.Fatalf("%q", out[0])
	}
}
