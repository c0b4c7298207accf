package mcpserver_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSamplingFailureHidesSecrets: when the client's sampling fails with an
// error that holds a URL with credentials and a key (as a client's own
// upstream error may), the cell's llm() error names the failure and its
// JSON-RPC code, with the credentials and the query taken out.
func TestSamplingFailureHidesSecrets(t *testing.T) {
	srv, _ := newServer(t)
	cs := connect(t, srv, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, errors.New(`Post "https://bob:pw-canary-1@llm.internal/v1?key=qk-canary-2": Authorization: Bearer sk-canary-3 refused`)
		},
	})
	res := call(t, cs, "eval", jsCells(`await llm("hello")`, `console.log(1 + 1)`))
	out := text(res)
	if !res.IsError || !strings.Contains(out, "llm: the MCP client refused the sampling request (error") {
		t.Errorf("isError %v, %q; want llm()'s error naming the refused sampling", res.IsError, out)
	}
	for _, s := range []string{"bob", "pw-canary-1", "qk-canary-2", "sk-canary-3"} {
		if strings.Contains(out, s) {
			t.Errorf("the guest sees %q: %s", s, out)
		}
	}
}
