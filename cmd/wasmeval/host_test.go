package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wasmeval/wasmeval/internal/llmhost"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// testMCPServerEnv makes the test binary an MCP server on stdio (see
// TestMain), for TestEvalToolsMCP.
const testMCPServerEnv = "WASMEVAL_TEST_MCP_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(testMCPServerEnv) == "1" {
		if err := testMCPServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testMCPServer is a small MCP server made with the Go SDK: echo (text),
// add (structured) and fail (isError).
func testMCPServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "wasmeval-test", Version: "1"}, nil)
	type echoIn struct {
		Message string `json:"message"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echoes"}, func(ctx context.Context, r *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
	})
	type addIn struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	type addOut struct {
		Sum float64 `json:"sum"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "adds"}, func(ctx context.Context, r *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
		return nil, addOut{Sum: in.A + in.B}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail-now", Description: "fails"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the disk is full"}}}, nil, nil
	})
	// For TestEvalSecretsStayOnTheHost: a server that dies mid-call, and
	// one whose error repeats its own command line.
	mcp.AddTool(s, &mcp.Tool{Name: "exit-now", Description: "exits"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "show-args", Description: "fails with its command line"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "started as " + strings.Join(os.Args, " ")}}}, nil, nil
	})
	// For TestEvalToolsMCPOversizeAnswer: an answer past the 16 MiB cap.
	mcp.AddTool(s, &mcp.Tool{Name: "huge", Description: "17 MiB of text"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 17<<20)}}}, nil, nil
	})
	return s
}

// evalCells runs one request per code through `wasmeval eval args...` and
// returns each request's result.
func evalCells(t *testing.T, lang string, args []string, codes ...string) ([]*sandbox.Result, string) {
	t.Helper()
	var in bytes.Buffer
	for _, c := range codes {
		b, _ := json.Marshal(map[string]any{"cells": []any{map[string]any{"language": lang, "code": c}}})
		in.Write(b)
		in.WriteByte('\n')
	}
	var stdout, stderr bytes.Buffer
	doMain(context.Background(), append([]string{"eval", "--cwd", t.TempDir()}, args...), &in, &stdout, &stderr)
	var results []*sandbox.Result
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r sandbox.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || len(r.Details.Cells) == 0 {
			t.Fatalf("result line %s: %v (stderr %s)", sc.Bytes(), err, stderr.String())
		}
		results = append(results, &r)
	}
	if len(results) != len(codes) {
		t.Fatalf("%d results for %d requests; stderr: %s", len(results), len(codes), stderr.String())
	}
	return results, stderr.String()
}

// langs are the languages to test in: js, and py when the CPython artifact
// is built (or required).
func langs(t *testing.T) []string {
	if err := pythonAvailable(); err != nil && !testenv.PythonRequired() {
		t.Logf("python skipped: %v", err)
		return []string{"js"}
	}
	return []string{"py", "js"}
}

type check struct {
	name   string
	py, js string
	// want is the cell's output ("PY§JS" when they differ), or "ERR:" and
	// a part of the output of a cell that must fail.
	want string
}

func runChecks(t *testing.T, args []string, checks []check) {
	for _, lang := range langs(t) {
		t.Run(lang, func(t *testing.T) {
			codes := make([]string, len(checks))
			for i, c := range checks {
				codes[i] = c.js
				if lang == "py" {
					codes[i] = c.py
				}
			}
			results, stderr := evalCells(t, lang, args, codes...)
			for i, c := range checks {
				cell := results[i].Details.Cells[0]
				if py, js, ok := strings.Cut(c.want, "§"); ok {
					c.want = js
					if lang == "py" {
						c.want = py
					}
				}
				if want, ok := strings.CutPrefix(c.want, "ERR:"); ok {
					if cell.Status != sandbox.StatusError || !strings.Contains(cell.Output, want) {
						t.Errorf("%s: %s %q, want an error with %q", c.name, cell.Status, cell.Output, want)
					}
					continue
				}
				if cell.Status != sandbox.StatusComplete || strings.TrimRight(cell.Output, "\n") != c.want {
					t.Errorf("%s: %s %q, want %q (stderr %s)", c.name, cell.Status, cell.Output, c.want, stderr)
				}
			}
		})
	}
}

// TestEvalLLM: --llm-url sends llm() to a loopback chat-completions
// endpoint with the key from the host environment, which the guest cannot
// see.
func TestEvalLLM(t *testing.T) {
	const key = "sk-wasmeval-test-4242"
	t.Setenv(llmhost.KeyEnv, key)
	var mu sync.Mutex
	var got []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &req)
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"message":"wrong path or key"}}`)
			return
		}
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		msgs := req["messages"].([]any)
		prompt := msgs[len(msgs)-1].(map[string]any)["content"].(string)
		if prompt == "boom" {
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"Rate limit reached"}}`)
			return
		}
		answer := "you said " + prompt + " to " + req["model"].(string)
		if req["response_format"] != nil {
			answer = `{"n": 7}`
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": answer}}}})
	}))
	defer srv.Close()
	args := []string{"--llm-url", srv.URL + "/v1", "--llm-model", "big-1", "--llm-model-smol", "small-1"}
	runChecks(t, args, []check{
		{"text", `print(llm('hi'))`, `print(await llm('hi'))`, "you said hi to big-1"},
		{"smol", `print(llm('hi', model='smol', system='be brief'))`, `print(await llm('hi', {model: 'smol', system: 'be brief'}))`, "you said hi to small-1"},
		{"schema", `print(llm('n?', schema={'type': 'object'})['n'] + 1)`, `print((await llm('n?', {schema: {type: 'object'}})).n + 1)`, "8"},
		{"HTTP error", `llm('boom')`, `await llm('boom')`, "ERR:llm: the endpoint answered 429 Too Many Requests: Rate limit reached"},
		{"key not in env", `import os; print(env('WASMEVAL_LLM_API_KEY'), any('4242' in v for v in os.environ.values()))`,
			`print(env('WASMEVAL_LLM_API_KEY'), Object.values(process.env).some((v) => v.includes('4242')))`, "None False§null false"},
		{"no tools", `tool.x()`, `await tool.x()`, "ERR:tool.x: no tools are configured (start wasmeval eval with --tools-mcp 'CMD ARGS')"},
	})
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("the endpoint saw no requests")
	}
	if m := got[1]["messages"].([]any)[0].(map[string]any); m["role"] != "system" || m["content"] != "be brief" {
		t.Errorf("the smol request's first message: %v", m)
	}
	rf, _ := json.Marshal(got[2]["response_format"])
	if string(rf) != `{"json_schema":{"name":"answer","schema":{"type":"object"}},"type":"json_schema"}` {
		t.Errorf("response_format %s", rf)
	}
}

