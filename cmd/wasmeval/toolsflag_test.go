package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// TestToolsFlagErrors checks --tools and --kernel-mode on mcp and serve:
// an unknown name is one line that lists the valid names, and exit
// status 2.
func TestToolsFlagErrors(t *testing.T) {
	for _, cmd := range []string{"mcp", "serve"} {
		for _, tc := range []struct{ flag, value, want string }{
			{"--tools", "bogus", `invalid value "bogus" for flag -tools: unknown profile "bogus"; use a comma-separated list of eval, python, evaluate_python, code_interpreter (default: all)`},
			{"--tools", "eval,pyhton", `unknown profile "pyhton" (did you mean "python"?)`},
			{"--tools", ",", "no profile named"},
			{"--kernel-mode", "fresh", `invalid value "fresh" for flag -kernel-mode: "fresh" is not a kernel mode; use session`},
		} {
			var out, errb bytes.Buffer
			args := []string{cmd, tc.flag, tc.value}
			if cmd == "serve" {
				args = append(args, "--token", "t")
			}
			code := doMain(context.Background(), args, strings.NewReader(""), &out, &errb)
			if code != exitInvalid {
				t.Errorf("%s %s %s: exit %d, want %d", cmd, tc.flag, tc.value, code, exitInvalid)
			}
			first, _, _ := strings.Cut(errb.String(), "\n")
			if !strings.HasPrefix(first, "wasmeval "+cmd+": ") || !strings.Contains(first, tc.want) {
				t.Errorf("%s %s %s: stderr %q, want one line holding %q", cmd, tc.flag, tc.value, errb.String(), tc.want)
			}
		}
	}
}

func TestServeToolsFlag(t *testing.T) {
	var out, errb bytes.Buffer
	c, code, ok := parseServeFlags([]string{"--token", "t", "--tools", "evaluate_python, eval"}, &out, &errb)
	if !ok {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if got := c.tools.set.String(); got != "eval,evaluate_python" {
		t.Errorf("--tools gave %q", got)
	}
	c, _, _ = parseServeFlags([]string{"--token", "t"}, &out, &errb)
	if got := c.tools.set.String(); got != "eval,python,evaluate_python,code_interpreter" {
		t.Errorf("the default gave %q, want every available profile", got)
	}
	if c.tools.kernelMode != "" {
		t.Errorf("the default kernel mode is %q, want \"\" (session)", c.tools.kernelMode)
	}
	c, _, _ = parseServeFlags([]string{"--token", "t", "--kernel-mode", "per-call"}, &out, &errb)
	if c.tools.kernelMode != "per-call" {
		t.Errorf("--kernel-mode per-call gave %q", c.tools.kernelMode)
	}
	for _, cmd := range []string{"mcp", "serve"} {
		out.Reset()
		doMain(context.Background(), []string{cmd, "--help"}, strings.NewReader(""), &out, &errb)
		if !strings.Contains(out.String(), "\n  --tools LIST") || !strings.Contains(out.String(), "evaluate_python") {
			t.Errorf("%s --help does not explain --tools", cmd)
		}
		if !strings.Contains(out.String(), "\n  --kernel-mode MODE") {
			t.Errorf("%s --help does not explain --kernel-mode", cmd)
		}
	}
}

// TestMCPToolsFlag runs `wasmeval mcp --tools evaluate_python` and checks
// with the SDK's client over stdio that it lists that tool alone, and
// that the tool runs.
func TestMCPToolsFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	testenv.RequirePython(t)
	bin := wasmevalBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(bin, "mcp", "--workspace", t.TempDir(), "--tools", "evaluate_python")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 1 || tools.Tools[0].Name != "evaluate_python" {
		var names []string
		for _, tool := range tools.Tools {
			names = append(names, tool.Name)
		}
		t.Fatalf("tools %v, want evaluate_python alone", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "evaluate_python", Arguments: map[string]any{"code": "print('hi')\n6 * 7"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var r struct {
		ValueRepr *string `json:"value_repr"`
		Stdout    string  `json:"stdout"`
	}
	json.Unmarshal(b, &r)
	if res.IsError || r.ValueRepr == nil || *r.ValueRepr != "42" || r.Stdout != "hi\n" {
		t.Errorf("evaluate_python answered %s", b)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "eval", Arguments: map[string]any{"cells": []any{}}}); err == nil {
		t.Error("eval is served though --tools left it out")
	}
}
