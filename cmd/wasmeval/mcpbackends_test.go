package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/internal/llmhost"
)

// TestMCPBackends: wasmeval mcp takes --tools-mcp and --llm-url as eval and
// serve do: a client without sampling gets llm() from the endpoint and
// tool.<name>() from the tools server.
func TestMCPBackends(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	var hits atomic.Int32
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": "from the endpoint"}}}})
	}))
	defer llm.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := wasmevalBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(bin, "mcp", "--workspace", t.TempDir(), "--llm-url", llm.URL, "--tools-mcp", `"`+exe+`" -test.run=^$`)
	cmd.Env = append(os.Environ(), testMCPServerEnv+"=1", llmhost.KeyEnv+"=test-key")
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "eval", Arguments: map[string]any{"cells": []any{
		map[string]any{"language": "py", "code": "print(llm('hi'))\nprint(tool.echo(message='there'))"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	got := mcpText(res)
	for _, want := range []string{"from the endpoint", "Echo: there"} {
		if !strings.Contains(got, want) {
			t.Errorf("eval over wasmeval mcp with backends: %q lacks %q", got, want)
		}
	}
	if hits.Load() == 0 {
		t.Error("the --llm-url endpoint saw no request")
	}
}

// TestMCPBackendsBadURL: a bad --llm-url stops mcp with status 2 and a
// line naming mcp.
func TestMCPBackendsBadURL(t *testing.T) {
	withFakeSession(t)
	code, _, stderr := run(t, context.Background(), "", "mcp", "--workspace", t.TempDir(), "--llm-url", "ftp://x")
	if code != exitInvalid || !strings.Contains(stderr, "wasmeval mcp: --llm-url") {
		t.Errorf("exit %d, stderr %q: want 2 and a line naming mcp's --llm-url", code, stderr)
	}
}
