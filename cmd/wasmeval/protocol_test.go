package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
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
