package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binOut  []byte
)

// wasmevalBinary builds the command once per test process.
func wasmevalBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wasmeval-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "wasmeval")
		binOut, binErr = exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
	})
	if binErr != nil {
		t.Fatalf("go build: %v\n%s", binErr, binOut)
	}
	return binPath
}

func mcpText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPStdio drives a real `wasmeval mcp` process with the SDK's client.
func TestMCPStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := wasmevalBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(bin, "mcp", "--workspace", t.TempDir())
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Name; got != "wasmeval" {
		t.Errorf("server name %q", got)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 7 { // eval, python, evaluate_python and code_interpreter's four
		t.Errorf("%d tools, want 7", len(tools.Tools))
	}
	callTool := func(name string, args any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	js := func(code string) map[string]any {
		return map[string]any{"cells": []any{map[string]any{"language": "js", "code": code}}}
	}
	callTool("eval", js("var k = 6"))
	if res := callTool("eval", js("console.log(k * 7)")); res.IsError || mcpText(res) != "42" {
		t.Errorf("eval: isError %v, %q", res.IsError, mcpText(res))
	}
	if res := callTool("eval", map[string]any{"cells": []any{}}); !res.IsError || !strings.Contains(mcpText(res), "cells") {
		t.Errorf("bad input: isError %v, %q", res.IsError, mcpText(res))
	}
	res := callTool("run_code", map[string]any{"language": "py", "code": "print(sum(range(10)))"})
	var out struct {
		Outputs  []struct{ Type, Text string }
		ExitCode int
		Error    string
	}
	data, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(data, &out)
	if res.IsError && strings.Contains(mcpText(res), "not built") && !testenv.PythonRequired() {
		t.Logf("python part skipped: %s", mcpText(res))
		return
	}
	if res.IsError || out.ExitCode != 0 || len(out.Outputs) != 1 || out.Outputs[0].Text != "45\n" {
		t.Errorf("run_code py: isError %v, %s", res.IsError, data)
	}
}

// inspectorVersion is the @modelcontextprotocol/inspector that make
// mcp-inspector installs; keep it in step with MCP_INSPECTOR_VERSION there.
const inspectorVersion = "0.15.0"

// inspectorCLI returns node and the Inspector's CLI, or skips.
func inspectorCLI(t *testing.T) (node, cli string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("skipped: node is not installed (make mcp-inspector installs it)")
	}
	cli = filepath.Join(testenv.BuildCache("mcp-inspector-"+inspectorVersion), "node_modules", "@modelcontextprotocol", "inspector", "cli", "build", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		t.Skipf("skipped: @modelcontextprotocol/inspector@%s is not installed (run make mcp-inspector): %v", inspectorVersion, err)
	}
	return node, cli
}

// inspectorCall is the Inspector CLI's answer to tools/call.
type inspectorCall struct {
	Content []struct{ Type, Text string }
	// StructuredContent is checked by the Inspector's client against the
	// tool's output schema before it prints it.
	StructuredContent json.RawMessage
	IsError           bool
}

// runInspector runs the Inspector CLI on target (a command and its
// arguments) with args, and returns what it printed.
func runInspector(t *testing.T, node, cli string, env []string, target []string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	argv := append(append([]string{cli, "--cli"}, target...), args...)
	cmd := exec.CommandContext(ctx, node, argv...)
	cmd.Env = append(append(os.Environ(), "npm_config_offline=true", "npm_config_update_notifier=false"), env...)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("inspector %v: %v\n%s\n%s", args, err, out, stderr)
	}
	return out
}

