package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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
	if len(tools.Tools) != 5 {
		t.Errorf("%d tools, want 5", len(tools.Tools))
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

// TestMCPInspectorCLI lists and calls the tools with the MCP Inspector's
// CLI (a third-party client, from npm), when npx and the package are here.
// It needs the npm cache to hold @modelcontextprotocol/inspector already,
// since tests never reach the network.
func TestMCPInspectorCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("skipped: npx is not installed")
	}
	bin := wasmevalBinary(t)
	ws := t.TempDir()
	inspector := func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		argv := append([]string{"--offline", "-y", "@modelcontextprotocol/inspector", "--cli", bin, "mcp", "--workspace", ws}, args...)
		cmd := exec.CommandContext(ctx, npx, argv...)
		cmd.Env = append(os.Environ(), "npm_config_offline=true", "npm_config_update_notifier=false")
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			if strings.Contains(stderr, "ENOTCACHED") || strings.Contains(stderr, "E404") || strings.Contains(stderr, "ENOTFOUND") {
				t.Skipf("skipped: the Inspector is not in the npm cache (run `npx -y @modelcontextprotocol/inspector --cli --help` once online): %s", firstLine(stderr))
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
	if got := strings.Join(names, ","); !strings.Contains(got, "eval") || !strings.Contains(got, "run_in_code_context") || len(names) != 5 {
		t.Errorf("tools %s", got)
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
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "ERR") || strings.Contains(l, "error") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(s)
}
