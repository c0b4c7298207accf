//go:build linux

// Linux only: the Jupyter Server is started with Linux's Pdeathsig.

package jupyter_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/jupyter"
)

// jupyterServer is a real Jupyter Server (Debian's python3-jupyter-server,
// make jupyter-deps) on loopback with a token.
type jupyterServer struct {
	url, token string
}

// freePort returns a loopback port nothing listens on.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startJupyterServer starts a server for one test and stops it when the
// test ends.
func startJupyterServer(t *testing.T) *jupyterServer {
	t.Helper()
	py := kernelPython(t)
	if out, err := exec.Command(py, "-c", "import jupyter_server").CombinedOutput(); err != nil {
		t.Fatalf("%s cannot import jupyter_server (run make jupyter-deps): %v\n%s", py, err, out)
	}
	dir := t.TempDir()
	port := freePort(t)
	token := jupyter.NewID()
	cmd := exec.Command(py, "-m", "jupyter_server", "--no-browser", "--allow-root",
		"--ServerApp.ip=127.0.0.1", fmt.Sprintf("--ServerApp.port=%d", port), "--ServerApp.port_retries=0",
		"--ServerApp.token="+token, "--ServerApp.root_dir="+dir)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "JUPYTER_CONFIG_DIR=" + filepath.Join(dir, ".config"),
		"JUPYTER_DATA_DIR=" + filepath.Join(dir, ".data"), "JUPYTER_RUNTIME_DIR=" + filepath.Join(dir, ".runtime"),
		"IPYTHONDIR=" + filepath.Join(dir, ".ipython"), "LANG=C.UTF-8"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	log := &strings.Builder{}
	var logMu sync.Mutex
	cmd.Stdout = writerFunc(func(p []byte) (int, error) { logMu.Lock(); defer logMu.Unlock(); return log.Write(p) })
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// SIGTERM lets the server shut its kernels down; SIGKILL after.
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
	s := &jupyterServer{url: fmt.Sprintf("http://127.0.0.1:%d", port), token: token}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		req, _ := http.NewRequest("GET", s.url+"/api/kernelspecs", nil)
		req.Header.Set("Authorization", "token "+token)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
	}
	logMu.Lock()
	defer logMu.Unlock()
	t.Fatalf("the Jupyter server did not come up in a minute:\n%s", log)
	return nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// collect gathers a cell's stream output and error name.
type collect struct {
	mu      sync.Mutex
	out     strings.Builder
	types   []string
	buffers [][]byte
}

func (c *collect) IOPub(msgType string, m *jupyter.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.types = append(c.types, msgType)
	c.buffers = append(c.buffers, m.Buffers...)
	if msgType == "stream" {
		var s jupyter.StreamContent
		m.Decode(&s)
		c.out.WriteString(s.Text)
	}
}

func (c *collect) Input(prompt string, password bool) string { return "typed:" + prompt }

func (c *collect) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

// TestGateway runs against one real Jupyter Server on loopback.
func TestGateway(t *testing.T) {
	s := startJupyterServer(t)
	t.Run("kernel", func(t *testing.T) { testGatewayKernel(t, s) })
	t.Run("death", func(t *testing.T) { testGatewayKernelDeath(t, s) })
	t.Run("errors", func(t *testing.T) { testGatewayErrors(t, s) })
	t.Run("runtime death", func(t *testing.T) { testGatewayRuntimeDeath(t, s) })
	t.Run("conformance", func(t *testing.T) { testGatewayConformance(t, s) })
	t.Run("nested", func(t *testing.T) { testGatewayNested(t, s) })
}

