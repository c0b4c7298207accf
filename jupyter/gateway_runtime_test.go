//go:build linux

// Linux only: the sandbox and its runtimes (package wasm: memfd guest
// memories) build on Linux only.

package jupyter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/jupyter"
	"github.com/wasmeval/wasmeval/runtimes"
	rtjupyter "github.com/wasmeval/wasmeval/runtimes/jupyter"
	"github.com/wasmeval/wasmeval/runtimes/runtimetest"
)

// testGatewayConformance runs the runtime conformance suite on kernels of
// the external server: the Jupyter backend with Gateway.Start as its
// Starter, so cells, helpers (over the stdin channel), interrupts and
// timeouts cross the websocket. The cases left out are those the local
// backend leaves out, for the same reasons (runtimes/jupyter's
// TestConformance): a kernel is a host process, with the host's clock.
func testGatewayConformance(t *testing.T, s *jupyterServer) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g, err := jupyter.DialGateway(ctx, s.url, s.token)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rtjupyter.New(rtjupyter.Config{Start: g.Start, MaxKernels: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	runtimetest.Run(t, rt, runtimetest.Snippets{
		PrintHello:      "print('hello')",
		WriteStderr:     "import sys\nprint('oops', file=sys.stderr)",
		DefineState:     "x = 41",
		ReadState:       "x + 1",
		LastExpression:  "6 * 7",
		NoResult:        "y = 1",
		Raise:           "raise RuntimeError('boom')",
		SyntaxError:     "def f(:",
		InfiniteLoop:    "while True:\n    pass",
		ReadFile:        "print(open('data.txt').read(), end='')",
		PrintEnv:        "import os\nprint(os.environ['WASMEVAL_TEST_VAR'])",
		PrintHostSecret: "import os\nprint(os.environ.get('WASMEVAL_HOST_SECRET', ''))",
		DisplayJSON:     "display({'a': 1, 'b': [1, 2]})",
		DisplayMarkdown: "class M:\n    def _repr_markdown_(self):\n        return '# Title'\ndisplay(M())",
		PrintRandom:     "import random\nprint(random.random())",
	})
}

// testGatewayRuntimeDeath: a server's kernel that dies mid-cell is, to the
// backend, a death like a local one: the cell fails saying so, the
// session gets a fresh kernel (its state gone) and goes on.
func testGatewayRuntimeDeath(t *testing.T, s *jupyterServer) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g, err := jupyter.DialGateway(ctx, s.url, s.token)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rtjupyter.New(rtjupyter.Config{Start: g.Start, MaxKernels: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	root := t.TempDir()
	calls, err := hostcalls.NewDispatcher(root, nil, hostcalls.DispatcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { calls.Close() })
	inst, err := rt.NewInstance(ctx, runtimes.InstanceOptions{Call: calls.Call, Root: root, Env: map[string]string{"HOME": root}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close(context.Background()) })
	for _, step := range []struct {
		code, stdout, stderr string
		failed               bool
	}{
		{code: "x = 1"},
		{code: "import os, signal; os.kill(os.getpid(), signal.SIGKILL)", stderr: "kernel died", failed: true},
		{code: "print(x)", stderr: "NameError", failed: true},
		{code: "print('after')", stdout: "after\n"},
	} {
		rec := &runtimetest.Recorder{}
		out, err := inst.Run(ctx, step.code, rec)
		if err != nil {
			t.Fatalf("%q: %v", step.code, err)
		}
		if out.Failed != step.failed || rec.StdoutText() != step.stdout || !strings.Contains(rec.StderrText(), step.stderr) {
			t.Errorf("%q: failed %v, stdout %q, stderr %q; want failed %v, stdout %q, stderr with %q",
				step.code, out.Failed, rec.StdoutText(), rec.StderrText(), step.failed, step.stdout, step.stderr)
		}
	}
}

// testGatewayNested: a nested eval (runtimes.Reentrant) reaches a
// server's kernel as it does a local one: over the stdin channel, which
// the websocket carries, while the waiting cell's agent() call is in
// flight. The nested code sees and sets the waiting cell's variables.
func testGatewayNested(t *testing.T, s *jupyterServer) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g, err := jupyter.DialGateway(ctx, s.url, s.token)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rtjupyter.New(rtjupyter.Config{Start: g.Start, MaxKernels: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	root := t.TempDir()
	var inst runtimes.Instance
	// agent(prompt) runs prompt nested in the cell that called it.
	call := func(ctx context.Context, request []byte) []byte {
		var r struct{ Op, Prompt string }
		if err := json.Unmarshal(request, &r); err != nil || r.Op != "agent" {
			return []byte(`{"error":{"message":"only agent() here"}}`)
		}
		rec := &runtimetest.Recorder{}
		out, err := inst.(runtimes.Reentrant).RunNested(ctx, r.Prompt, rec)
		if err != nil {
			b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": err.Error()}})
			return b
		}
		b, _ := json.Marshal(map[string]any{"result": fmt.Sprintf("failed=%v %s%s", out.Failed, rec.StdoutText(), rec.StderrText())})
		return b
	}
	inst, err = rt.NewInstance(ctx, runtimes.InstanceOptions{Call: call, Root: root, Env: map[string]string{"HOME": root}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close(context.Background()) })
	rec := &runtimetest.Recorder{}
	out, err := inst.Run(ctx, "x = 20\nr = agent('y = x + 1\\nprint(y * 2)')\nprint(y, r, end='')", rec)
	if err != nil {
		t.Fatal(err)
	}
	if out.Failed || rec.StdoutText() != "21 failed=false 42\n" {
		t.Errorf("nested on the server's kernel: failed %v, stdout %q, stderr %q; want \"21 failed=false 42\\n\"", out.Failed, rec.StdoutText(), rec.StderrText())
	}
}
