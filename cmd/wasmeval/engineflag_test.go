package main

import (
	"context"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/wasm"
)

// TestEngineFlagBadValues: every face answers a bad --engine with status 2
// and one line naming the flag and the engines; --help explains the flag.
func TestEngineFlagBadValues(t *testing.T) {
	for _, cmd := range []string{"eval", "serve", "mcp"} {
		base := []string{cmd}
		if cmd == "eval" {
			base = append(base, "--cwd", t.TempDir())
		}
		code, _, stderr := run(t, context.Background(), "", append(base, "--engine", "v8")...)
		if line := firstLine(stderr); code != exitInvalid || !strings.Contains(line, "-engine") || !strings.Contains(line, "wazero or wasmtime") {
			t.Errorf("%s --engine v8: status %d, first line %q; want %d and a line naming the flag and the engines", cmd, code, line, exitInvalid)
		}
		code, stdout, _ := run(t, context.Background(), "", cmd, "--help")
		if code != exitOK || !strings.Contains(stdout, "\n  --engine NAME") {
			t.Errorf("%s --help does not explain --engine", cmd)
		}
	}
}

// TestEvalEngineFlag: eval --engine runs Python on the engine named, which
// wins over $WASMEVAL_ENGINE (a bad name here, which Python would refuse).
func TestEvalEngineFlag(t *testing.T) {
	testenv.RequirePython(t)
	t.Setenv(wasm.EngineEnv, "wasmer")
	for _, engine := range wasm.Engines() {
		code, stdout, stderr := run(t, context.Background(), req("print(6 * 7)"), "eval", "--cwd", t.TempDir(), "--engine", engine)
		res := results(t, stdout)
		if code != exitOK || len(res) != 1 || summary(res[0]) != "text: 42" {
			t.Errorf("--engine %s: status %d, stdout %s, stderr %s", engine, code, stdout, stderr)
		}
	}
}
