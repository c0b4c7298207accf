package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// TestClusterMCPContextElsewhere: an MCP code context lives on the node
// whose MCP session made it (its session's lease); using it through
// another node (another MCP session there, or the JSON API's
// /v1/profiles/run_in_code_context) runs the code on the holder, in the
// context's state, with the context's language; another token's call
// through that node is still refused, and a delete through that node
// deletes it everywhere.
func TestClusterMCPContextElsewhere(t *testing.T) {
	testenv.RequirePython(t)
	pg := testenv.StartPostgres(t)
	a := startNode(t, "node-a", pg.URL, 20*time.Second)
	b := startNode(t, "node-b", pg.URL, 20*time.Second)
	ctx := context.Background()
	call := func(cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var sb strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				sb.WriteString(tc.Text)
			}
		}
		return sb.String(), res.IsError
	}
	onA, err := mcpClient(t, a.URL, tokenA)
	if err != nil {
		t.Fatal(err)
	}
	// A JavaScript context: its language must come along too (a Python
	// cell would fail on this code).
	id, isErr := call(onA, "create_code_context", map[string]any{"language": "javascript"})
	if isErr {
		t.Fatal(id)
	}
	id = strings.TrimSpace(id)
	if out, isErr := call(onA, "run_in_code_context", map[string]any{"contextId": id, "code": "let n = 6 * 7; console.log(n)"}); isErr || !strings.Contains(out, "42") {
		t.Fatalf("through A: %q (error %v)", out, isErr)
	}
	onB, err := mcpClient(t, b.URL, tokenA)
	if err != nil {
		t.Fatal(err)
	}
	if out, isErr := call(onB, "run_in_code_context", map[string]any{"contextId": id, "code": "n += 1; console.log(n)"}); isErr || !strings.Contains(out, "43") {
		t.Fatalf("A's context through B's MCP: %q (error %v); want 43, run on A in the context's state", out, isErr)
	}
	// A failing run through B is the tool's failure, not a host error.
	if out, isErr := call(onB, "run_in_code_context", map[string]any{"contextId": id, "code": "throw new Error('boom')"}); !isErr || !strings.Contains(out, "boom") {
		t.Fatalf("a throwing run through B: %q (error %v); want isError with the error", out, isErr)
	}
	// The JSON API's profile endpoint through B reaches it too.
	status, body := postJSON(t, b.URL+"/v1/profiles/run_in_code_context", tokenA, `{"contextId": "`+id+`", "code": "n += 1; console.log(n)"}`)
	if status != http.StatusOK || !strings.Contains(string(body), "44") {
		t.Fatalf("A's context through B's JSON API: %d %s; want 200 and 44", status, body)
	}
	var res struct {
		ExitCode int `json:"exitCode"`
	}
	if err := json.Unmarshal(body, &res); err != nil || res.ExitCode != 0 {
		t.Fatalf("through B's JSON API: %s (%v)", body, err)
	}
	// Another token gets no further through B than through A.
	onBOther, err := mcpClient(t, b.URL, tokenB)
	if err != nil {
		t.Fatal(err)
	}
	// (Not "no 44 in it": the message quotes the context's id, which may hold "44".)
	if out, isErr := call(onBOther, "run_in_code_context", map[string]any{"contextId": id, "code": "console.log(n)"}); !isErr || !strings.Contains(out, "no such code context") {
		t.Fatalf("token B on A's context through B: %q (error %v); want a no-such-context error", out, isErr)
	}
	// The context stayed on A all along: A runs it without a load.
	if out, isErr := call(onA, "run_in_code_context", map[string]any{"contextId": id, "code": "console.log(n)"}); isErr || !strings.Contains(out, "44") {
		t.Fatalf("through A after: %q (error %v)", out, isErr)
	}
	// Moved to B (A lets it go, as a draining node does): B loads it from
	// the store, language and state, and runs it itself.
	if err := a.node.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	if out, isErr := call(onB, "run_in_code_context", map[string]any{"contextId": id, "code": "n += 1; console.log(n)"}); isErr || !strings.Contains(out, "45") {
		t.Fatalf("A's context through B after A let it go: %q (error %v); want 45, loaded on B", out, isErr)
	}
	if !b.mgr.Holds(id) {
		t.Fatal("B ran the context without holding it")
	}
	// And now A passes calls on to B.
	if out, isErr := call(onA, "run_in_code_context", map[string]any{"contextId": id, "code": "n += 1; console.log(n)"}); isErr || !strings.Contains(out, "46") {
		t.Fatalf("the context through A once B holds it: %q (error %v); want 46", out, isErr)
	}
	if out, isErr := call(onB, "delete_code_context", map[string]any{"contextId": id}); isErr {
		t.Fatalf("delete through B: %q", out)
	}
	if out, isErr := call(onA, "run_in_code_context", map[string]any{"contextId": id, "code": "console.log(n)"}); !isErr {
		t.Fatalf("a run after the delete: %q; want a no-such-context error", out)
	}
}