func testGatewayKernel(t *testing.T, s *jupyterServer) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g, err := jupyter.DialGateway(ctx, s.url, s.token)
	if err != nil {
		t.Fatal(err)
	}
	var start jupyter.Starter = g.Start
	kern, err := start(ctx, jupyter.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k := kern.(*jupyter.RemoteKernel)
	ids, err := g.Kernels(ctx)
	if err != nil || !slices.Contains(ids, k.ID()) {
		t.Fatalf("kernels on the server = %v, %v; want %s among them", ids, err, k.ID())
	}

	// An execute round trip over the websocket: stdout, stdin, a result.
	out := &collect{}
	reply, err := k.Client().Execute(ctx, "print('hello over websocket')\nx = input('name? ')\nprint(x)\n6*7", jupyter.ExecuteOptions{}, out)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Status != "ok" || out.String() != "hello over websocket\ntyped:name? \n" || !slices.Contains(out.types, "execute_result") {
		t.Errorf("execute: status %q, output %q, messages %v", reply.Status, out.String(), out.types)
	}
	// A message with binary buffers crosses the websocket too (comm
	// messages carry them).
	out = &collect{}
	reply, err = k.Client().Execute(ctx, `
from ipykernel.comm import Comm
c = Comm(target_name='wasmeval-test', data={'x': 1}, buffers=[b'\x00\x01binary'])
print('comm sent')`, jupyter.ExecuteOptions{}, out)
	if err != nil || reply.Status != "ok" || !strings.Contains(out.String(), "comm sent") ||
		!slices.Contains(out.types, "comm_open") || len(out.buffers) != 1 || string(out.buffers[0]) != "\x00\x01binary" {
		t.Errorf("a cell sending a comm message with buffers: %v, %+v, %q, messages %v, buffers %q", err, reply, out.String(), out.types, out.buffers)
	}

	// The heartbeat pings the server.
	if err := k.Conn().Send(ctx, jupyter.Heartbeat, nil); err != nil {
		t.Errorf("heartbeat: %v", err)
	}

	// Interrupt over REST stops a spinning cell; the kernel keeps its state.
	if _, err := k.Client().Execute(ctx, "kept = 41", jupyter.ExecuteOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan *jupyter.ExecuteReply, 1)
	go func() {
		r, err := k.Client().Execute(ctx, "import time\nprint('spinning', flush=True)\nwhile True: time.sleep(0.01)", jupyter.ExecuteOptions{}, nil)
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	time.Sleep(500 * time.Millisecond)
	if err := k.Interrupt(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r == nil || r.Status != "error" || r.EName != "KeyboardInterrupt" {
			t.Errorf("interrupted cell reply = %+v, want a KeyboardInterrupt error", r)
		}
	case <-time.After(testenv.Stretch(30 * time.Second)):
		t.Fatal("the interrupt did not stop the cell")
	}
	out = &collect{}
	if _, err := k.Client().Execute(ctx, "print(kept + 1)", jupyter.ExecuteOptions{}, out); err != nil || out.String() != "42\n" {
		t.Errorf("after the interrupt: %q, %v; want the state kept", out.String(), err)
	}
	select {
	case <-k.Dead():
		t.Error("Dead closed for a live kernel")
	default:
	}

	// Delete: the server no longer has it.
	if err := k.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ids, err = g.Kernels(ctx)
	if err != nil || slices.Contains(ids, k.ID()) {
		t.Errorf("kernels after Close = %v, %v; want %s gone", ids, err, k.ID())
	}
}

// A kernel that dies behind the server (the server restarts it, losing its
// state) closes Dead.
func testGatewayKernelDeath(t *testing.T, s *jupyterServer) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g, err := jupyter.DialGateway(ctx, s.url, s.token)
	if err != nil {
		t.Fatal(err)
	}
	k, err := g.StartKernel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close(context.Background())
	go k.Client().Execute(ctx, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)", jupyter.ExecuteOptions{}, nil)
	select {
	case <-k.Dead():
	case <-time.After(testenv.Stretch(30 * time.Second)):
		t.Fatal("Dead not closed after the kernel was killed")
	}
}

func testGatewayErrors(t *testing.T, s *jupyterServer) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	closed := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	for _, tc := range []struct {
		name, url, token string
		want             []string
	}{
		{"wrong token", s.url, "not-the-token", []string{"HTTP 403", jupyter.TokenEnv, s.url}},
		{"no token", s.url, "", []string{"set " + jupyter.TokenEnv}},
		{"unreachable", closed, s.token, []string{"cannot reach the Jupyter server at " + closed, "--jupyter-url"}},
		{"not http", "ftp://127.0.0.1/", s.token, []string{"not an http:// or https:// URL"}},
		{"credentials kept out of messages", "http://user:secret@127.0.0.1:1/?token=abc", "", []string{"http://127.0.0.1:1"}},
		{"not a Jupyter server", s.url + "/nothing-here", s.token, []string{"no /api/kernelspecs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := jupyter.DialGateway(ctx, tc.url, tc.token)
			if err == nil {
				t.Fatal("DialGateway succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error = %v\nwant it to say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "abc") || strings.Contains(err.Error(), "not-the-token") {
				t.Errorf("error = %v shows a credential", err)
			}
		})
	}
}
