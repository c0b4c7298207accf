package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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
	if len(tools.Tools) != 6 { // eval, evaluate_python and code_interpreter's four
		t.Errorf("%d tools, want 6", len(tools.Tools))
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
		Error    *struct{ Name, Value string }
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

// TestMCPInspectorCLI lists and calls the tools with the MCP Inspector's
// CLI (a third-party client, from npm), installed by make mcp-inspector
// (tests never reach the network).
func TestMCPInspectorCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("skipped: node is not installed (make mcp-inspector installs it)")
	}
	cli := filepath.Join(testenv.BuildCache("mcp-inspector-"+inspectorVersion), "node_modules", "@modelcontextprotocol", "inspector", "cli", "build", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		t.Skipf("skipped: @modelcontextprotocol/inspector@%s is not installed (run make mcp-inspector): %v", inspectorVersion, err)
	}
	bin := wasmevalBinary(t)
	ws := t.TempDir()
	inspector := func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		argv := append([]string{cli, "--cli", bin, "mcp", "--workspace", ws}, args...)
		cmd := exec.CommandContext(ctx, node, argv...)
		cmd.Env = append(os.Environ(), "npm_config_offline=true", "npm_config_update_notifier=false")
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

	var list struct {
		Tools []struct {
			Name        string
			InputSchema map[string]any
		}
	}
	out := inspector("--method", "tools/list")
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("tools/list: %v\n%s", err, out)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"eval", "run_code", "create_code_context", "run_in_code_context", "delete_code_context", "evaluate_python"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}

	var call struct {
		Content []struct{ Type, Text string }
		IsError bool
	}
	out = inspector("--method", "tools/call", "--tool-name", "run_code", "--tool-arg", "language=js", "--tool-arg", "code=console.log(6*7)")
	if err := json.Unmarshal(out, &call); err != nil {
		t.Fatalf("tools/call: %v\n%s", err, out)
	}
	if call.IsError || len(call.Content) != 1 || call.Content[0].Text != "42" {
		t.Errorf("run_code: %s", out)
	}
	// The evaluate_python profile's tool: its text content is the result's JSON.
	out = inspector("--method", "tools/call", "--tool-name", "evaluate_python", "--tool-arg", "code=print(6)\n6*7")
	call.Content, call.IsError = nil, false
	if err := json.Unmarshal(out, &call); err != nil {
		t.Fatalf("tools/call: %v\n%s", err, out)
	}
	var ep struct {
		ValueRepr *string `json:"value_repr"`
		Stdout    string
	}
	if call.IsError || len(call.Content) != 1 || json.Unmarshal([]byte(call.Content[0].Text), &ep) != nil || ep.ValueRepr == nil || *ep.ValueRepr != "42" || ep.Stdout != "6\n" {
		t.Errorf("evaluate_python: %s", out)
	}
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "ERR") || strings.Contains(l, "error") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(s)
}
