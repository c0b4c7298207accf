package jupyter_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/jupyter"
	"github.com/wasmeval/wasmeval/runtimes/runtimetest"
)

// newInstance returns an instance of rt in a fresh root whose host calls go
// to a real Dispatcher with host (nil: none).
func newInstance(t testing.TB, rt *jupyter.Runtime, host hostcalls.Host) (runtimes.Instance, string) {
	t.Helper()
	root := t.TempDir()
	calls, err := hostcalls.NewDispatcher(root, host, hostcalls.DispatcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { calls.Close() })
	inst, err := rt.NewInstance(context.Background(), runtimes.InstanceOptions{
		Root: root, Call: calls.Call,
		Env: map[string]string{"PATH": "/usr/bin:/bin", "HOME": root},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close(context.Background()) })
	return inst, root
}

func run(t testing.TB, inst runtimes.Instance, ctx context.Context, code string) (runtimes.Outcome, *runtimetest.Recorder, error) {
	t.Helper()
	rec := &runtimetest.Recorder{}
	out, err := inst.Run(ctx, code, rec)
	return out, rec, err
}

func ok(t testing.TB, inst runtimes.Instance, code string) *runtimetest.Recorder {
	t.Helper()
	out, rec, err := run(t, inst, context.Background(), code)
	if err != nil {
		t.Fatalf("Run(%q): %v", code, err)
	}
	if out.Failed {
		t.Fatalf("Run(%q) = %+v; stderr: %s", code, out, rec.StderrText())
	}
	return rec
}

// TestKernelDeath: a cell that kills its kernel (SIGKILL) fails, the kernel
// is restarted once with the helpers loaded again, and a second death is a
// hard error.
func TestKernelDeath(t *testing.T) {
	rt := newRuntime(t, jupyter.Config{})
	inst, _ := newInstance(t, rt, nil)
	ok(t, inst, "x = 41")
	const die = "import os, signal\nprint('dying', flush=True)\nos.kill(os.getpid(), signal.SIGKILL)"
	out, rec, err := run(t, inst, context.Background(), die)
	if err != nil {
		t.Fatalf("first death: Run returned %v, want a failed cell and a restarted kernel", err)
	}
	if !out.Failed || out.Interrupted {
		t.Errorf("first death: outcome = %+v, want Failed", out)
	}
	if !strings.Contains(rec.StderrText(), "kernel died") || !strings.Contains(rec.StderrText(), "restarted") {
		t.Errorf("first death: stderr = %q, want a note that the kernel died and was restarted", rec.StderrText())
	}
	// The new kernel has no x, but has the helpers.
	out, _, err = run(t, inst, context.Background(), "x")
	if err != nil || !out.Failed {
		t.Errorf("after the restart, x: outcome %+v, err %v; want a NameError", out, err)
	}
	ok(t, inst, "write('f.txt', 'hi')")
	_, _, err = run(t, inst, context.Background(), die)
	if !errors.Is(err, jupyter.ErrKernelDied) {
		t.Fatalf("second death: err = %v, want ErrKernelDied", err)
	}
	// Reset starts a kernel afresh.
	if err := inst.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := ok(t, inst, "print(1 + 1)").StdoutText(); got != "2\n" {
		t.Errorf("after Reset: stdout %q", got)
	}
}

// TestInterruptSpinningKeepsSession: a spinning cell is stopped by
// interrupt_request with the session's state kept; one that ignores SIGINT
// is stopped by restarting the kernel; the session goes on.
func TestInterruptSpinningKeepsSession(t *testing.T) {
	rt := newRuntime(t, jupyter.Config{InterruptGrace: 500 * time.Millisecond})
	inst, _ := newInstance(t, rt, nil)
	ok(t, inst, "x = 41")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	out, rec, err := run(t, inst, ctx, "i = 0\nwhile True:\n    i += 1")
	if err != nil {
		t.Fatal(err)
	}
	if !out.Failed || !out.Interrupted || !strings.Contains(rec.StderrText(), "KeyboardInterrupt") {
		t.Errorf("outcome %+v, stderr %q; want an interrupted cell with KeyboardInterrupt", out, rec.StderrText())
	}
	if got := ok(t, inst, "print(x + 1, i > 0)").StdoutText(); got != "42 True\n" {
		t.Errorf("after the interrupt: %q, want the state kept", got)
	}

	// A cell that ignores SIGINT: the kernel is restarted.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	start := time.Now()
	out, rec, err = run(t, inst, ctx2, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass")
	if err != nil {
		t.Fatal(err)
	}
	if !out.Interrupted || !strings.Contains(rec.StderrText(), "restarted") {
		t.Errorf("stubborn cell: outcome %+v, stderr %q; want interrupted and a note of the restart", out, rec.StderrText())
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("stopping the stubborn cell took %s", d)
	}
	if got := ok(t, inst, "print('alive')").StdoutText(); got != "alive\n" {
		t.Errorf("after the restart: %q", got)
	}
}

// TestPlotPNG: numpy and matplotlib (Debian's) plot inline; the figure
// comes back as an image/png display.
func TestPlotPNG(t *testing.T) {
	rt := newRuntime(t, jupyter.Config{})
	inst, _ := newInstance(t, rt, nil)
	rec := ok(t, inst, "import numpy as np\nimport matplotlib.pyplot as plt\nx = np.linspace(0, 6, 50)\nplt.plot(x, np.sin(x))\nplt.show()")
	var png string
	for _, d := range rec.Displays() {
		if p, ok := d["image/png"]; ok {
			png = p
		}
	}
	if png == "" {
		t.Fatalf("displays = %v, want an image/png", rec.Displays())
	}
	b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(png), ""))
	if err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
		t.Errorf("image/png is not a base64 PNG: %v", err)
	}
}

