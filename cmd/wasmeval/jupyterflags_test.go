package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	kernel "github.com/wasmeval/wasmeval/jupyter"
)

// jupyterServer starts a real Jupyter Server (Debian's
// python3-jupyter-server, make jupyter-deps) on loopback with a token for
// one test; it returns its URL, token and process id.
func jupyterServer(t *testing.T) (url, token string, pid int) {
	t.Helper()
	py := "/usr/bin/python3"
	if out, err := exec.Command(py, "-c", "import jupyter_server, ipykernel").CombinedOutput(); err != nil {
		t.Fatalf("%s cannot import jupyter_server and ipykernel (run make jupyter-deps): %v\n%s", py, err, out)
	}
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	token = kernel.NewID()
	cmd := exec.Command(py, "-m", "jupyter_server", "--no-browser", "--allow-root",
		"--ServerApp.ip=127.0.0.1", fmt.Sprintf("--ServerApp.port=%d", port), "--ServerApp.port_retries=0",
		"--ServerApp.token="+token, "--ServerApp.root_dir="+dir)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "JUPYTER_CONFIG_DIR=" + filepath.Join(dir, ".config"),
		"JUPYTER_DATA_DIR=" + filepath.Join(dir, ".data"), "JUPYTER_RUNTIME_DIR=" + filepath.Join(dir, ".runtime"),
		"IPYTHONDIR=" + filepath.Join(dir, ".ipython"), "LANG=C.UTF-8"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var log strings.Builder
	var logMu sync.Mutex
	w := writerFunc(func(p []byte) (int, error) { logMu.Lock(); defer logMu.Unlock(); return log.Write(p) })
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(testenv.Stretch(10 * time.Second)):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	url = fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		req, _ := http.NewRequest("GET", url+"/api/kernelspecs", nil)
		req.Header.Set("Authorization", "token "+token)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return url, token, cmd.Process.Pid
			}
		}
	}
	logMu.Lock()
	defer logMu.Unlock()
	t.Fatalf("the Jupyter server did not come up in a minute:\n%s", log.String())
	return
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestJupyterURL: eval's Python cells run in the server's kernel, whose
// parent is the server, with the token from WASMEVAL_JUPYTER_TOKEN; a
// wrong token and an unreachable server stop eval before any cell, saying
// what to fix.
func TestJupyterURL(t *testing.T) {
	url, token, pid := jupyterServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Setenv(kernel.TokenEnv, token)
	root := t.TempDir()
	code, stdout, stderr := run(t, ctx, req("import os\nprint('parent', os.getppid())", "import json\nprint(json.dumps(sorted(os.environ)))"),
		"eval", "--cwd", root, "--python-backend", "jupyter", "--jupyter-url", url)
	if code != exitOK || !strings.Contains(stdout, "parent "+strconv.Itoa(pid)) {
		t.Fatalf("eval on the server: status %d\nstdout %s\nstderr %s\nwant the kernel's parent to be the server (pid %d)", code, stdout, stderr, pid)
	}
	if strings.Contains(stdout, kernel.TokenEnv) {
		t.Errorf("the kernel sees %s: %s", kernel.TokenEnv, stdout)
	}

	t.Setenv(kernel.TokenEnv, "not-the-token")
	code, _, stderr = run(t, ctx, req("print(1)"), "eval", "--cwd", root, "--python-backend", "jupyter", "--jupyter-url", url)
	if code == exitOK || !strings.Contains(stderr, kernel.TokenEnv) || strings.Contains(stderr, "not-the-token") {
		t.Errorf("a wrong token: status %d, stderr %q; want a failure naming %s (and not the token)", code, stderr, kernel.TokenEnv)
	}

	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + l.Addr().String()
	l.Close()
	code, _, stderr = run(t, ctx, req("print(1)"), "eval", "--cwd", root, "--python-backend", "jupyter", "--jupyter-url", closed)
	if code != exitHost || !strings.Contains(stderr, "cannot reach the Jupyter server at "+closed) {
		t.Errorf("an unreachable server: status %d, stderr %q; want %d naming the URL", code, stderr, exitHost)
	}
}

func TestJupyterURLBadFlags(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not http", []string{"--python-backend", "jupyter", "--jupyter-url", "ftp://h/"}, "give the server's http:// or https:// base URL"},
		{"credentials not echoed", []string{"--python-backend", "jupyter", "--jupyter-url", "h:/x?token=secret"}, "give the server's http:// or https:// base URL"},
		{"without the jupyter backend", []string{"--jupyter-url", "http://127.0.0.1:1"}, "add --python-backend jupyter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, ctx, "", append([]string{"eval", "--cwd", t.TempDir()}, tc.args...)...)
			if code != exitInvalid || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "secret") {
				t.Errorf("status %d, stderr %q; want %d saying %q", code, stderr, exitInvalid, tc.want)
			}
		})
	}
}

// serve and mcp check --jupyter-url's server at start as eval does.
func TestJupyterURLServeMCP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + l.Addr().String()
	l.Close()
	for _, args := range [][]string{
		{"serve", "--addr", "127.0.0.1:0", "--token", "t0ken-for-the-test", "--python-backend", "jupyter", "--jupyter-url", closed},
		{"mcp", "--python-backend", "jupyter", "--jupyter-url", closed},
	} {
		code, _, stderr := run(t, ctx, "", args...)
		if code != exitHost || !strings.Contains(stderr, "wasmeval "+args[0]+": --jupyter-url: jupyter: cannot reach the Jupyter server at "+closed) {
			t.Errorf("%s with an unreachable server: status %d, stderr %q; want %d naming the URL", args[0], code, stderr, exitHost)
		}
	}
	code, _, stderr := run(t, ctx, "", "mcp", "--jupyter-url", closed)
	if code != exitInvalid || !strings.Contains(stderr, "add --python-backend jupyter") {
		t.Errorf("mcp --jupyter-url without the jupyter backend: status %d, stderr %q", code, stderr)
	}
}

// serve --jupyter-url: a session's Python cells run in the server's
// kernel.
func TestJupyterURLServeEndToEnd(t *testing.T) {
	url, token, pid := jupyterServer(t)
	t.Setenv(kernel.TokenEnv, token)
	const bearer = "jupyter-e2e-token"
	t.Setenv("WASMEVAL_TOKENS", bearer)
	srv := testenv.StartServe(t, doMain, "--workspace", t.TempDir(), "--python-backend", "jupyter", "--jupyter-url", url)
	addr := srv.Addr
	post := func(path, body string) map[string]any {
		req, _ := http.NewRequest("POST", "http://"+addr+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+bearer)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		json.NewDecoder(resp.Body).Decode(&v)
		return v
	}
	id, _ := post("/v1/sessions", "")["id"].(string)
	if id == "" {
		t.Fatalf("no session: %s", srv.Log())
	}
	res := post("/v1/sessions/"+id+"/eval", `{"cells":[{"language":"py","code":"import os\nprint('parent', os.getppid())"}]}`)
	if b, _ := json.Marshal(res); !strings.Contains(string(b), "parent "+strconv.Itoa(pid)) {
		t.Errorf("eval in serve's session: %s\nwant the kernel's parent to be the server (pid %d)", b, pid)
	}
}