// TestMCPInspectorCLI lists and calls every tool of every profile with the
// MCP Inspector's CLI (a third-party client, from npm, whose client checks
// structured results against the output schemas), installed by make
// mcp-inspector (tests never reach the network): over stdio to `wasmeval
// mcp`, and the code contexts' whole life over streamable HTTP to `wasmeval
// serve` (each CLI run is a new connection; a context outlives it there).
func TestMCPInspectorCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	node, cli := inspectorCLI(t)
	bin := wasmevalBinary(t)
	ws := t.TempDir()
	stdio := []string{bin, "mcp", "--workspace", ws}
	inspector := func(args ...string) []byte {
		t.Helper()
		return runInspector(t, node, cli, nil, stdio, args...)
	}
	call := func(tool string, args ...string) inspectorCall {
		t.Helper()
		argv := []string{"--method", "tools/call", "--tool-name", tool}
		for _, a := range args {
			argv = append(argv, "--tool-arg", a)
		}
		out := inspector(argv...)
		return decodeCall(t, tool, out)
	}
	text := func(c inspectorCall) string {
		var b strings.Builder
		for _, x := range c.Content {
			b.WriteString(x.Text)
		}
		return b.String()
	}

	var list struct {
		Tools []struct {
			Name         string
			InputSchema  map[string]any
			OutputSchema map[string]any
		}
	}
	out := inspector("--method", "tools/list")
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("tools/list: %v\n%s", err, out)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil || tool.OutputSchema == nil {
			t.Errorf("%s lists no input or output schema", tool.Name)
		}
	}
	slices.Sort(names)
	want := []string{"create_code_context", "delete_code_context", "eval", "evaluate_python", "python", "run_code", "run_in_code_context"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v (every tool of every profile)", names, want)
	}

	// eval.
	if c := call("eval", `cells=[{"language":"js","code":"console.log(6*7)"}]`); c.IsError || text(c) != "42" {
		t.Errorf("eval: %+v", c)
	}
	// python: its text, and the seed's result as the structured content.
	c := call("python", `cells=[{"code":"x = 6\nprint(x * 7)","title":"t"}]`, "timeout=10")
	var pr struct {
		Details struct {
			Cells          []struct{ Output, Status string }
			StdinRequested bool `json:"stdinRequested"`
		}
	}
	if json.Unmarshal(c.StructuredContent, &pr) != nil || c.IsError || text(c) != "42" || len(pr.Details.Cells) != 1 || pr.Details.Cells[0].Status != "complete" {
		t.Errorf("python: %+v", c)
	}
	if c := call("python", `cells=[{"code":"input()"}]`); !c.IsError || !strings.Contains(string(c.StructuredContent), `"stdinRequested":true`) {
		t.Errorf("python with input(): %+v", c)
	}
	// evaluate_python: its text content is the result's JSON.
	c = call("evaluate_python", "code=print(6)\n6*7")
	var ep struct {
		ValueRepr *string `json:"value_repr"`
		Stdout    string
	}
	if c.IsError || json.Unmarshal([]byte(text(c)), &ep) != nil || ep.ValueRepr == nil || *ep.ValueRepr != "42" || ep.Stdout != "6\n" {
		t.Errorf("evaluate_python: %+v", c)
	}
	// run_code, with the seed's field names.
	c = call("run_code", "language=python", "code=print(6*7)\n{'a': [1]}", "timeoutMs=5000")
	if c.IsError || !strings.Contains(string(c.StructuredContent), `{"type":"result","value":{"a":[1]}}`) || !strings.HasPrefix(text(c), "42") {
		t.Errorf("run_code: %+v %s", c, c.StructuredContent)
	}
	// The context tools over stdio: a context lives as long as its
	// connection, so the next CLI run no longer finds it.
	c = call("create_code_context", "language=python")
	var created struct{ ContextID string }
	if c.IsError || json.Unmarshal(c.StructuredContent, &created) != nil || created.ContextID == "" {
		t.Fatalf("create_code_context: %+v", c)
	}
	for _, tool := range []string{"run_in_code_context", "delete_code_context"} {
		args := []string{"contextId=" + created.ContextID}
		if tool == "run_in_code_context" {
			args = append(args, "code=1")
		}
		if c := call(tool, args...); !c.IsError || !strings.Contains(text(c), "no such code context") {
			t.Errorf("%s in another connection: %+v", tool, c)
		}
	}

	// The contexts' whole life over HTTP, through a stdio bridge (the
	// Inspector's CLI sends no bearer token of its own).
	const token = "inspector-token"
	t.Setenv("WASMEVAL_TOKENS", token)
	addr := testenv.StartServe(t, doMain, "--workspace", t.TempDir()).Addr
	bridge := []string{os.Args[0], "-test.run=^$"}
	env := []string{"WASMEVAL_TEST_MCP_BRIDGE=http://" + addr + "/mcp", "WASMEVAL_TEST_MCP_TOKEN=" + token}
	httpCall := func(tool string, args ...string) inspectorCall {
		t.Helper()
		argv := []string{"--method", "tools/call", "--tool-name", tool}
		for _, a := range args {
			argv = append(argv, "--tool-arg", a)
		}
		return decodeCall(t, tool, runInspector(t, node, cli, env, bridge, argv...))
	}
	c = httpCall("create_code_context", "language=python", "cwd=work")
	if c.IsError || json.Unmarshal(c.StructuredContent, &created) != nil || created.ContextID == "" {
		t.Fatalf("create_code_context over HTTP: %+v", c)
	}
	id := "contextId=" + created.ContextID
	if c := httpCall("run_in_code_context", id, "code=x = 20"); c.IsError {
		t.Errorf("run_in_code_context: %+v", c)
	}
	if c := httpCall("run_in_code_context", id, "code=import os\nprint(os.path.basename(os.getcwd()))\nx + 1", "timeoutMs=5000"); c.IsError ||
		!strings.Contains(string(c.StructuredContent), `{"type":"stdout","text":"work\n"},{"type":"result","value":21}`) {
		t.Errorf("run_in_code_context: %+v %s", c, c.StructuredContent)
	}
	if c := httpCall("delete_code_context", id); c.IsError || strings.TrimSpace(string(c.StructuredContent)) != `{"ok":true}` {
		t.Errorf("delete_code_context: %+v %s", c, c.StructuredContent)
	}
	if c := httpCall("run_in_code_context", id, "code=x"); !c.IsError || !strings.Contains(text(c), "no such code context") {
		t.Errorf("run_in_code_context after delete: %+v", c)
	}
}

