package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// TestMCPBinarySurvivesBadLines drives a real `wasmeval mcp` over pipes:
// a line that is not JSON and a line past the 16 MiB cap each get a
// JSON-RPC error, and tools/list after them is still answered.
func TestMCPBinarySurvivesBadLines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := wasmevalBinary(t)
	cmd := exec.Command(bin, "mcp", "--workspace", t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	answers := make(chan map[string]any, 8)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			json.Unmarshal(sc.Bytes(), &m)
			answers <- m
		}
		close(answers)
	}()
	next := func(what string) map[string]any {
		t.Helper()
		select {
		case m, ok := <-answers:
			if !ok {
				t.Fatalf("%s: wasmeval mcp closed its output; stderr: %s", what, stderr.String())
			}
			return m
		case <-time.After(time.Minute):
			t.Fatalf("%s: no answer; stderr: %s", what, stderr.String())
		}
		return nil
	}
	errCode := func(m map[string]any) any {
		e, _ := m["error"].(map[string]any)
		return e["code"]
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("writing: %v; stderr: %s", err, stderr.String())
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := next("initialize"); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`this is not json`)
	if m := next("a bad line"); m["id"] != nil || errCode(m) != float64(-32700) {
		t.Errorf("a bad line: %v, want a -32700 error with id null", m)
	}
	// 16 MiB and more of one JSON string, written in pieces.
	go func() {
		io.WriteString(stdin, `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"`)
		chunk := strings.Repeat("x", 1<<20)
		for range 17 {
			io.WriteString(stdin, chunk)
		}
		io.WriteString(stdin, "\"}}\n")
		send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	}()
	if m := next("an oversized line"); m["id"] != nil || errCode(m) != float64(-32700) ||
		!strings.Contains(m["error"].(map[string]any)["message"].(string), "longer than 16 MiB") {
		t.Errorf("an oversized line: %v, want a -32700 error that names the cap", m)
	}
	m := next("tools/list")
	if m["id"] != float64(2) || m["result"] == nil {
		t.Fatalf("tools/list after the bad lines: %v", m)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("wasmeval mcp at the end of its input: %v; stderr: %s", err, stderr.String())
	}
}

// TestEvalReaderGoesAway: when the reader of eval's stdout closes it, eval
// does not die of SIGPIPE: it says so on stderr and exits 3 ("the host
// could not run one").
func TestEvalReaderGoesAway(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := wasmevalBinary(t)
	cmd := exec.Command(bin, "eval", "--cwd", t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	req := `{"cells":[{"language":"js","code":"print('hello')"}]}` + "\n"
	io.WriteString(stdin, req)
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("the first result: %v; stderr: %s", err, stderr.String())
	}
	stdout.Close() // the reader goes away
	io.WriteString(stdin, req)
	io.WriteString(stdin, req)
	stdin.Close()
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("exit: %v, want status 3; stderr: %s", err, stderr.String())
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("eval died of %v, want exit status 3; stderr: %s", ws.Signal(), stderr.String())
	}
	if ee.ExitCode() != exitHost || !strings.Contains(stderr.String(), "writing results") {
		t.Errorf("exit status %d, stderr %q; want 3 and a message about writing results", ee.ExitCode(), stderr.String())
	}
}

// blockingPipe is a pipe in blocking mode, as a parent process hands one
// to eval (os.Pipe's are non-blocking).
func blockingPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(p[0]), "stdin"), os.NewFile(uintptr(p[1]), "stdin-w")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// blockingSocket is a connected pair of Unix stream sockets in blocking
// mode, as node's child_process hands one to eval for stdin (libuv makes
// its stdio pipes with socketpair).
func blockingSocket(t *testing.T) (r, w *os.File) {
	t.Helper()
	p, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(p[0]), "stdin"), os.NewFile(uintptr(p[1]), "stdin-w")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	rc.Control(func(fd uintptr) { flags, err = fcntl(int(fd), syscall.F_GETFL, 0) })
	if err != nil {
		t.Fatal(err)
	}
	return flags&syscall.O_NONBLOCK != 0
}

// TestEvalPipeStdin: a pipe or a socket on stdin is read on eval's own
// goroutine, waiting in poll(2) (evalstdin.go, issue 15: no hand-off from
// a reading goroutine per line, no Go poller): its lines are answered in
// order, the end of input ends eval with 0, an interrupt while eval waits
// for a line ends it with 130, and stdin is left in blocking mode, as it
// was given.
func TestEvalPipeStdin(t *testing.T) {
	withFakeSession(t)
	r, _ := blockingPipe(t)
	src := newLineSource(context.Background(), r, maxLineBytes)
	if _, ok := src.(*polledLines); !ok {
		t.Fatalf("a pipe on stdin is read by %T, want *polledLines", src)
	}
	if !nonblocking(t, r) {
		t.Error("stdin is not in non-blocking mode while eval reads it")
	}
	src.stop()
	if nonblocking(t, r) {
		t.Error("stdin is left in non-blocking mode")
	}
	if src, ok := newLineSource(context.Background(), strings.NewReader(""), 10).(*lineStream); !ok {
		t.Errorf("a reader that is no file is read by %T, want *lineStream", src)
	} else {
		src.stop()
	}

	for _, tc := range []struct {
		kind      string
		stdin     func(*testing.T) (r, w *os.File)
		interrupt bool
	}{{"pipe", blockingPipe, false}, {"pipe", blockingPipe, true}, {"socket", blockingSocket, false}, {"socket", blockingSocket, true}} {
		interrupt := tc.interrupt
		r, w := tc.stdin(t)
		// openStdin, not newLineSource: a reading goroutine would take
		// the lines meant for eval.
		if in := openStdin(r); in == nil {
			t.Errorf("a %s on stdin is not read on eval's goroutine (openStdin: nil)", tc.kind)
		} else {
			in.close()
		}
		outR, outW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer outR.Close()
		defer outW.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan int, 1)
		var errb lockedBuffer
		go func() { done <- doMain(ctx, []string{"eval", "--cwd", t.TempDir()}, r, outW, &errb) }()
		answers := bufio.NewReader(outR)
		for _, text := range []string{"one", "two"} {
			io.WriteString(w, req("ok "+text)+"\n\n") // and a blank line, skipped
			ans, err := answers.ReadString('\n')
			if err != nil || !strings.Contains(ans, `"output":"`+text+`\n"`) {
				t.Fatalf("%s: answer %q, %v; want the output %s", tc.kind, ans, err, text)
			}
		}
		want := exitOK
		if interrupt {
			time.Sleep(20 * time.Millisecond) // eval waits for the next line
			cancel()
			want = exitInterrupted
		} else {
			w.Close()
		}
		select {
		case code := <-done:
			if code != want {
				t.Errorf("%s, interrupt %v: exit %d, want %d; stderr: %s", tc.kind, interrupt, code, want, errb.String())
			}
		case <-time.After(testenv.Stretch(10 * time.Second)):
			t.Fatalf("%s, interrupt %v: eval did not stop", tc.kind, interrupt)
		}
		if interrupt && !strings.Contains(errb.String(), "interrupted") {
			t.Errorf("%s: stderr %q does not say eval was interrupted", tc.kind, errb.String())
		}
		if nonblocking(t, r) {
			t.Errorf("%s, interrupt %v: stdin is left in non-blocking mode", tc.kind, interrupt)
		}
	}
}
