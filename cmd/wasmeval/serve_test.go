package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

type lockedBuffer = testenv.LockedBuffer

func TestServeHelpExplainsEveryFlag(t *testing.T) {
	var out, errb bytes.Buffer
	if code := doMain(context.Background(), []string{"serve", "--help"}, strings.NewReader(""), &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, f := range []string{"--addr", "--token", "--tokens-file", "--workspace", "--max-sessions", "--max-sessions-per-token",
		"--idle-timeout", "--max-inflight", "--max-body", "--shutdown-timeout", "--log-format", "--cache-dir", "--call-timeout", "--tools-mcp", "--llm-url", "--llm-model", "WASMEVAL_TOKENS"} {
		if !strings.Contains(out.String(), "\n  "+f) {
			t.Errorf("serve --help does not explain %s", f)
		}
	}
}

func TestServeFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"log format", []string{"--token", "t", "--log-format", "xml"}, `--log-format "xml": use text or json`},
		{"max sessions", []string{"--token", "t", "--max-sessions", "0"}, "--max-sessions 0"},
		{"unknown flag", []string{"--nope"}, "flag provided but not defined: -nope"},
		{"argument", []string{"x"}, `unexpected argument "x"`},
		{"no tokens", nil, "no bearer tokens"},
		{"call timeout", []string{"--token", "t", "--call-timeout", "0s"}, "--call-timeout 0s"},
		{"model without url", []string{"--token", "t", "--llm-model", "m"}, "wasmeval serve: --llm-model and its kin need --llm-url"},
		{"missing tokens file", []string{"--tokens-file", "/nonexistent/wasmeval-tokens"}, "--tokens-file"},
	}
	t.Setenv("WASMEVAL_TOKENS", "")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := doMain(context.Background(), append([]string{"serve"}, tt.args...), strings.NewReader(""), &out, &errb)
			if code != exitInvalid || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errb.String(), tt.want)
			}
		})
	}
}

func TestLoadTokens(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(file, []byte("# operators\nfile-1\n\n  file-2  \n"), 0o600)
	c := &serveConfig{tokens: stringList{"flag-1", " "}, tokensFile: file}
	got, err := loadTokens(c, "env-1, env-2,,")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"flag-1", "env-1", "env-2", "file-1", "file-2"}
	if !slices.Equal(got, want) {
		t.Errorf("tokens %q, want %q", got, want)
	}
}

func TestServeEndToEnd(t *testing.T) {
	const token = "e2e-secret-token"
	t.Setenv("WASMEVAL_TOKENS", token)
	ws := t.TempDir()
	srv := testenv.StartServe(t, doMain, "--workspace", ws)
	addr := srv.Addr
	post := func(path, body string) *http.Response {
		req, _ := http.NewRequest("POST", "http://"+addr+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("/v1/sessions", "")
	var v struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || v.ID == "" {
		t.Fatalf("create: %d %+v", resp.StatusCode, v)
	}
	if _, err := os.Stat(filepath.Join(ws, v.ID)); err != nil {
		t.Errorf("no session folder under the workspace: %v", err)
	}
	resp = post("/v1/sessions/"+v.ID+"/eval", `{"cells":[{"language":"js","code":"print(6*7)"}]}`)
	var res struct{ Content []struct{ Text string } }
	json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	if len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "42") {
		t.Errorf("eval: %d %+v", resp.StatusCode, res)
	}
	if code := srv.Stop(t); code != exitOK {
		t.Errorf("serve exited %d: %s", code, srv.Log())
	}
	if strings.Contains(srv.Log(), token) {
		t.Error("the log carries the token")
	}
	// The workspace was named on the command line: shutting down keeps
	// the session's files for the operator.
	if _, err := os.Stat(filepath.Join(ws, v.ID)); err != nil {
		t.Errorf("a graceful stop removed the session folder of a named --workspace: %v", err)
	}
}
