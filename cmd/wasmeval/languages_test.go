package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wasmeval/wasmeval/internal/testenv"
)

func TestLanguagesFlagSet(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		bad  string
	}{
		{in: "py,js", want: []string{"py", "js"}},
		{in: " ts , PY ", want: []string{"ts", "py"}},
		{in: "js,js,", want: []string{"js"}},
		{in: "py,ruby", bad: `unknown language "ruby"`},
		{in: "python", bad: `unknown language "python"`},
		{in: "", bad: "no languages given"},
		{in: " , ", bad: "no languages given"},
	}
	for _, tt := range tests {
		var l languagesFlag
		err := l.Set(tt.in)
		if tt.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tt.bad) || !strings.Contains(err.Error(), "py, js, ts") {
				t.Errorf("Set(%q) = %v; want an error with %q naming py, js, ts", tt.in, err, tt.bad)
			}
			continue
		}
		if err != nil || !slices.Equal(l.list, tt.want) {
			t.Errorf("Set(%q) = %v, %v; want %v", tt.in, l.list, err, tt.want)
		}
	}
}

// TestLanguagesFlagBadValues: every face answers a bad --languages with
// status 2 and one line naming the flag and the valid values; --help
// explains the flag.
func TestLanguagesFlagBadValues(t *testing.T) {
	for _, cmd := range []string{"eval", "serve", "mcp"} {
		base := []string{cmd}
		if cmd == "eval" {
			base = append(base, "--cwd", t.TempDir())
		}
		code, _, stderr := run(t, context.Background(), "", append(base, "--languages", "py,rb")...)
		if line := firstLine(stderr); code != exitInvalid || !strings.Contains(line, "-languages") || !strings.Contains(line, "py, js, ts") {
			t.Errorf("%s --languages py,rb: status %d, first line %q; want %d and a line naming the flag and py, js, ts", cmd, code, line, exitInvalid)
		}
		code, stdout, _ := run(t, context.Background(), "", cmd, "--help")
		if code != exitOK || !strings.Contains(stdout, "\n  --languages LIST") {
			t.Errorf("%s --help does not explain --languages", cmd)
		}
	}
}

// TestEvalLanguagesFlag: eval --languages js runs js and ts cells and fails
// a py cell with the enabled languages named, without starting Python.
func TestEvalLanguagesFlag(t *testing.T) {
	stdin := `{"cells":[{"language":"ts","code":"const n: number = 6 * 7\nn"}]}` + "\n" +
		`{"cells":[{"language":"js","code":"n"},{"language":"py","code":"print(1)","title":"python"}]}` + "\n"
	code, stdout, stderr := run(t, context.Background(), stdin, "eval", "--cwd", t.TempDir(), "--languages", "js")
	res := results(t, stdout)
	if len(res) != 2 {
		t.Fatalf("%d results, want 2 (status %d, stderr %s)", len(res), code, stderr)
	}
	if got := summary(res[0]); got != "text: 42" {
		t.Errorf("ts cell: %s", got)
	}
	want := "text: [1/2] js\n42\n\n[2/2] python\n\"py\" cells are disabled here; the enabled languages are js, ts\n\nCell 2 (python) failed"
	if got := summary(res[1]); got != want {
		t.Errorf("py cell:\n got %q\nwant %q", got, want)
	}
	if code != 1 {
		t.Errorf("status %d, want 1", code)
	}
}

// TestServeLanguagesFlag: serve --languages reaches session evals and the
// stateless /v1/run alike; ts cells run through serve.
func TestServeLanguagesFlag(t *testing.T) {
	const token = "languages-token"
	t.Setenv("WASMEVAL_TOKENS", token)
	srv := testenv.StartServe(t, doMain, "--workspace", t.TempDir(), "--languages", "py,ts")
	var sess struct{ ID string }
	if code := srv.Post(t, token, "/v1/sessions", "", &sess); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	var res struct {
		Content []struct{ Text string }
		Details struct{ IsError bool }
	}
	srv.Post(t, token, "/v1/sessions/"+sess.ID+"/eval", `{"cells":[{"language":"ts","code":"const a: number = 6 * 7\na"}]}`, &res)
	if len(res.Content) == 0 || res.Content[0].Text != "42" || res.Details.IsError {
		t.Errorf("ts eval: %+v", res)
	}
	srv.Post(t, token, "/v1/sessions/"+sess.ID+"/eval", `{"cells":[{"language":"js","code":"a"}]}`, &res)
	if len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, `"js" cells are disabled here; the enabled languages are py, ts`) || !res.Details.IsError {
		t.Errorf("js eval: %+v", res)
	}
	var ex map[string]any
	srv.Post(t, token, "/v1/run", `{"language":"js","code":"1"}`, &ex)
	data, _ := json.Marshal(ex)
	if !strings.Contains(string(data), `"exitCode":1`) || !strings.Contains(string(data), "cells are disabled here; the enabled languages are py, ts") {
		t.Errorf("run: %s", data)
	}
}

// TestMCPLanguagesFlag: mcp --languages reaches the eval tool and
// run_code.
func TestMCPLanguagesFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := wasmevalBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(bin, "mcp", "--workspace", t.TempDir(), "--languages", "py,ts")
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	const disabled = `"js" cells are disabled here; the enabled languages are py, ts`
	res := call("eval", map[string]any{"cells": []any{map[string]any{"language": "ts", "code": "const k: number = 7\nk * 6"}}})
	if res.IsError || mcpText(res) != "42" {
		t.Errorf("ts eval: isError %v, %q", res.IsError, mcpText(res))
	}
	res = call("eval", map[string]any{"cells": []any{map[string]any{"language": "js", "code": "1"}}})
	if !res.IsError || !strings.Contains(mcpText(res), disabled) || !strings.Contains(mcpText(res), "Cell 1 (js) failed") {
		t.Errorf("js eval: isError %v, %q", res.IsError, mcpText(res))
	}
	res = call("run_code", map[string]any{"language": "js", "code": "1"})
	data, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(data), `"exitCode":1`) || !strings.Contains(string(data), "cells are disabled here") {
		t.Errorf("run_code js: %s", data)
	}
}
