package attack_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// badRequests are malformed requests and the part of the error that must
// name the problem, for the library face and the eval line face alike.
var badRequests = []struct {
	name, line, want string
}{
	{"not JSON", `not json`, "not JSON"},
	{"an array", `[1,2]`, "an array is not an object"},
	{"null", `null`, "null is not an object"},
	{"no cells", `{"cells":[]}`, "cells: empty"},
	{"cells not an array", `{"cells":"x"}`, "cells: must be an array"},
	{"unknown language", `{"cells":[{"language":"rb","code":"x"}]}`, `use "py" (Python), "js" (JavaScript)`},
	{"timeout out of range", `{"cells":[{"language":"py","code":"1","timeout":601}]}`, "from 1 to 600"},
	{"negative timeout", `{"cells":[{"language":"py","code":"1","timeout":-1}]}`, "timeout"},
	{"misspelt field", `{"cells":[{"langauge":"py","code":"1"}]}`, `did you mean "language"?`},
	{"empty code", `{"cells":[{"language":"js","code":""}]}`, "code: empty"},
	{"two objects", `{"cells":[{"language":"js","code":"1"}]} {"x":1}`, "exactly one JSON object"},
	{"negative fuel", `{"cells":[{"language":"js","code":"1","fuel":-1}]}`, "fuel"},
	{"reset not a boolean", `{"cells":[{"language":"js","code":"1","reset":"yes"}]}`, "must be true or false"},
	{"deep nesting", `{"cells":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, "cells"},
}

// TestLibraryRequests: DecodeRequest refuses each bad request with a
// RequestError that names the problem, and Session.Eval refuses invalid
// Requests the same way, without running anything.
func TestLibraryRequests(t *testing.T) {
	for _, tt := range badRequests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sandbox.DecodeRequest([]byte(tt.line))
			var re *sandbox.RequestError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("DecodeRequest: %v, want a RequestError with %q", err, tt.want)
			}
		})
	}
	w := newWorld(t)
	s, err := sharedSandbox(t).NewSession(context.Background(), sessionOptions(w.root))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	for _, tt := range []struct {
		name string
		req  sandbox.Request
		want string
	}{
		{"no cells", sandbox.Request{}, "cells"},
		{"unknown language", sandbox.Request{Cells: []sandbox.Cell{{Language: "sh", Code: "id"}}}, "language"},
		{"timeout out of range", sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "1", TimeoutSeconds: 100000}}}, "timeout"},
		{"fuel out of range", sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "1", Fuel: sandbox.MaxFuel + 1}}}, "fuel"},
	} {
		t.Run("Eval/"+tt.name, func(t *testing.T) {
			_, err := s.Eval(context.Background(), tt.req)
			var re *sandbox.RequestError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Eval: %v, want a RequestError naming %q", err, tt.want)
			}
		})
	}
	alive(t, s, "js")
	if _, err := sharedSandbox(t).NewSession(context.Background(), sandbox.SessionOptions{Root: filepath.Join(w.base, "missing")}); err == nil {
		t.Error("NewSession with a missing root: no error")
	}
	if _, err := sharedSandbox(t).NewSession(context.Background(), sandbox.SessionOptions{}); err == nil || !strings.Contains(err.Error(), "Root is required") {
		t.Errorf("NewSession without a root: %v", err)
	}
}

// TestHostCallABI: the raw host-call ABI under the Python helpers, and the
// JavaScript helpers with arguments of the wrong kinds, answer bad calls
// with errors that name the problem, and the session lives on.
func TestHostCallABI(t *testing.T) {
	run(t, []attack{
		py("a request that is not JSON", `import _wasmeval; _wasmeval.call_start('not json'); print(_wasmeval.call_wait())`,
			ok, "not a JSON object of the host-call ABI"),
		py("a request that is not UTF-8", `import _wasmeval; _wasmeval.call_start(b'\xff\xfe'); print(_wasmeval.call_wait())`, ok, "error"),
		py("an unknown op", `import _wasmeval; _wasmeval.call_start('{"op": "spawn"}'); print(_wasmeval.call_wait())`, ok, "unknown op"),
		py("no op", `import _wasmeval; _wasmeval.call_start('{}'); print(_wasmeval.call_wait())`, ok, "no op"),
		py("wait with nothing in flight", `import _wasmeval; print(_wasmeval.call_wait())`, ok, "(-2, '')"),
		py("more calls in flight than the cap", `import _wasmeval, json
ids = [_wasmeval.call_start(json.dumps({'op': 'budget'})) for _ in range(100)]
print(ids.count(-1) > 0)`, ok, "True"),
		py("the helpers still work after the flood", `print(read('inside.txt'))`, ok, insideText),
		py("an unknown emit kind", `import _wasmeval; _wasmeval.emit(999, 'x'); print('done')`, ok, "done"),
		{name: "a 5 MB path", lang: "py", code: `print(read('a' * 5_000_000))`, status: fail, maxOut: 2000,
			want: []string{"read('" + strings.Repeat("a", 64) + "...'): the path is 5000", "must be shorter than 4096 bytes"}},
		py("a bad tool name", `tool.__getattr__('../etc')({})`, fail, "is not a tool name"),
		py("llm with no host", `llm('hi')`, fail, "no LLM is configured"),
		js("read of a number", `await read(123)`, fail, "the path must be a string"),
		js("write of null", `await write(null, null)`, fail, "the path must be a string"),
		js("a bad tool name", `await tool['../etc']({})`, fail, "is not a tool name"),
		js("tool arguments that are an array", `await tool.x([1])`, fail, "must be an object"),
		js("an empty prompt", `await llm('')`, fail, "the prompt is empty"),
		js("an unknown output id", `await output('nope')`, fail, "holds no output with this id"),
		js("a negative depth", `await tree('.', {max_depth: -5})`, fail, "max_depth is -5"),
		js("a zero limit", `await read('inside.txt', {limit: 0})`, fail, "limit is 0"),
	})
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// wasmevalBinary builds the command once per test process.
func wasmevalBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wasmeval-attack-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "wasmeval")
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/wasmeval").CombinedOutput()
		if err != nil {
			binErr = errors.New(string(out))
		}
	})
	if binErr != nil {
		t.Fatalf("go build: %v", binErr)
	}
	return binPath
}

// TestEvalLines: the eval command answers each bad line with an
// invalid_request error that names the line and the problem, including a
// line past the 16 MiB cap, runs the good line after them, and exits 2.
func TestEvalLines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := wasmevalBinary(t)
	var in bytes.Buffer
	for _, tt := range badRequests {
		in.WriteString(tt.line + "\n")
	}
	in.WriteString(`{"cells":[{"language":"js","code":"print(` + strings.Repeat("1", 17<<20) + `)"}]}` + "\n")
	in.WriteString("\x00\xff\xfe\n")
	in.WriteString(`{"cells":[{"language":"js","code":"print(1 + 1)"}]}` + "\n")
	cmd := exec.Command(bin, "eval", "--cwd", newWorld(t).root)
	cmd.Stdin = &in
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("exit: %v, want status 2 (an invalid line); stderr: %s", err, stderr.String())
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	var lines []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("eval wrote a line that is not JSON: %q", sc.Text())
		}
		lines = append(lines, m)
	}
	wants := []string{}
	for _, tt := range badRequests {
		wants = append(wants, tt.want)
	}
	wants = append(wants, "longer than 16 MiB", "not JSON")
	if len(lines) != len(wants)+1 {
		t.Fatalf("%d result lines for %d requests:\n%s", len(lines), len(wants)+1, stdout.String())
	}
	for i, want := range wants {
		e, _ := lines[i]["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if e["code"] != "invalid_request" || !strings.HasPrefix(msg, "line ") || !strings.Contains(msg, want) {
			t.Errorf("line %d: %v, want an invalid_request error naming the line and %q", i+1, lines[i], want)
		}
	}
	last, _ := json.Marshal(lines[len(lines)-1])
	if !strings.Contains(string(last), `"output":"2\n"`) {
		t.Errorf("the good line after the bad ones: %s", last)
	}
}

// TestMCPStdioBatch: `wasmeval mcp` answers a JSON-RPC batch, however long,
// with one JSON-RPC error (-32600, id null, not an array of them): MCP
// removed batches in 2025-06-18, even for clients that name an older
// protocol. The connection goes on.
func TestMCPStdioBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	send, next := startMCPStdio(t, "2025-03-26")
	var batch strings.Builder
	batch.WriteString("[")
	for i := range 10000 {
		if i > 0 {
			batch.WriteString(",")
		}
		fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"language":"js","code":"1"}]}}}`, i+10)
	}
	batch.WriteString("]")
	send(batch.String())
	m := next()
	e, _ := m["error"].(map[string]any)
	if m["id"] != nil || e["code"] != float64(-32600) || !strings.Contains(fmt.Sprint(e["message"]), "batches are not supported") {
		t.Errorf("the batch's answer: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if m := next(); m["id"] != float64(2) || m["result"] == nil {
		t.Errorf("tools/list after the batch: %v", m)
	}
}

