package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// TestClusterMCPContextElsewhere: an MCP code context lives on the node
// whose MCP session made it; using it through another node's /mcp is a
// tool error that names the node running it and says how to reach it
// (send the MCP session's requests back to its node), not a bare store
// failure.
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
	id, isErr := call(onA, "create_code_context", map[string]any{"language": "python"})
	if isErr {
		t.Fatal(id)
	}
	id = strings.TrimSpace(id)
	if out, isErr := call(onA, "run_in_code_context", map[string]any{"contextId": id, "code": "print(6 * 7)"}); isErr || !strings.Contains(out, "42") {
		t.Fatalf("through A: %q (error %v)", out, isErr)
	}
	onB, err := mcpClient(t, b.URL, tokenA)
	if err != nil {
		t.Fatal(err)
	}
	out, isErr := call(onB, "run_in_code_context", map[string]any{"contextId": id, "code": "print(1)"})
	if !isErr || !strings.Contains(out, "node-a") || !strings.Contains(out, "Mcp-Session-Id") {
		t.Fatalf("A's context through B: %q (error %v); want an error naming node-a and saying to send the MCP session's requests back to its node", out, isErr)
	}
	// Through A it still works: the failed attempt changed nothing.
	if out, isErr := call(onA, "run_in_code_context", map[string]any{"contextId": id, "code": "print(7)"}); isErr || !strings.Contains(out, "7") {
		t.Fatalf("through A after: %q (error %v)", out, isErr)
	}
}
