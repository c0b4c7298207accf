package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/server"
)

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func mcpClient(t *testing.T, url, token string) (*mcp.ClientSession, error) {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func TestMCPOverHTTP(t *testing.T) {
	ts := newServer(t, server.Config{})
	ctx := context.Background()

	// Without a token: 401, before MCP sees the request.
	r := do(t, "POST", ts.URL+"/mcp", "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{}})
	wantStatus(t, r, http.StatusUnauthorized)
	if _, err := mcpClient(t, ts.URL, "wrong"); err == nil {
		t.Error("connected with a wrong token")
	}

	a, err := mcpClient(t, ts.URL, tokenA)
	if err != nil {
		t.Fatal(err)
	}
	callTool := func(cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	text := func(res *mcp.CallToolResult) string {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	js := func(code string) map[string]any {
		return map[string]any{"cells": []any{map[string]any{"language": "js", "code": code}}}
	}
	callTool(a, "eval", js("var z = 2"))
	if res := callTool(a, "eval", js("z + 40")); res.IsError || text(res) != "42" {
		t.Errorf("eval: isError %v, %q", res.IsError, text(res))
	}

	// A code context belongs to the token: another MCP session of token A
	// reaches it, token B does not.
	created := callTool(a, "create_code_context", map[string]any{})
	id := text(created)
	callTool(a, "run_in_code_context", map[string]any{"id": id, "language": "js", "code": "var q = 1"})
	a2, err := mcpClient(t, ts.URL, tokenA)
	if err != nil {
		t.Fatal(err)
	}
	if res := callTool(a2, "run_in_code_context", map[string]any{"id": id, "language": "js", "code": "q + 1"}); res.IsError || text(res) != "2" {
		t.Errorf("same token, other MCP session: isError %v, %q", res.IsError, text(res))
	}
	b, err := mcpClient(t, ts.URL, tokenB)
	if err != nil {
		t.Fatal(err)
	}
	if res := callTool(b, "run_in_code_context", map[string]any{"id": id, "language": "js", "code": "q"}); !res.IsError || !strings.Contains(text(res), "no such code context") {
		t.Errorf("other token: isError %v, %q", res.IsError, text(res))
	}
	if res := callTool(b, "delete_code_context", map[string]any{"id": id}); !res.IsError {
		t.Error("other token deleted the context")
	}
	if res := callTool(a, "delete_code_context", map[string]any{"id": id}); res.IsError {
		t.Errorf("delete: %s", text(res))
	}
}