// TestDisplayMapping: markdown, html, json and status bundles arrive as
// the sandbox maps them.
func TestDisplayMapping(t *testing.T) {
	rt := newRuntime(t, jupyter.Config{})
	inst, _ := newInstance(t, rt, nil)
	rec := ok(t, inst, `from IPython.display import HTML, Markdown, JSON
display(HTML('<b>bold</b>'))
display(Markdown('*md*'))
display({'application/x-wasmeval-status': {'kind': 'phase', 'message': 'loading'}}, raw=True)
log('hello')
[1, 2]`)
	var html, md bool
	for _, d := range rec.Displays() {
		html = html || d["text/html"] == "<b>bold</b>"
		md = md || d["text/markdown"] == "*md*"
	}
	if !html || !md {
		t.Errorf("displays = %v, want the HTML and the markdown", rec.Displays())
	}
	var status []string
	for _, e := range rec.Events() {
		if e.Kind == "display" {
			if p, ok := e.Bundle["application/x-wasmeval-status"]; ok {
				status = append(status, p)
			}
		}
	}
	if len(status) != 2 || !strings.Contains(status[0], "loading") || !strings.Contains(status[1], "hello") {
		t.Errorf("status bundles = %q, want the phase and the log as application/x-wasmeval-status", status)
	}
	if r := rec.Results(); len(r) != 1 || r[0]["text/plain"] != "[1, 2]" {
		t.Errorf("results = %v", r)
	}
}

// TestInputRequested: input() is answered with an empty line, the cell
// fails and says why; the session goes on.
func TestInputRequested(t *testing.T) {
	rt := newRuntime(t, jupyter.Config{})
	inst, _ := newInstance(t, rt, nil)
	out, rec, err := run(t, inst, context.Background(), "v = input('name? ')\nprint(repr(v))")
	if err != nil {
		t.Fatal(err)
	}
	if !out.Failed || out.Interrupted {
		t.Errorf("outcome = %+v, want Failed", out)
	}
	if !strings.Contains(rec.StderrText(), "input() is not supported") || rec.StdoutText() != "''\n" {
		t.Errorf("stdout %q stderr %q", rec.StdoutText(), rec.StderrText())
	}
	var marked bool
	for _, e := range rec.Events() {
		marked = marked || (e.Kind == "status" && e.StatusKind == "stdin")
	}
	if !marked {
		t.Errorf("events = %+v, want a stdin status event", rec.Events())
	}
	ok(t, inst, "print('next')")
}

// echoHost answers tool calls with their arguments and llm calls after a
// pause, so that parallel's calls overlap.
type echoHost struct {
	mu      sync.Mutex
	active  int
	maxSeen int
}

func (h *echoHost) Tool(ctx context.Context, req hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
	return hostcalls.ToolResponse{Result: json.RawMessage(fmt.Sprintf(`{"tool": %q, "args": %s}`, req.Name, req.Args))}, nil
}

func (h *echoHost) LLM(ctx context.Context, req hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
	h.mu.Lock()
	h.active++
	h.maxSeen = max(h.maxSeen, h.active)
	h.mu.Unlock()
	time.Sleep(200 * time.Millisecond)
	h.mu.Lock()
	h.active--
	h.mu.Unlock()
	return hostcalls.LLMResponse{Text: "answer to " + req.Prompt}, nil
}

func (h *echoHost) Agent(ctx context.Context, req hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
	return hostcalls.AgentResponse{}, errors.New("no agents here")
}

