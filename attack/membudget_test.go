package attack_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

// TestServeMemoryBudgetRefusesRunningCells: serve's --memory-budget holds
// for running cells, on every face. Under a 192 MiB budget, with sessions
// capped at 128 MiB, a JavaScript cell that runs (and so reserves its
// session's 128 MiB) leaves no room for another session's eval: after
// waiting for room that eval is refused, with HTTP 503, Retry-After and
// the reason on the JSON API, and as a tool error with the same text on
// /mcp, while the running cell is untouched. Once it ends, the refused
// session evaluates as usual.
func TestServeMemoryBudgetRefusesRunningCells(t *testing.T) {
	hs := budgetServer(t)
	url := hs.URL

	do := func(method, path, body string) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+serveToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	create := func() string {
		t.Helper()
		code, _, body := do("POST", "/v1/sessions", "")
		var v struct{ ID string }
		if err := json.Unmarshal([]byte(body), &v); code != 201 || err != nil {
			t.Fatalf("create: %d %s", code, body)
		}
		return v.ID
	}
	evalJS := func(id, code string) (int, http.Header, string) {
		b, _ := json.Marshal(map[string]any{"cells": []any{map[string]any{"language": "js", "code": code, "timeout": 60}}})
		return do("POST", "/v1/sessions/"+id+"/eval", string(b))
	}
	holder, refused := create(), create()
	held := make(chan string, 1)
	go func() {
		code, _, body := evalJS(holder, "await new Promise(r => setTimeout(r, 14000)); print('held')")
		held <- http.StatusText(code) + " " + body
	}()
	time.Sleep(time.Second) // the holder runs

	tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearerTransport{serveToken, http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "attack", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	mcpText := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "eval", Arguments: map[string]any{
			"cells": []any{map[string]any{"language": "js", "code": "print(1)"}}}})
		switch {
		case err != nil:
			mcpText <- "call failed: " + err.Error()
		case !res.IsError:
			mcpText <- "not an error: " + res.Content[0].(*mcp.TextContent).Text
		default:
			mcpText <- res.Content[0].(*mcp.TextContent).Text
		}
	}()

	const want = "the server's memory budget of 192 MiB is in use by running cells; try again later"
	code, hdr, body := evalJS(refused, "print(1)")
	if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" || !strings.Contains(body, want) || !strings.Contains(body, `"memory_budget"`) {
		t.Errorf("an eval with no room in the budget: %d (Retry-After %q) %s; want 503 with Retry-After and %q", code, hdr.Get("Retry-After"), body, want)
	}
	if text := <-mcpText; !strings.Contains(text, want) || strings.Contains(text, "host error") {
		t.Errorf("the MCP eval with no room in the budget: %q; want a tool error saying %q", text, want)
	}
	if got := <-held; !strings.HasPrefix(got, "OK ") || !strings.Contains(got, "held") {
		t.Errorf("the running cell: %s", got)
	}
	if code, _, body := evalJS(refused, "print(1 + 1)"); code != 200 || !strings.Contains(body, "2") {
		t.Errorf("the refused session afterwards: %d %s", code, body)
	}
}

// budgetServer is serve's JSON API and /mcp on loopback over a manager
// with a 192 MiB memory budget and the attack suite's session caps.
func budgetServer(t *testing.T) *httptest.Server {
	t.Helper()
	sb := sharedSandbox(t)
	mgr, err := sandbox.NewManager(sb, sandbox.ManagerOptions{Workspace: t.TempDir(), MemoryBudgetBytes: 192 << 20,
		Session: sandbox.SessionOptions{MemoryLimitBytes: memoryCap, DiskQuotaBytes: diskCap, DiskQuotaFiles: diskFiles}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mgr.Close(context.Background()) })
	srv, err := server.New(server.Config{Sandbox: sb, Manager: mgr, Tokens: []string{serveToken}, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs
}