// TestMCPStdioDeepJSON: a line of JSON nested too deep (200,000 arrays, and
// a request whose params hide them) is answered on `wasmeval mcp`'s stdio
// with a parse error that says it is nested too deep and gives the limit,
// not that it is "not valid JSON"; the connection goes on.
func TestMCPStdioDeepJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	send, next := startMCPStdio(t, "2025-06-18")
	const n = 200000
	for _, line := range []string{
		strings.Repeat("[", n) + strings.Repeat("]", n),
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"eval","arguments":{"cells":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}}`,
	} {
		send(line)
		m := next()
		e, _ := m["error"].(map[string]any)
		msg := fmt.Sprint(e["message"])
		if e["code"] != float64(-32700) || !strings.Contains(msg, "nested too deep") || !strings.Contains(msg, "at most 10000 deep") || strings.Contains(msg, "not valid JSON") {
			t.Errorf("the answer to %d nested arrays: %v; want a parse error saying the message is nested too deep, at most 10000", n, m)
		}
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if m := next(); m["id"] != float64(2) || m["result"] == nil {
		t.Errorf("tools/list after the deep lines: %v", m)
	}
}

// startMCPStdio starts `wasmeval mcp` on stdio and initializes it with
// protocol version: send writes one line to it, next reads its next answer
// (at most 30 s).
func startMCPStdio(t *testing.T, version string) (send func(string), next func() map[string]any) {
	t.Helper()
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
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	send = func(line string) {
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	next = func() map[string]any {
		done := make(chan bool, 1)
		go func() { done <- sc.Scan() }()
		select {
		case ok := <-done:
			if !ok {
				t.Fatalf("the server ended: %v", sc.Err())
			}
		case <-time.After(testenv.Stretch(30 * time.Second)):
			t.Fatal("no answer in 30 s")
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("an answer that is not one JSON object: %.300s", sc.Text())
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"attack","version":"1"}}}`)
	if m := next(); m["id"] != float64(1) {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return send, next
}