// TestEvalToolsMCP: --tools-mcp runs an MCP server (this test binary, as
// an SDK server) and tool.<name>() calls its tools.
func TestEvalToolsMCP(t *testing.T) {
	t.Setenv(testMCPServerEnv, "1") // the server inherits the host environment
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--tools-mcp", `"` + exe + `" -test.run=^$`}
	runChecks(t, args, []check{
		{"text", `print(tool.echo({'message': 'hi'}))`, `print(await tool.echo({message: 'hi'}))`, "Echo: hi"},
		{"keyword arguments", `print(tool.echo(message='kw'))`, `print(await tool.echo({message: 'kw'}))`, "Echo: kw"},
		{"structured", `r = tool.add({'a': 2, 'b': 3}); print(type(r).__name__, r['sum'])`,
			`const r = await tool.add({a: 2, b: 3}); print(typeof r, r.sum)`, "dict 5§object 5"},
		{"'_' finds '-'", `tool.fail_now()`, `await tool.fail_now()`, "ERR:tool.fail_now: the disk is full"},
		{"unknown tool", `tool.nope()`, `await tool.nope()`, `ERR:has no tool "nope"; its tools are: add, echo, exit-now, fail-now, huge, show-args`},
		{"no LLM", `llm('x')`, `await llm('x')`, "ERR:llm: no LLM is configured (start wasmeval eval with --llm-url URL)"},
	})
}

// TestEvalToolsMCPOversizeAnswer: a tool's answer past the cap fails that
// call alone, with an error that names the cap; the calls after it, on
// the same connection to the same server, work.
func TestEvalToolsMCPOversizeAnswer(t *testing.T) {
	t.Setenv(testMCPServerEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--tools-mcp", `"` + exe + `" -test.run=^$`}
	for _, lang := range langs(t) {
		codes := []string{`await tool.huge()`, `print(await tool.echo({message: 'after'}))`, `print(await tool.echo({message: 'again'}))`}
		if lang == "py" {
			codes = []string{`tool.huge()`, `print(tool.echo(message='after'))`, `print(tool.echo(message='again'))`}
		}
		results, _ := evalCells(t, lang, args, codes...)
		for i, want := range []string{"tool.huge: the MCP server's answer was larger than 16 MiB and was discarded", "Echo: after", "Echo: again"} {
			if out := results[i].Details.Cells[0].Output; !strings.Contains(out, want) {
				t.Errorf("%s: cell %d: %.300q; want %q", lang, i, out, want)
			}
		}
	}
}

// everythingVersion is the @modelcontextprotocol/server-everything that
// `make mcp-everything` installs (MCP_EVERYTHING_VERSION in the Makefile).
const everythingVersion = "2026.8.31"

// TestEvalToolsMCPEverything: --tools-mcp against the reference MCP server
// from npm, which `make mcp-everything` installs into the build cache (tests
// never reach the network themselves). In this version its "add" tool is
// named "get-sum".
func TestEvalToolsMCPEverything(t *testing.T) {
	dir := os.Getenv("WASMEVAL_MCP_EVERYTHING")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Skipf("skipped: no cache dir: %v", err)
		}
		if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
			cache = x
		}
		dir = filepath.Join(cache, "wasmeval-build", "mcp-everything-"+everythingVersion)
	}
	script := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Skipf("skipped: %s is not installed (run make mcp-everything): %v", "@modelcontextprotocol/server-everything@"+everythingVersion, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("skipped: no node to run the server: %v", err)
	}
	args := []string{"--tools-mcp", `"` + node + `" "` + script + `" stdio`}
	runChecks(t, args, []check{
		{"echo", `print(tool.echo({'message': 'hello'}))`, `print(await tool.echo({message: 'hello'}))`, "Echo: hello"},
		{"add (get-sum)", `print(tool.get_sum({'a': 2, 'b': 3}))`, `print(await tool.get_sum({a: 2, b: 3}))`, "The sum of 2 and 3 is 5."},
		{"structured", `r = tool.get_structured_content({'location': 'New York'}); print(sorted(r))`,
			`const r = await tool.get_structured_content({location: 'New York'}); print(Object.keys(r).sort().join(','))`,
			"['conditions', 'humidity', 'temperature']§conditions,humidity,temperature"},
		{"isError", `tool.echo({})`, `await tool.echo({})`, "ERR:tool.echo: MCP error -32602: Input validation error"},
	})
}
