package sandbox_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// TestJupyterBackendSession: a session on the jupyter backend runs Python
// cells with the wasm backend's result contract: [i/n] content, results,
// JSON outputs, images, status events, cut output read back with
// output(), the timeout text, reset; JavaScript still runs in goja.
func TestJupyterBackendSession(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{PythonBackend: sandbox.PythonJupyter,
		Jupyter: sandbox.JupyterOptions{Python: testenv.JupyterPython(t)}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), SetEnv: map[string]string{"GREETING": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	eval := func(cells ...sandbox.Cell) *sandbox.Result {
		t.Helper()
		res, err := s.Eval(ctx, sandbox.Request{Cells: cells})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	py := func(code string) sandbox.Cell { return sandbox.Cell{Language: "py", Code: code} }

	res := eval(py("import os, sys\nx = 41\nprint(os.environ['GREETING'], sys.version_info[0])"),
		py("import numpy as np\nimport matplotlib.pyplot as plt\nplt.plot(np.arange(5))\nplt.show()\ndisplay({'n': 1})\nlog('plotted')\nx + 1"),
		sandbox.Cell{Language: "js", Code: "1 + 2"})
	if res.Details.IsError {
		t.Fatalf("result is an error: %+v", res.Details.Cells)
	}
	text := res.Content[0].Text
	for _, want := range []string{"[1/3]", "hi 3", "[2/3]", "42", "[3/3]", "3"} {
		if !strings.Contains(text, want) {
			t.Errorf("content %q lacks %q", text, want)
		}
	}
	if len(res.Details.Images) != 1 || res.Details.Images[0].MIMEType != "image/png" {
		t.Errorf("images = %d, want one PNG", len(res.Details.Images))
	}
	if len(res.Content) != 2 || res.Content[1].Type != "image" {
		t.Errorf("content items = %d, want the text and the image", len(res.Content))
	}
	if len(res.Details.JSONOutputs) != 1 || string(res.Details.JSONOutputs[0]) != `{"n":1}` {
		t.Errorf("jsonOutputs = %s", res.Details.JSONOutputs)
	}
	var logged bool
	for _, e := range res.Details.StatusEvents {
		logged = logged || (e.Kind == "log" && strings.Contains(e.Message, "plotted"))
	}
	if !logged {
		t.Errorf("status events = %+v, want the log", res.Details.StatusEvents)
	}

	// A long output is cut, and output() reads it back in the kernel.
	res = eval(py("for i in range(20000):\n    print('line', i)"))
	if len(res.Details.Meta.Truncated) != 1 {
		t.Fatalf("meta = %+v, want the output cut", res.Details.Meta)
	}
	id := res.Details.Meta.Truncated[0].OutputID
	res = eval(py("print(output('" + id + "', query='line 19999'))"))
	if !strings.Contains(res.Content[0].Text, "line 19999") {
		t.Errorf("output() read back %q", res.Content[0].Text)
	}

	// The timeout text, and the state kept.
	res = eval(sandbox.Cell{Language: "py", Code: "while True: pass", TimeoutSeconds: 1})
	if c := res.Details.Cells[0]; c.Status != sandbox.StatusError || !strings.Contains(c.Output, "timed out after 1 second") {
		t.Errorf("timed-out cell: %s %q", c.Status, c.Output)
	}
	if res = eval(py("x")); !strings.Contains(res.Content[0].Text, "41") {
		t.Errorf("after the timeout: %q", res.Content[0].Text)
	}
	// reset restarts the kernel.
	res = eval(sandbox.Cell{Language: "py", Code: "x", Reset: true})
	if !res.Details.IsError || !strings.Contains(res.Details.Cells[0].Output, "NameError") {
		t.Errorf("after reset: %q", res.Details.Cells[0].Output)
	}
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), "\x1b[") {
		t.Errorf("the result has ANSI colour codes: %s", b)
	}
}

// TestPythonBackendChoice: sessions choose their backend only where the
// operator allows it; bad names say what is right.
func TestPythonBackendChoice(t *testing.T) {
	ctx := context.Background()
	if _, err := sandbox.New(ctx, sandbox.Options{PythonBackend: "jupiter"}); err == nil || !strings.Contains(err.Error(), "use wasm or jupyter") {
		t.Errorf("bad backend: %v", err)
	}
	if _, err := sandbox.New(ctx, sandbox.Options{Jupyter: sandbox.JupyterOptions{Mode: "percall"}}); err == nil || !strings.Contains(err.Error(), "per-call") {
		t.Errorf("bad mode: %v", err)
	}
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	_, err = sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), PythonBackend: "jupyter"})
	if err == nil || !strings.Contains(err.Error(), "PythonBackendChoice") {
		t.Errorf("a session chose jupyter without the operator's leave: %v", err)
	}
	choice, err := sandbox.New(ctx, sandbox.Options{PythonBackendChoice: true,
		Jupyter: sandbox.JupyterOptions{Python: testenv.JupyterPython(t), Mode: "per-call"}})
	if err != nil {
		t.Fatal(err)
	}
	defer choice.Close(ctx)
	if _, err := choice.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), PythonBackend: "jupyter", Deterministic: true}); err == nil || !strings.Contains(err.Error(), "deterministic") {
		t.Errorf("a deterministic jupyter session: %v", err)
	}
	s, err := choice.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), PythonBackend: "jupyter"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "import sys; y = 1; print('numpy' in sys.modules or 'ipykernel' in sys.modules)"}, {Language: "py", Code: "y"}}})
	if err != nil || res.Details.IsError || !strings.Contains(res.Content[0].Text, "True") {
		t.Fatalf("jupyter session: %v %+v", err, res)
	}
	// per-call: the next request has a fresh kernel.
	res, err = s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "y"}}})
	if err != nil || !res.Details.IsError {
		t.Errorf("per-call mode kept y across requests: %v %+v", err, res)
	}
	w, err := choice.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	res, err = w.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "import sys; print(sys.platform)"}}})
	if err != nil || !strings.Contains(res.Content[0].Text, "wasi") {
		t.Errorf("default session is not on wasm: %v %+v", err, res)
	}
}
