package attack_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

var regexpDuration = regexp.MustCompile(`"durationMs":[0-9]+`)

// TestHuntEvalLines: `wasmeval eval` given, line after line, cells that
// attack the process (a microtask flood, Atomics.wait, a Python regex
// bomb, an endless Python __repr__, os._exit, a 50 MB message) answers
// each line in order, each stopped at its one-second timeout or cut, keeps
// the session's state across them, and exits 0 with every line answered.
func TestHuntEvalLines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	testenv.RequirePython(t)
	bin := wasmevalBinary(t)
	line := func(lang, code string) string {
		b, _ := json.Marshal(map[string]any{"cells": []map[string]any{{"language": lang, "code": code, "timeout": 1}}})
		return string(b) + "\n"
	}
	lines := []struct{ line, want string }{
		{line("py", "kept = 'still here'"), `"status":"complete"`},
		{line("js", "(function f() { queueMicrotask(f) })(); await new Promise(r => setTimeout(r, 10))"), "timed out after 1 second"},
		{line("js", "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)"), `"status":"error"`},
		{line("py", "import re; re.match(r'(a+)+$', 'a' * 64 + '!')"), "timed out after 1 second"},
		{line("py", "class C:\n    def __repr__(self):\n        while True: pass\nC()"), "timed out after 1 second"},
		{line("py", "raise Exception('x' * (50 << 20))"), "Exception"},
		{line("py", "print(kept)"), "still here"},
		{line("py", "import os; os._exit(0)"), "exited with status 0"},
		{line("js", "print(6 * 7)"), `42`},
	}
	var in bytes.Buffer
	for _, l := range lines {
		in.WriteString(l.line)
	}
	cmd := exec.Command(bin, "eval", "--cwd", newWorld(t).root)
	cmd.Stdin = &in
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	// Exit status 1: a cell failed (README), as most of these do.
	if err := cmd.Run(); err == nil || err.(*exec.ExitError).ExitCode() != 1 {
		t.Fatalf("eval: %v, want exit status 1; stderr: %.2000s", err, stderr.String())
	}
	if took := time.Since(start); took > testenv.Stretch(60*time.Second) {
		t.Errorf("%d lines of one-second cells took %v", len(lines), took)
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	i := 0
	for ; sc.Scan(); i++ {
		if i >= len(lines) {
			t.Fatalf("more answers than lines: %.300s", sc.Text())
		}
		if len(sc.Bytes()) > 1<<20 {
			t.Errorf("line %d: a %d-byte answer", i+1, len(sc.Bytes()))
		}
		if !strings.Contains(sc.Text(), lines[i].want) {
			t.Errorf("line %d: %.600s\nwant it to hold %q", i+1, sc.Text(), lines[i].want)
		}
		noLeak(t, fmt.Sprintf("line %d", i+1), sc.Text())
		t.Logf("line %d: %s", i+1, regexpDuration.FindString(sc.Text()))
	}
	if i != len(lines) {
		t.Fatalf("%d answers for %d lines; stderr: %.2000s", i, len(lines), stderr.String())
	}
}

// TestHuntMCPStdio: `wasmeval mcp` on stdio given notifications without
// an id (of unknown methods, with params of the wrong shape), the
// cancellation of ids it never saw, a response nobody asked for, an
// unknown method, and tool calls whose cells attack the process: it
// answers each request (nothing for a notification), in time, and goes
// on serving the session's state.
func TestHuntMCPStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	send, next := startMCPStdio(t, "2025-06-18")
	for _, n := range []string{
		`{"jsonrpc":"2.0","method":"notifications/whatever","params":{"x":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":424242,"reason":"none"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":[1]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"nope"}`,
		`{"jsonrpc":"2.0","id":99999,"result":{"unasked":true}}`,
		`{"jsonrpc":"2.0","id":99998,"error":{"code":1,"message":"unasked"}}`,
	} {
		send(n)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/explode"}`)
	if m := next(); m["id"] != float64(2) || m["error"] == nil {
		t.Errorf("an unknown method: %v; want a JSON-RPC error for id 2", m)
	}
	call := func(id int, lang, code string) map[string]any {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": "eval",
			"arguments": map[string]any{"cells": []map[string]any{{"language": lang, "code": code, "timeout": 1}}}}})
		send(string(b))
		start := time.Now()
		m := next()
		if took := time.Since(start); took > testenv.Stretch(20*time.Second) {
			t.Errorf("call %d took %v", id, took)
		}
		if m["id"] != float64(id) {
			t.Fatalf("the answer to call %d: %.500v", id, m)
		}
		return m
	}
	text := func(m map[string]any) string { b, _ := json.Marshal(m); return string(b) }
	call(3, "js", "globalThis.kept = 'still here'")
	if got := text(call(4, "js", "for (;;) await null")); !strings.Contains(got, "timed out after 1 second") {
		t.Errorf("an await loop: %.500s", got)
	}
	if got := text(call(5, "js", "Error.prepareStackTrace = () => { for (;;); }; throw new Error('x')")); !strings.Contains(got, "isError") {
		t.Errorf("a stack-trace hook that never returns: %.500s", got)
	}
	if got := text(call(6, "js", "print(kept)")); !strings.Contains(got, "still here") {
		t.Errorf("the session's state after the attacks: %.500s", got)
	}
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	if m := next(); m["id"] != float64(7) || m["result"] == nil {
		t.Errorf("tools/list at the end: %v", m)
	}
}
