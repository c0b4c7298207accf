package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/server"
	"github.com/wasmeval/wasmeval/server/mcpserver"
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
	created := callTool(a, "create_code_context", map[string]any{"language": "javascript"})
	id := text(created)
	callTool(a, "run_in_code_context", map[string]any{"contextId": id, "code": "var q = 1"})
	a2, err := mcpClient(t, ts.URL, tokenA)
	if err != nil {
		t.Fatal(err)
	}
	if res := callTool(a2, "run_in_code_context", map[string]any{"contextId": id, "code": "q + 1"}); res.IsError || text(res) != "2" {
		t.Errorf("same token, other MCP session: isError %v, %q", res.IsError, text(res))
	}
	b, err := mcpClient(t, ts.URL, tokenB)
	if err != nil {
		t.Fatal(err)
	}
	if res := callTool(b, "run_in_code_context", map[string]any{"contextId": id, "code": "q"}); !res.IsError || !strings.Contains(text(res), "no such code context") {
		t.Errorf("other token: isError %v, %q", res.IsError, text(res))
	}
	if res := callTool(b, "delete_code_context", map[string]any{"contextId": id}); !res.IsError {
		t.Error("other token deleted the context")
	}
	if res := callTool(a, "delete_code_context", map[string]any{"contextId": id}); res.IsError {
		t.Errorf("delete: %s", text(res))
	}
}

// TestMCPWaitingEvalHoldsNoSlot: as with the JSON API, MCP evals queued
// behind a session's running cell (eval on the connection's session,
// run_in_code_context on a context) hold no in-flight slot, so they do not
// starve another tenant.
func TestMCPWaitingEvalHoldsNoSlot(t *testing.T) {
	testenv.RequirePython(t)
	ts := newServer(t, server.Config{MaxInFlight: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := mcpClient(t, ts.URL, tokenA)
	if err != nil {
		t.Fatal(err)
	}
	py := func(code string) map[string]any {
		return map[string]any{"cells": []any{map[string]any{"language": "py", "code": code, "timeout": 30}}}
	}
	for _, tc := range []struct {
		name string
		call func(ctx context.Context) // one eval on the busy session
	}{
		{"eval", func(ctx context.Context) {
			a.CallTool(ctx, &mcp.CallToolParams{Name: "eval", Arguments: py("while True: pass")})
		}},
		{"run_in_code_context", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := tc.call
			if call == nil {
				res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "create_code_context", Arguments: map[string]any{"language": "python"}})
				if err != nil || res.IsError {
					t.Fatalf("create_code_context: %v %v", err, res)
				}
				id := res.Content[0].(*mcp.TextContent).Text
				call = func(ctx context.Context) {
					a.CallTool(ctx, &mcp.CallToolParams{Name: "run_in_code_context",
						Arguments: map[string]any{"contextId": id, "code": "while True: pass", "timeoutMs": 30000}})
				}
			}
			inFlightWithin(t, ts, 0, 20*time.Second) // the previous case's cells are gone
			cctx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			defer func() { stop(); wg.Wait() }()
			wg.Add(1)
			go func() { defer wg.Done(); call(cctx) }()
			inFlightWithin(t, ts, 1, 10*time.Second)
			for range 3 {
				wg.Add(1)
				go func() { defer wg.Done(); call(cctx) }()
			}
			waitingWithin(t, ts, 3, 10*time.Second)
			r := do(t, "GET", ts.URL+"/metrics", tokenB, nil)
			if !strings.Contains(string(r.body), "wasmeval_evals_in_flight 1\n") {
				t.Error("MCP evals waiting for their session hold in-flight slots")
			}
			wantStatus(t, do(t, "POST", ts.URL+"/v1/run", tokenB, `{"language":"py","code":"1"}`), http.StatusOK)
		})
	}
}

