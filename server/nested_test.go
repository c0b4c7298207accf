package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
