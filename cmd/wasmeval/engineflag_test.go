package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
		if code != exitOK || !strings.Contains(stdout, "\n  --engine NAME") || !strings.Contains(stdout, "else "+wasm.DefaultEngine+" (this binary's") {
			t.Errorf("%s --help does not explain --engine and name this binary's default (%s):\n%s", cmd, wasm.DefaultEngine, stdout)
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

// TestEngineDefaultWithoutCgo: a binary built with CGO_ENABLED=0 has no
// wasmtime, so its default is wazero: --help says so, eval runs Python
// with no --engine (and $WASMEVAL_ENGINE unset), and --engine wasmtime
// fails with a message that says how to get it. The test binary itself
// (cgo) defaults to wasmtime (TestEngineFlagBadValues, wasm's
// TestDefaultEngine).
func TestEngineDefaultWithoutCgo(t *testing.T) {
	testenv.RequirePython(t)
	if testing.Short() {
		t.Skip("builds wasmeval without cgo")
	}
	bin := filepath.Join(t.TempDir(), "wasmeval")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	env := append(os.Environ(), wasm.EngineEnv+"=")
	help := exec.Command(bin, "eval", "--help")
	help.Env = env
	out, _ := help.Output()
	if !strings.Contains(string(out), "else wazero (this binary's") {
		t.Errorf("eval --help of a build without cgo does not name wazero as its default:\n%s", out)
	}
	eval := exec.Command(bin, "eval", "--cwd", t.TempDir())
	eval.Env, eval.Stdin = env, strings.NewReader(req("print(6 * 7)"))
	out, err := eval.Output()
	if res := results(t, string(out)); err != nil || len(res) != 1 || summary(res[0]) != "text: 42" {
		t.Errorf("eval without --engine: %v, stdout %s", err, out)
	}
	eval = exec.Command(bin, "eval", "--cwd", t.TempDir(), "--engine", "wasmtime")
	eval.Env, eval.Stdin = env, strings.NewReader(req("print(1)"))
	out, _ = eval.CombinedOutput()
	if !strings.Contains(string(out), "built without cgo; build it with CGO_ENABLED=1") {
		t.Errorf("eval --engine wasmtime in a build without cgo: %s", out)
	}
}
