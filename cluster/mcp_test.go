//go:build linux

package cluster_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// checkMCPThroughBalancer opens an MCP session through the balancer at
// addr (round robin over several nodes) and uses a code context over
// several calls: every request of the MCP session must reach the node
// that opened it (HAProxy sticks on Mcp-Session-Id), else the second
// one finds no such MCP session.
func checkMCPThroughBalancer(t *testing.T, addr string) {
	t.Helper()
	ctx := context.Background()
	tr := &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{tokenA, &http.Transport{Proxy: nil}}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cluster-test", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("MCP through the balancer: %v", err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("MCP %s through the balancer: %v", name, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		if res.IsError {
			t.Fatalf("MCP %s through the balancer: %s", name, b.String())
		}
		return b.String()
	}
	ctxID := strings.TrimSpace(call("create_code_context", map[string]any{"language": "python"}))
	call("run_in_code_context", map[string]any{"contextId": ctxID, "code": "n = 40"})
	for i := 1; i <= 4; i++ {
		out := call("run_in_code_context", map[string]any{"contextId": ctxID, "code": "n += 1\nprint(n)"})
		if want := fmt.Sprint(40 + i); !strings.Contains(out, want) {
			t.Fatalf("MCP call %d through the balancer: %q, want %s", i, out, want)
		}
	}
}
