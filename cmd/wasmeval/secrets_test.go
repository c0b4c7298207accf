package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/llmhost"
)

// Canaries of the host's configuration: none may reach anything the guest
// reads.
const (
	canaryUser  = "alice-canary-user"
	canaryPass  = "canary-password-31337"
	canaryQuery = "canary-query-key-271828"
	canaryKey   = "sk-canary-env-key-161803"
	canaryArg   = "--canary-arg=/opt/canary-secret-dir/token-9999"
)

// TestEvalSecretsStayOnTheHost runs cells whose llm() and tool.*() calls
// fail in every way the host can fail (a refused key, an endpoint that is
// gone, a TLS failure, a tool server that dies or repeats its command line)
// with --llm-url carrying a user name, password and query key, the key in
// the host environment and the tool server's command line holding a secret
// path: each cell's error names the problem, and no secret is in the output.
func TestEvalSecretsStayOnTheHost(t *testing.T) {
	t.Setenv(llmhost.KeyEnv, canaryKey)
	t.Setenv(testMCPServerEnv, "1")
	// The endpoint echoes what it was sent, as some do in their errors.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		status := http.StatusUnauthorized
		if strings.Contains(r.URL.Path, "/busy/") {
			status = http.StatusServiceUnavailable
		}
		user, pass, _ := r.BasicAuth()
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":"no: %s %s %s %s"}}`, r.URL.String(), r.Header.Get("Authorization"), user, pass)
	}))
	defer echo.Close()
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close()
	withSecrets := func(base, path string) string {
		return strings.Replace(base, "://", "://"+canaryUser+":"+canaryPass+"@", 1) + path + "?api_key=" + canaryQuery
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	toolsMCP := `"` + exe + `" -test.run=^$ ` + canaryArg

	type cell struct{ py, js, want string }
	llmCell := func(want string) cell { return cell{`llm('hi')`, `await llm('hi')`, want} }
	tests := []struct {
		name  string
		args  []string
		cells []cell
	}{
		{"key refused", []string{"--llm-url", withSecrets(echo.URL, "/v1")},
			[]cell{llmCell("llm: the endpoint answered 401 Unauthorized: the host's credentials for it were refused")}},
		{"provider error echoing the request", []string{"--llm-url", withSecrets(echo.URL, "/busy/v1")},
			[]cell{llmCell("llm: the endpoint answered 503 Service Unavailable: no: /busy/v1/chat/completions?api_key=[redacted] Bearer [redacted]")}},
		{"unreachable", []string{"--llm-url", withSecrets(goneURL, "/v1")},
			[]cell{llmCell("llm: the endpoint could not be reached: the connection was refused")}},
		{"TLS failure", []string{"--llm-url", withSecrets(tlsSrv.URL, "/v1")},
			[]cell{llmCell("llm: the endpoint's TLS certificate was not accepted")}},
		{"tool server repeats its command line", []string{"--tools-mcp", toolsMCP},
			[]cell{{`tool.show_args()`, `await tool.show_args()`, "tool.show_args: started as [redacted]"}}},
		{"tool server dies", []string{"--tools-mcp", toolsMCP}, []cell{
			{`tool.exit_now()`, `await tool.exit_now()`, "tool.exit_now: the MCP server has exited or closed its connection"},
			{`tool.echo(message='x')`, `await tool.echo({message: 'x'})`, "tool.echo: the MCP server has exited or closed its connection"},
		}},
	}
	secrets := []string{canaryUser, canaryPass, canaryQuery, canaryKey, canaryArg, "canary-secret-dir", exe}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, lang := range langs(t) {
				codes := make([]string, len(tt.cells))
				for i, c := range tt.cells {
					codes[i] = c.js
					if lang == "py" {
						codes[i] = c.py
					}
				}
				results, _ := evalCells(t, lang, tt.args, codes...)
				for i, c := range tt.cells {
					out := results[i].Details.Cells[0].Output
					if !strings.Contains(out, c.want) {
						t.Errorf("%s: cell %d: %q, want an error with %q", lang, i, out, c.want)
					}
					for _, s := range secrets {
						if strings.Contains(out, s) {
							t.Errorf("%s: cell %d shows the host's %q: %s", lang, i, s, out)
						}
					}
				}
			}
		})
	}
}

// TestEvalToolsMCPFailsToStart: a --tools-mcp command that cannot start
// stops eval before any cell runs (exit 3, the reason on the operator's
// stderr); nothing reaches stdout, which is what the guest's results go to.
func TestEvalToolsMCPFailsToStart(t *testing.T) {
	var stdout, stderr bytes.Buffer
	in := strings.NewReader(`{"cells":[{"language":"js","code":"1"}]}` + "\n")
	code := doMain(context.Background(), []string{"eval", "--cwd", t.TempDir(), "--tools-mcp", "/nonexistent/canary-secret-dir/server " + canaryArg}, in, &stdout, &stderr)
	if code != exitHost || stdout.Len() != 0 || !strings.Contains(stderr.String(), "--tools-mcp") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 3, nothing, and the reason", code, stdout.String(), stderr.String())
	}
}
