package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// TestPythonBackendFlagBadValues: every face answers bad backend flags with
// status 2 and a line naming the flag and the valid values; --help
// explains them.
func TestPythonBackendFlagBadValues(t *testing.T) {
	for _, cmd := range []string{"eval", "serve", "mcp"} {
		base := []string{cmd}
		if cmd == "eval" {
			base = append(base, "--cwd", t.TempDir())
		}
		for _, tt := range []struct{ args []string }{
			{[]string{"--python-backend", "jupiter"}},
			{[]string{"--jupyter-mode", "percall"}},
			{[]string{"--jupyter-max-kernels", "-1"}},
		} {
			code, _, stderr := run(t, context.Background(), "", append(base, tt.args...)...)
			line := firstLine(stderr)
			if code != exitInvalid || !strings.Contains(line, tt.args[0]) {
				t.Errorf("%s %v: status %d, first line %q; want %d and a line naming the flag", cmd, tt.args, code, line, exitInvalid)
			}
		}
		code, stdout, _ := run(t, context.Background(), "", cmd, "--help")
		if code != exitOK || !strings.Contains(stdout, "--python-backend wasm|jupyter") || !strings.Contains(stdout, "NOT a sandbox") {
			t.Errorf("%s --help does not explain --python-backend", cmd)
		}
	}
}

// TestEvalJupyterBackend: eval --python-backend jupyter runs Python cells
// in a kernel, where numpy imports.
func TestEvalJupyterBackend(t *testing.T) {
	stdin := `{"cells":[{"language":"py","code":"import numpy as np\nv = np.arange(4).sum()\nprint(int(v))"}]}` + "\n" +
		`{"cells":[{"language":"py","code":"v * 7"}]}` + "\n"
	code, stdout, stderr := run(t, context.Background(), stdin, "eval", "--cwd", t.TempDir(), "--python-backend", "jupyter", "--jupyter-python", testenv.JupyterPython(t, "numpy"))
	res := results(t, stdout)
	if len(res) != 2 || code != exitOK {
		t.Fatalf("status %d, %d results, want 0 and 2; stderr %s; stdout %s", code, len(res), stderr, stdout)
	}
	if got := summary(res[0]); got != "text: 6" {
		t.Errorf("numpy cell: %s", got)
	}
	if got := summary(res[1]); !strings.Contains(got, "42") {
		t.Errorf("state kept: %s", got)
	}
}

// TestServeSessionChoosesPython: serve --python-backend-choice lets a
// session ask for {"python": "jupyter"}; without it, or with a bad name,
// the request is refused with 400 and a message that says why.
func TestServeSessionChoosesPython(t *testing.T) {
	py := testenv.JupyterPython(t, "numpy")
	const token = "python-backend-token"
	t.Setenv("WASMEVAL_TOKENS", token)
	start := func(extra ...string) *testenv.Serve {
		return testenv.StartServe(t, doMain, append([]string{"--workspace", t.TempDir(), "--jupyter-python", py}, extra...)...)
	}
	var e struct{ Error struct{ Message string } }

	srv := start()
	if code := srv.Post(t, token, "/v1/sessions", `{"python": "jupyter"}`, &e); code != http.StatusBadRequest || !strings.Contains(e.Error.Message, "--python-backend-choice") {
		t.Errorf("choice without leave: %d %q", code, e.Error.Message)
	}
	srv.Stop(t)

	srv = start("--python-backend-choice")
	if code := srv.Post(t, token, "/v1/sessions", `{"python": "cpython"}`, &e); code != http.StatusBadRequest || !strings.Contains(e.Error.Message, "wasm or jupyter") {
		t.Errorf("bad name: %d %q", code, e.Error.Message)
	}
	var sess struct{ ID string }
	if code := srv.Post(t, token, "/v1/sessions", `{"python": "jupyter", "env": {"WHO": "kernel"}}`, &sess); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	var res struct {
		Content []struct{ Text string }
		Details struct{ IsError bool }
	}
	srv.Post(t, token, "/v1/sessions/"+sess.ID+"/eval", `{"cells":[{"language":"py","code":"import os, sys\nprint(sys.platform, os.environ['WHO'])"}]}`, &res)
	if len(res.Content) == 0 || res.Content[0].Text != "linux kernel" || res.Details.IsError {
		t.Errorf("jupyter session: %+v", res)
	}
	var plain struct{ ID string }
	srv.Post(t, token, "/v1/sessions", "", &plain)
	srv.Post(t, token, "/v1/sessions/"+plain.ID+"/eval", `{"cells":[{"language":"py","code":"import sys\nprint(sys.platform)"}]}`, &res)
	if len(res.Content) == 0 || res.Content[0].Text != "wasi" {
		t.Errorf("default session: %+v", res)
	}
}
