package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ServeStartTimeout bounds how long StartServe waits for the "listening"
// line: long, because serve first makes its Python template (seconds of
// guest work, many more on a loaded machine, more with --preload). Only a
// serve that never listens and never exits waits it out.
const ServeStartTimeout = 120 * time.Second

// ServeStopTimeout bounds how long Stop waits for serve to end: it drains
// its sessions (and saves them to a store) first.
const ServeStopTimeout = 60 * time.Second

// serveArgs come before the caller's: a loopback port of the kernel's
// choosing, and the JSON log whose "listening" line gives it.
var serveArgs = []string{"serve", "--addr", "127.0.0.1:0", "--log-format", "json"}

// listeningRE finds the address in serve's JSON "listening" line, with or
// without attributes (a node id) before it.
var listeningRE = regexp.MustCompile(`"msg":"listening"[^\n]*?"addr":"([^"]+)"`)

// Serve is a `wasmeval serve` that a test started, in its process or as a
// process of its own, listening on Addr. It is stopped when the test ends.
type Serve struct {
	// Addr is the host:port of its "listening" line.
	Addr string
	// Cmd is the process StartServeBinary started; nil for StartServe.
	Cmd *exec.Cmd

	log    LockedBuffer // stderr: the JSON log
	end    func()       // asks serve to end (the context, or SIGTERM)
	exited chan int     // its exit status, once
	code   int
	ended  bool
}

// StartServe runs `wasmeval serve --addr 127.0.0.1:0 --log-format json
// args...` in this process, through main (the command's doMain), and
// waits until it listens. It fails t when serve exits first or does not
// listen within ServeStartTimeout. Stop (or the test's end) cancels its
// context, as SIGTERM does.
func StartServe(t testing.TB, main func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int, args ...string) *Serve {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &Serve{end: cancel, exited: make(chan int, 1)}
	args = append(append([]string(nil), serveArgs...), args...)
	go func() { s.exited <- main(ctx, args, strings.NewReader(""), io.Discard, &s.log) }()
	s.wait(t)
	return s
}

// StartServeBinary starts bin (a built wasmeval) as `serve --addr
// 127.0.0.1:0 --log-format json args...`, with env added to this
// process's environment, and waits until it listens, as StartServe. Stop
// (or the test's end) sends it SIGTERM; a test of a crash kills Cmd
// itself and then calls Stop to reap it.
func StartServeBinary(t testing.TB, bin string, env []string, args ...string) *Serve {
	t.Helper()
	cmd := exec.Command(bin, append(append([]string(nil), serveArgs...), args...)...)
	cmd.Env = append(os.Environ(), env...)
	s := &Serve{Cmd: cmd, exited: make(chan int, 1)}
	cmd.Stderr = &s.log
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s serve: %v", bin, err)
	}
	s.end = func() { cmd.Process.Signal(syscall.SIGTERM) }
	go func() {
		cmd.Wait()
		s.exited <- cmd.ProcessState.ExitCode()
	}()
	s.wait(t)
	return s
}

// wait waits for the listening line, and has the test's end stop serve.
func (s *Serve) wait(t testing.TB) {
	t.Helper()
	t.Cleanup(func() { s.Stop(t) })
	for deadline := time.Now().Add(ServeStartTimeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := listeningRE.FindStringSubmatch(s.log.String()); m != nil {
			s.Addr = m[1]
			return
		}
		select {
		case code := <-s.exited:
			s.code, s.ended = code, true
			t.Fatalf("serve exited %d before it listened: %s", code, s.log.String())
		default:
		}
	}
	t.Fatalf("serve did not listen within %v: %s", ServeStartTimeout, s.log.String())
}

// Post sends body to serve's path with token as the bearer token,
// decodes the JSON answer into v (unless v is nil) and returns the status.
// It fails t when the request fails or the answer is not JSON.
func (s *Serve) Post(t testing.TB, token, path, body string, v any) int {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+s.Addr+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
		}
	}
	return resp.StatusCode
}

// Exited reports, without waiting, whether serve has ended (on its own,
// or killed by the test through Cmd).
func (s *Serve) Exited() bool {
	if s.ended {
		return true
	}
	select {
	case s.code = <-s.exited:
		s.ended = true
	default:
	}
	return s.ended
}

// Log is what serve has logged (its stderr) so far.
func (s *Serve) Log() string { return s.log.String() }

// Stop asks serve to end (its context cancelled, or SIGTERM) and returns
// its exit status, failing t when it does not end within
// ServeStopTimeout. Calling it again returns the same status.
func (s *Serve) Stop(t testing.TB) int {
	t.Helper()
	if s.ended {
		return s.code
	}
	s.end()
	select {
	case s.code = <-s.exited:
		s.ended = true
	case <-time.After(ServeStopTimeout):
		if s.Cmd != nil {
			s.Cmd.Process.Kill()
		}
		t.Fatalf("serve did not stop within %v of being asked: %s", ServeStopTimeout, s.log.String())
	}
	return s.code
}

// LockedBuffer is a bytes.Buffer that one goroutine (a server's log, a
// process's output) may write while another reads it.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
