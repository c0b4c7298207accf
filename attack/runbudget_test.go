package attack_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeMemoryBudgetHoldsOneShotRuns: POST /v1/run's one-shot sessions,
// and the profiles' temporary ones, are under serve's memory budget like
// sessions' evals. Under a 192 MiB
// budget, a one-shot JavaScript run (default cap 256 MiB, which runs
// because it runs alone) leaves no room for another one-shot run, a
// stateless profile tool's run, nor a session's eval: each is refused, after waiting for room, with 503,
// Retry-After and the reason, while the running one is untouched. Once it
// ends, one-shot runs one after another work as usual.
func TestServeMemoryBudgetHoldsOneShotRuns(t *testing.T) {
	hs := budgetServer(t)

	do := func(path, body string) (int, http.Header, string) {
		req, _ := http.NewRequest("POST", hs.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+serveToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	run := func(code string) (int, http.Header, string) {
		b, _ := json.Marshal(map[string]any{"language": "js", "code": code, "timeout": 60})
		return do("/v1/run", string(b))
	}
	code, _, body := do("/v1/sessions", "")
	var sess struct{ ID string }
	if err := json.Unmarshal([]byte(body), &sess); code != 201 || err != nil {
		t.Fatalf("create: %d %s", code, body)
	}

	held := make(chan string, 1)
	go func() {
		code, _, body := run("await new Promise(r => setTimeout(r, 14000)); print('held')")
		held <- http.StatusText(code) + " " + body
	}()
	time.Sleep(time.Second) // the holder runs

	const want = "the server's memory budget of 192 MiB is in use by running cells; try again later"
	var wg sync.WaitGroup
	for _, tc := range []struct{ name, path, body string }{
		{"a second one-shot run", "/v1/run", `{"language":"js","code":"print(1)"}`},
		{"a session's eval", "/v1/sessions/" + sess.ID + "/eval", `{"cells":[{"language":"js","code":"print(1)"}]}`},
		{"a stateless run_code", "/v1/profiles/run_code", `{"language":"javascript","code":"console.log(1)"}`},
		{"a stateless evaluate_python", "/v1/profiles/evaluate_python", `{"code":"1 + 1"}`},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, hdr, body := do(tc.path, tc.body)
			if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" || !strings.Contains(body, want) || !strings.Contains(body, `"memory_budget"`) {
				t.Errorf("%s while a one-shot run holds the budget: %d (Retry-After %q) %s; want 503 with Retry-After and %q", tc.name, code, hdr.Get("Retry-After"), body, want)
			}
		}()
	}
	// The MCP face's run_code (a temporary session of the MCP server).
	wg.Add(1)
	go func() {
		defer wg.Done()
		tr := &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearerTransport{serveToken, http.DefaultTransport}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "attack", Version: "1"}, nil).Connect(context.Background(), tr, nil)
		if err != nil {
			t.Error(err)
			return
		}
		defer cs.Close()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"language": "javascript", "code": "console.log(1)"}})
		var text string
		if err == nil && len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		if err != nil || !res.IsError || !strings.Contains(text, want) {
			t.Errorf("MCP run_code while a one-shot run holds the budget: %v %q; want a tool error saying %q", err, text, want)
		}
	}()
	wg.Wait()
	if got := <-held; !strings.HasPrefix(got, "OK ") || !strings.Contains(got, "held") {
		t.Errorf("the running one-shot run: %s", got)
	}
	for i := range 2 {
		if code, _, body := run("print(40 + 2)"); code != 200 || !strings.Contains(body, "42") {
			t.Errorf("one-shot run %d after the holder ended: %d %s", i+1, code, body)
		}
	}
}