// decodeCall reads the Inspector's answer to a tools/call, its structured
// content compacted.
func decodeCall(t *testing.T, tool string, out []byte) inspectorCall {
	t.Helper()
	var c inspectorCall
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatalf("tools/call %s: %v\n%s", tool, err, out)
	}
	var b bytes.Buffer
	if len(c.StructuredContent) > 0 && json.Compact(&b, c.StructuredContent) == nil {
		c.StructuredContent = b.Bytes()
	}
	return c
}

func init() {
	// The test binary doubles as a stdio-to-HTTP bridge for the Inspector's
	// CLI (TestMCPInspectorCLI).
	if url := os.Getenv("WASMEVAL_TEST_MCP_BRIDGE"); url != "" {
		os.Exit(mcpBridge(url, os.Getenv("WASMEVAL_TEST_MCP_TOKEN"), os.Stdin, os.Stdout))
	}
}

// mcpBridge forwards the JSON-RPC messages on in, one a line, to the
// streamable HTTP endpoint url with a bearer token, and writes the
// messages of each answer (JSON or an SSE stream) to out, one a line.
func mcpBridge(url, token string, in io.Reader, out io.Writer) int {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var session, version string
	write := func(msg []byte) {
		var b bytes.Buffer
		if json.Compact(&b, msg) == nil {
			if v := regexp.MustCompile(`"protocolVersion":"([^"]+)"`).FindSubmatch(b.Bytes()); v != nil && version == "" {
				version = string(v[1])
			}
			b.WriteByte('\n')
			out.Write(b.Bytes())
		}
	}
	defer func() {
		if session != "" {
			req, _ := http.NewRequest("DELETE", url, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Mcp-Session-Id", session)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}()
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		req, _ := http.NewRequest("POST", url, bytes.NewReader(line))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		if version != "" {
			req.Header.Set("Mcp-Protocol-Version", version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bridge:", err)
			return 1
		}
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
			session = s
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			rd := bufio.NewScanner(resp.Body)
			rd.Buffer(make([]byte, 1<<20), 16<<20)
			var data []byte
			for rd.Scan() {
				l := rd.Text()
				switch {
				case strings.HasPrefix(l, "data:"):
					data = append(data, strings.TrimPrefix(strings.TrimPrefix(l, "data:"), " ")...)
				case l == "" && len(data) > 0:
					write(data)
					data = nil
				}
			}
			if len(data) > 0 {
				write(data)
			}
		} else if body, _ := io.ReadAll(resp.Body); len(bytes.TrimSpace(body)) > 0 {
			write(body)
		}
		resp.Body.Close()
	}
	return 0
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "ERR") || strings.Contains(l, "error") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(s)
}