// TestHelpers: the CPython sandbox's helpers reach the host from the
// kernel over the stdin channel: files, tool, llm, parallel with calls in
// flight together, errors as HostCallError.
func TestHelpers(t *testing.T) {
	rt := newRuntime(t, jupyter.Config{})
	host := &echoHost{}
	inst, root := newInstance(t, rt, host)
	if err := os.WriteFile(filepath.Join(root, "in.txt"), []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := ok(t, inst, `print(read('in.txt'), end='')
write('out.txt', 'written')
print(tool.echo({'x': 1}))
print(parallel([lambda i=i: llm(f'q{i}') for i in range(4)], concurrency=4))
try:
    agent('go')
except HostCallError as e:
    print('agent failed:', e)
import os
print(os.getcwd())`)
	want := "a\nb\n{'tool': 'echo', 'args': {'x': 1}}\n['answer to q0', 'answer to q1', 'answer to q2', 'answer to q3']\nagent failed: agent: no agents here\n" + root + "\n"
	if got := rec.StdoutText(); got != want {
		t.Errorf("stdout =\n%s\nwant\n%s\nstderr: %s", got, want, rec.StderrText())
	}
	if b, err := os.ReadFile(filepath.Join(root, "out.txt")); err != nil || string(b) != "written" {
		t.Errorf("out.txt = %q, %v", b, err)
	}
	if host.maxSeen < 2 {
		t.Errorf("at most %d llm calls ran at once, want parallel's calls in flight together", host.maxSeen)
	}
}

// TestEvictionAndCap: an idle kernel is shut down after IdleTimeout and its
// session told at its next cell; past MaxKernels the one idle longest
// goes.
func TestEvictionAndCap(t *testing.T) {
	rt := newRuntime(t, jupyter.Config{MaxKernels: 2, IdleTimeout: -1})
	a, _ := newInstance(t, rt, nil)
	b, _ := newInstance(t, rt, nil)
	c, _ := newInstance(t, rt, nil)
	ok(t, a, "x = 'a'")
	ok(t, b, "x = 'b'")
	ok(t, c, "x = 'c'") // the cap: a's kernel goes
	if n := rt.Kernels(); n != 2 {
		t.Errorf("%d kernels run, want the cap, 2", n)
	}
	out, rec, err := run(t, a, context.Background(), "x")
	if err != nil || !out.Failed {
		t.Errorf("a's state survived eviction: %+v %v", out, err)
	}
	var told bool
	for _, e := range rec.Events() {
		told = told || (e.Kind == "status" && strings.Contains(e.Text, "state"))
	}
	if !told {
		t.Errorf("events %+v, want a status event saying the state is gone", rec.Events())
	}

	idle := newRuntime(t, jupyter.Config{IdleTimeout: time.Second})
	d, _ := newInstance(t, idle, nil)
	ok(t, d, "x = 1")
	deadline := time.Now().Add(15 * time.Second)
	for idle.Kernels() != 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if n := idle.Kernels(); n != 0 {
		t.Errorf("%d kernels after the idle timeout, want 0", n)
	}
}

// TestPerCall: in per-call mode each request gets a fresh kernel.
func TestPerCall(t *testing.T) {
	rt := newRuntime(t, jupyter.Config{Mode: jupyter.ModePerCall})
	inst, _ := newInstance(t, rt, nil)
	ok(t, inst, "x = 1")
	ok(t, inst, "x + 1") // same request: state kept
	inst.(interface{ EndRequest(context.Context) }).EndRequest(context.Background())
	if out, _, err := run(t, inst, context.Background(), "x"); err != nil || !out.Failed {
		t.Errorf("a new request saw the last one's x: %+v %v", out, err)
	}
}

// TestManySessions: 20 sessions run cells at once, each in its own kernel.
func TestManySessions(t *testing.T) {
	rt := newRuntime(t, jupyter.Config{})
	const n = 20
	insts := make([]runtimes.Instance, n)
	for i := range insts {
		insts[i], _ = newInstance(t, rt, nil)
	}
	var wg sync.WaitGroup
	errs := make([]string, n)
	for i := range insts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			rec := &runtimetest.Recorder{}
			out, err := insts[i].Run(ctx, fmt.Sprintf("v = %d\nprint(v * 2)", i), rec)
			if err != nil || out.Failed || rec.StdoutText() != fmt.Sprintf("%d\n", 2*i) {
				errs[i] = fmt.Sprintf("session %d: %+v %v %q %q", i, out, err, rec.StdoutText(), rec.StderrText())
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
	if k := rt.Kernels(); k != n {
		t.Errorf("%d kernels, want %d", k, n)
	}
}

// TestHeartbeatDeath: a kernel whose process lives on but answers nothing
// (stopped) is found dead by its heartbeat, and restarted once.
func TestHeartbeatDeath(t *testing.T) {
	rt := newRuntime(t, jupyter.Config{})
	inst, _ := newInstance(t, rt, nil)
	ok(t, inst, "x = 1")
	start := time.Now()
	out, rec, err := run(t, inst, context.Background(), "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)")
	if err != nil {
		t.Fatal(err)
	}
	if !out.Failed || !strings.Contains(rec.StderrText(), "heartbeat") {
		t.Errorf("outcome %+v, stderr %q; want a failed cell whose kernel's heartbeat stopped", out, rec.StderrText())
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("finding the stopped kernel took %s", d)
	}
	if got := ok(t, inst, "print('back')").StdoutText(); got != "back\n" {
		t.Errorf("after the restart: %q", got)
	}
}