// TestMCPBatchRefused: a JSON-RPC batch on /mcp gets one JSON-RPC error
// (-32600, no id) with HTTP 400, whatever protocol version the client
// names: MCP removed batches in 2025-06-18, and the SDK would otherwise
// serve an older client's batch of any length in parallel.
func TestMCPBatchRefused(t *testing.T) {
	ts := newServer(t, server.Config{})
	var batch strings.Builder
	batch.WriteString(" \n[")
	for i := range 50 {
		if i > 0 {
			batch.WriteString(",")
		}
		fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`, i)
	}
	batch.WriteString("]")
	for _, version := range []string{"", "2025-03-26", "2025-06-18"} {
		var hdr []string
		if version != "" {
			hdr = []string{"MCP-Protocol-Version", version}
		}
		hdr = append(hdr, "Accept", "application/json, text/event-stream", "Content-Type", "application/json")
		r := do(t, "POST", ts.URL+"/mcp", tokenA, batch.String(), hdr...)
		wantStatus(t, r, http.StatusBadRequest)
		var e struct {
			JSONRPC string
			ID      any `json:"id"`
			Error   struct {
				Code    int
				Message string
			}
		}
		r.json(t, &e)
		if e.JSONRPC != "2.0" || e.ID != nil || e.Error.Code != -32600 || !strings.Contains(e.Error.Message, "batches are not supported") {
			t.Errorf("version %q: %s", version, r.body)
		}
	}
	// One message still works after the refusals.
	if _, err := mcpClient(t, ts.URL, tokenA); err != nil {
		t.Fatal(err)
	}
}

// TestMCPSessionsPerToken: one token holds at most
// mcpserver.MaxSessionsPerOwner MCP sessions at once (each lives until
// deleted or idle for 30 minutes); past it, opening one is refused with
// 429 and a JSON-RPC error, another token is not affected, and ending one
// makes room.
func TestMCPSessionsPerToken(t *testing.T) {
	ts := newServer(t, server.Config{})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	hdr := []string{"Accept", "application/json, text/event-stream", "Content-Type", "application/json"}
	var ids []string
	for i := range mcpserver.MaxSessionsPerOwner {
		r := do(t, "POST", ts.URL+"/mcp", tokenA, init, hdr...)
		wantStatus(t, r, http.StatusOK)
		id := r.header.Get("Mcp-Session-Id")
		if id == "" {
			t.Fatalf("session %d: no Mcp-Session-Id", i)
		}
		ids = append(ids, id)
	}
	r := do(t, "POST", ts.URL+"/mcp", tokenA, init, hdr...)
	wantStatus(t, r, http.StatusTooManyRequests)
	if !strings.Contains(string(r.body), "MCP sessions, the most it may") {
		t.Errorf("the refusal: %s", r.body)
	}
	wantStatus(t, do(t, "POST", ts.URL+"/mcp", tokenB, init, hdr...), http.StatusOK)
	wantStatus(t, do(t, "DELETE", ts.URL+"/mcp", tokenA, nil, "Mcp-Session-Id", ids[0], "MCP-Protocol-Version", "2025-06-18"), http.StatusNoContent)
	wantStatus(t, do(t, "POST", ts.URL+"/mcp", tokenA, init, hdr...), http.StatusOK)
}

// TestCreateContextPythonBackendRefused: on a server whose operator does
// not let sessions choose their Python backend, create_code_context's
// python is refused as POST /v1/sessions' is, naming python and
// --python-backend-choice, over /mcp and the profile endpoint alike; an
// unknown backend is refused naming the field.
func TestCreateContextPythonBackendRefused(t *testing.T) {
	ts := newServer(t, server.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcpClient(t, ts.URL, tokenA)
	if err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]string{
		`{"language": "python", "python": "jupyter"}`: "--python-backend-choice",
		`{"language": "python", "python": "cpython"}`: `"cpython" is not a Python backend`,
	} {
		var m map[string]any
		json.Unmarshal([]byte(args), &m)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_code_context", Arguments: m})
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		if !res.IsError || !strings.Contains(text.String(), "code_interpreter: python:") || !strings.Contains(text.String(), want) {
			t.Errorf("MCP create_code_context %s: isError %v, %q; want a refusal naming python and holding %q", args, res.IsError, text.String(), want)
		}
		status, raw := postJSON(t, ts.URL+"/v1/profiles/create_code_context", tokenA, args)
		body := strings.ReplaceAll(string(raw), `\"`, `"`)
		if status != http.StatusBadRequest || !strings.Contains(body, "code_interpreter: python:") || !strings.Contains(body, want) {
			t.Errorf("POST /v1/profiles/create_code_context %s: %d %s; want 400 naming python and holding %q", args, status, body, want)
		}
	}
}
