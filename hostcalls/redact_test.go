package hostcalls_test

import (
	"context"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/wasmeval/wasmeval/hostcalls"
)

// TestHostErrorsAreRedacted: a Host that returns a raw Go error with a
// URL in it (a *url.Error prints the whole URL) does not hand the URL's
// credentials or query to the guest; the dispatcher is the last place a host
// error passes before the guest reads it.
func TestHostErrorsAreRedacted(t *testing.T) {
	leak := &url.Error{Op: "Post", URL: "https://bob:pw-canary@llm.example/v1?key=qk-canary", Err: syscall.ECONNREFUSED}
	host := hostcalls.HostFuncs{
		ToolFunc: func(context.Context, hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
			return hostcalls.ToolResponse{}, leak
		},
		LLMFunc: func(context.Context, hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
			return hostcalls.LLMResponse{}, leak
		},
		AgentFunc: func(context.Context, hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
			return hostcalls.AgentResponse{}, leak
		},
	}
	d, err := hostcalls.NewDispatcher(t.TempDir(), host, hostcalls.DispatcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, req := range []string{
		`{"op":"tool","name":"t","args":{}}`,
		`{"op":"llm","prompt":"p"}`,
		`{"op":"agent","prompt":"p"}`,
	} {
		resp := string(d.Call(context.Background(), []byte(req)))
		if !strings.Contains(resp, "https://llm.example/v1?[redacted]") || !strings.Contains(resp, "connection refused") {
			t.Errorf("%s: %s, want the error with the URL redacted", req, resp)
		}
		for _, s := range []string{"bob", "pw-canary", "qk-canary"} {
			if strings.Contains(resp, s) {
				t.Errorf("%s: the guest sees %q: %s", req, s, resp)
			}
		}
	}
}
