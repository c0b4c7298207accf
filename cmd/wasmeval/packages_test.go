package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/internal/testpackages"
)

// TestPackageFlagsHelp: every command's --help explains both flags.
func TestPackageFlagsHelp(t *testing.T) {
	for _, cmd := range []string{"eval", "serve", "mcp"} {
		code, stdout, stderr := run(t, context.Background(), "", cmd, "--help")
		if code != exitOK {
			t.Fatalf("%s --help: status %d: %s", cmd, code, stderr)
		}
		for _, f := range []string{"\n  --packages DIR\n", "\n  --preload NAME,...\n"} {
			if !strings.Contains(stdout, f) {
				t.Errorf("%s --help does not explain %q", cmd, strings.TrimSpace(f))
			}
		}
	}
}

// TestPackageFlagsBad: every face answers a bad --packages or --preload
// with status 2 and a message saying what is wrong.
func TestPackageFlagsBad(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache) // eval's cache: cache/wasmeval
	layer := t.TempDir()
	if err := os.WriteFile(filepath.Join(layer, "mod.py"), []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inCache := filepath.Join(cache, "wasmeval", "pkgs")
	if err := os.MkdirAll(inCache, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--packages", filepath.Join(layer, "nope")}, "--packages " + filepath.Join(layer, "nope") + ": no such file or directory"},
		{[]string{"--packages", filepath.Join(layer, "mod.py")}, "not a folder"},
		{[]string{"--preload", "mod"}, "--preload mod: there is no package layer to preload from; give --packages DIR too"},
		{[]string{"--packages", layer, "--preload", "mod,sympy"}, "--preload sympy: the package layer " + layer + " has no sympy/ folder or sympy.py"},
		{[]string{"--packages", layer, "--preload", "no-such"}, `--preload "no-such": not a module name`},
		{[]string{"--packages", inCache}, "the package layer (Options.Packages, --packages) " + inCache + " lies inside " + filepath.Join(cache, "wasmeval")},
	}
	for _, cmd := range []string{"eval", "serve", "mcp"} {
		for _, tc := range tests {
			args := []string{cmd}
			switch cmd {
			case "eval":
				args = append(args, "--cwd", t.TempDir())
			case "serve":
				args = append(args, "--token", "t", "--addr", "127.0.0.1:0", "--cache-dir", filepath.Join(cache, "wasmeval"))
			case "mcp":
				args = append(args, "--cache-dir", filepath.Join(cache, "wasmeval"))
			}
			code, _, stderr := run(t, context.Background(), "", append(args, tc.args...)...)
			if code != exitInvalid || !strings.Contains(stderr, tc.want) {
				t.Errorf("%s %v: status %d, stderr %q; want %d and %q", cmd, tc.args, code, stderr, exitInvalid, tc.want)
			}
		}
	}
}

// TestPreloadFailsAtStart: a preloaded package that does not import stops
// every face at start-up with status 2, before any cell.
func TestPreloadFailsAtStart(t *testing.T) {
	testenv.RequirePython(t)
	layer := t.TempDir()
	for name, body := range map[string]string{
		"broken.py": "import fastthing\n",
		"fastthing.cpython-311-x86_64-linux-gnu.so": "\x7fELF",
	} {
		if err := os.WriteFile(filepath.Join(layer, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := "preloading broken failed: ImportError: module 'fastthing' needs the C extension fastthing.cpython-311-x86_64-linux-gnu.so"
	for _, args := range [][]string{
		{"eval", "--cwd", t.TempDir()},
		{"serve", "--token", "t", "--addr", "127.0.0.1:0", "--workspace", t.TempDir()},
		{"mcp", "--workspace", t.TempDir()},
	} {
		code, stdout, stderr := run(t, context.Background(), req("print(1)")+"\n", append(args, "--packages", layer, "--preload", "broken")...)
		if code != exitInvalid || !strings.Contains(stderr, want) || stdout != "" {
			t.Errorf("%s: status %d, stdout %q, stderr %q; want %d and %q", args[0], code, stdout, stderr, exitInvalid, want)
		}
	}
}

// TestEvalPackages: eval --packages --preload runs real packages, names
// a C extension that cannot load, and refuses writes into the layer.
func TestEvalPackages(t *testing.T) {
	testenv.RequirePython(t)
	dir := testpackages.Dir(t)
	stdin := req("import sys\nprint('sympy' in sys.modules)") + "\n" +
		req("import sympy\nx = sympy.Symbol('x')\nprint(sympy.solve(x**3 - 8, x)[0])") + "\n" +
		req("import yaml._yaml") + "\n" +
		req("open('/usr/local/lib/wasmeval/site-packages/mpmath/__init__.py', 'w')") + "\n"
	code, stdout, stderr := run(t, context.Background(), stdin, "eval", "--cwd", t.TempDir(), "--packages", dir, "--preload", "sympy")
	res := results(t, stdout)
	if len(res) != 4 {
		t.Fatalf("got %d results, want 4 (status %d, stderr %s)", len(res), code, stderr)
	}
	for i, want := range []string{"True", "2", "needs the C extension _yaml.cpython-311-x86_64-linux-gnu.so", "Read-only file system"} {
		if got := summary(res[i]); !strings.Contains(got, want) {
			t.Errorf("request %d: %s; want it to contain %q", i+1, got, want)
		}
	}
}

// TestMCPPackages: a real `wasmeval mcp --packages` process imports from
// the layer.
func TestMCPPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	testenv.RequirePython(t)
	dir := testpackages.Dir(t)
	bin := wasmevalBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.Command(bin, "mcp", "--workspace", t.TempDir(), "--packages", dir, "--preload", "attr")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "eval", Arguments: map[string]any{"cells": []any{
		map[string]any{"language": "py", "code": "import sys\npreloaded = 'attr' in sys.modules\nimport attr\nprint(preloaded, attr.__version__)"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if text := mcpText(res); res.IsError || !strings.Contains(text, "True 22.2.0") {
		t.Errorf("eval: isError %v, %q", res.IsError, text)
	}
}

// TestServePackages: `wasmeval serve --packages --preload` runs cells
// that import from the layer over HTTP.
func TestServePackages(t *testing.T) {
	testenv.RequirePython(t)
	dir := testpackages.Dir(t)
	const token = "packages-token"
	t.Setenv("WASMEVAL_TOKENS", token)
	// serve listens once the template with networkx imported is made:
	// seconds of guest work, many more on a loaded machine.
	srv := testenv.StartServe(t, doMain, "--workspace", t.TempDir(), "--packages", dir, "--preload", "networkx")
	var sess struct{ ID string }
	if code := srv.Post(t, token, "/v1/sessions", "", &sess); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	var res struct{ Content []struct{ Text string } }
	cells := `{"cells":[{"language":"py","code":"import sys\nprint('networkx' in sys.modules)\nimport networkx as nx\nprint(nx.shortest_path(nx.path_graph(4), 0, 3))"},` +
		`{"language":"py","code":"import yaml._yaml"}]}`
	srv.Post(t, token, "/v1/sessions/"+sess.ID+"/eval", cells, &res)
	if len(res.Content) == 0 {
		t.Fatalf("eval: no content (serve log: %s)", srv.Log())
	}
	for _, want := range []string{"True\n[0, 1, 2, 3]", "needs the C extension _yaml.cpython-311-x86_64-linux-gnu.so"} {
		if !strings.Contains(res.Content[0].Text, want) {
			t.Errorf("eval: %q; want %q", res.Content[0].Text, want)
		}
	}
}
