package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

// TestServeNestedEval: a sub-agent that runs code in its parent's session
// over HTTP (POST /v1/sessions/{id}/eval) while the parent's cell waits in
// agent() gets its answer at once, inside the parent's state, although the
// parent's eval holds the session's turn and the server's only in-flight
// slot.
func TestServeNestedEval(t *testing.T) {
	var url, id atomic.Value
	agent := func(ctx context.Context, r hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
		lang, code, _ := strings.Cut(r.Prompt, ":")
		body, _ := json.Marshal(sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: code}}})
		// The sub-agent's own request, as from another process: not under
		// the agent call's context.
		rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		hr, _ := http.NewRequestWithContext(rctx, "POST", url.Load().(string)+"/v1/sessions/"+id.Load().(string)+"/eval", bytes.NewReader(body))
		hr.Header.Set("Authorization", "Bearer "+tokenA)
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			return hostcalls.AgentResponse{}, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return hostcalls.AgentResponse{}, fmt.Errorf("sub-agent eval: %d %s", resp.StatusCode, b)
		}
		var res sandbox.Result
		if err := json.Unmarshal(b, &res); err != nil {
			return hostcalls.AgentResponse{}, err
		}
		return hostcalls.AgentResponse{Text: res.Details.Cells[0].Output}, nil
	}
	ts := newServer(t, server.Config{MaxInFlight: 1, Host: hostcalls.HostFuncs{AgentFunc: agent}})
	url.Store(ts.URL)
	id.Store(ts.create(t, tokenA))
	for _, tt := range []struct{ lang, code, want string }{
		{"js", `const r = await agent("js:var fromSub = 6 * 7; print('sub')"); print(fromSub, r.trim())`, "42 sub\n"},
		{"py", `r = agent("py:from_sub = 6 * 7\nprint('sub')")` + "\nprint(from_sub, r.strip())", "42 sub\n"},
	} {
		if tt.lang == "py" {
			testenv.RequirePython(t)
		}
		body := map[string]any{"cells": []map[string]any{{"language": tt.lang, "code": tt.code}}}
		r := do(t, "POST", ts.URL+"/v1/sessions/"+id.Load().(string)+"/eval", tokenA, body)
		if r.status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", tt.lang, r.status, r.body)
		}
		var res sandbox.Result
		r.json(t, &res)
		if c := res.Details.Cells[0]; c.Status != sandbox.StatusComplete || c.Output != tt.want {
			t.Fatalf("%s: %s %q, want %q", tt.lang, c.Status, c.Output, tt.want)
		}
	}
}

// TestMCPNestedEval: the same through MCP: a sub-agent's
// run_in_code_context on its parent's code context, while the parent's
// cell waits in agent(), runs inside it at once instead of waiting for the
// context's turn.
func TestMCPNestedEval(t *testing.T) {
	var sub atomic.Pointer[mcp.ClientSession]
	var id atomic.Value
	agent := func(ctx context.Context, r hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
		rctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := sub.Load().CallTool(rctx, &mcp.CallToolParams{Name: "run_in_code_context",
			Arguments: map[string]any{"contextId": id.Load().(string), "code": r.Prompt}})
		if err != nil {
			return hostcalls.AgentResponse{}, err
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return hostcalls.AgentResponse{Text: b.String()}, nil
	}
	ts := newServer(t, server.Config{Host: hostcalls.HostFuncs{AgentFunc: agent}})
	parent, err := mcpClient(t, ts.URL, tokenA)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcpClient(t, ts.URL, tokenA)
	if err != nil {
		t.Fatal(err)
	}
	sub.Store(cs)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	created, err := parent.CallTool(ctx, &mcp.CallToolParams{Name: "create_code_context", Arguments: map[string]any{"language": "javascript"}})
	if err != nil {
		t.Fatal(err)
	}
	id.Store(created.Content[0].(*mcp.TextContent).Text)
	res, err := parent.CallTool(ctx, &mcp.CallToolParams{Name: "run_in_code_context", Arguments: map[string]any{
		"contextId": id.Load().(string),
		"code":      `const r = await agent("var fromSub = 6 * 7; console.log('sub')"); console.log(fromSub, r.trim())`}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError || !strings.Contains(b.String(), "42 sub") {
		t.Fatalf("isError %v: %s", res.IsError, b.String())
	}
}

// TestServeNestedEvalsCapped: evals nested in a waiting cell take no turn,
// yet they count against the session's cap on waiting evals: a flood of
// them gets 429s, not an unbounded queue.
func TestServeNestedEvalsCapped(t *testing.T) {
	var url, id atomic.Value
	var ok, busy atomic.Int32
	agent := func(ctx context.Context, r hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
		body, _ := json.Marshal(sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "const t = Date.now(); while (Date.now() - t < 300) {}"}}})
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				hr, _ := http.NewRequestWithContext(ctx, "POST", url.Load().(string)+"/v1/sessions/"+id.Load().(string)+"/eval", bytes.NewReader(body))
				hr.Header.Set("Authorization", "Bearer "+tokenA)
				resp, err := http.DefaultClient.Do(hr)
				if err != nil {
					return
				}
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusOK:
					ok.Add(1)
				case http.StatusTooManyRequests:
					busy.Add(1)
				}
			}()
		}
		wg.Wait()
		return hostcalls.AgentResponse{Text: "done"}, nil
	}
	ts := newServer(t, server.Config{Host: hostcalls.HostFuncs{AgentFunc: agent}})
	url.Store(ts.URL)
	id.Store(ts.create(t, tokenA))
	body := map[string]any{"cells": []map[string]any{{"language": "js", "code": `await agent("go")`}}}
	if r := do(t, "POST", ts.URL+"/v1/sessions/"+id.Load().(string)+"/eval", tokenA, body); r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if ok.Load() == 0 || busy.Load() == 0 || ok.Load()+busy.Load() != 16 {
		t.Fatalf("%d nested evals ran, %d got 429; want some of each, 16 in all", ok.Load(), busy.Load())
	}
}
