package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/internal/testpackages"
	"github.com/wasmeval/wasmeval/sandbox"
)

// TestPackageLayer runs the real Debian packages through the library's
// face: Options.Packages and Options.Preload.
func TestPackageLayer(t *testing.T) {
	dir := testpackages.Dir(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{Packages: dir, Preload: []string{"sympy"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{
		{Language: "py", Code: "import sys\nprint('preloaded' if 'sympy' in sys.modules else 'not preloaded')"},
		{Language: "py", Code: "from sympy import symbols, solve, Eq\nx = symbols('x')\nprint(solve(Eq(2*x + 3, 11), x))"},
		{Language: "py", Code: "import networkx as nx\nprint(nx.shortest_path(nx.cycle_graph(6), 0, 4))"},
		{Language: "py", Code: "import attr\n@attr.s(auto_attribs=True)\nclass C:\n    a: int\nprint(C(7))"},
	}})
	testenv.NotBuilt(t, err)
	text := res.Content[0].Text
	for _, want := range []string{"preloaded", "[4]", "[0, 5, 4]", "C(a=7)"} {
		if !strings.Contains(text, want) {
			t.Errorf("output:\n%s\nwant %q", text, want)
		}
	}
	if strings.Contains(text, "not preloaded") {
		t.Errorf("sympy was not preloaded:\n%s", text)
	}
	res, err = s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{
		{Language: "py", Code: "import yaml._yaml"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].Text; !strings.Contains(text, "needs the C extension _yaml.cpython-311-x86_64-linux-gnu.so") {
		t.Errorf("C extension: output:\n%s", text)
	}
	res, err = s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{
		{Language: "py", Code: "open('/usr/local/lib/wasmeval/site-packages/attr/__init__.py', 'w')"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].Text; !strings.Contains(text, "Read-only file system") {
		t.Errorf("write into the layer: output:\n%s", text)
	}

	// A fork has the layer too: what the source imported, and new imports.
	f, err := s.Fork(ctx, sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(ctx)
	res, err = f.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{
		{Language: "py", Code: "import isympy\nprint(x, open('/usr/local/lib/wasmeval/site-packages/attrs-22.2.0.dist-info/METADATA').readline())"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].Text; !strings.Contains(text, "x Metadata-Version: 2.1") {
		t.Errorf("fork: output:\n%s", text)
	}
}

func TestPackageLayerBad(t *testing.T) {
	ctx := context.Background()
	cache := filepath.Join(t.TempDir(), "cache")
	if err := os.MkdirAll(filepath.Join(cache, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	layer := filepath.Join(t.TempDir(), "p", "layer") // its parent holds nothing else
	if err := os.MkdirAll(layer, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(layer, "mod.py"), []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		o    sandbox.Options
		want string
	}{
		{"missing", sandbox.Options{Packages: filepath.Join(layer, "nope")}, "no such file or directory"},
		{"file", sandbox.Options{Packages: filepath.Join(layer, "mod.py")}, "not a folder"},
		{"inside the cache", sandbox.Options{CacheDir: cache, Packages: filepath.Join(cache, "inside")}, "lies inside " + cache},
		{"contains the cache", sandbox.Options{CacheDir: cache, Packages: filepath.Dir(cache)}, "contains " + cache},
		{"is the cache", sandbox.Options{CacheDir: cache, Packages: cache}, "is " + cache},
		{"preload not in layer", sandbox.Options{Packages: layer, Preload: []string{"sympy"}}, "has no sympy/ folder or sympy.py"},
		{"preload bad name", sandbox.Options{Packages: layer, Preload: []string{"a b"}}, "not a module name"},
		{"preload without layer", sandbox.Options{Preload: []string{"mod"}}, "there is no package layer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sb, err := sandbox.New(ctx, tc.o)
			if err == nil {
				sb.Close(ctx)
				t.Fatalf("New succeeded, want an error containing %q", tc.want)
			}
			if !errors.Is(err, sandbox.ErrPackages) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want ErrPackages containing %q", err, tc.want)
			}
		})
	}

	// No session root, or workspace, may overlap the layer: a guest would
	// write what every session imports.
	sb, err := sandbox.New(ctx, sandbox.Options{CacheDir: cache, Packages: layer, Preload: []string{"mod"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	sub := filepath.Join(layer, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{layer, sub, filepath.Dir(layer)} {
		s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: root})
		if err == nil {
			s.Close(ctx)
			t.Fatalf("a session with root %s, overlapping the layer %s, started", root, layer)
		}
		if !errors.Is(err, sandbox.ErrRootOverlap) || !strings.Contains(err.Error(), "package layer") {
			t.Fatalf("root %s: error %q, want ErrRootOverlap naming the package layer", root, err)
		}
	}
	if m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{Workspace: sub}); err == nil {
		m.Close(ctx)
		t.Fatalf("a manager with its workspace inside the layer started")
	}
}

// TestStartRuntimePreload: StartRuntime imports the preload list now, and a
// package that does not import is ErrPackages.
func TestStartRuntimePreload(t *testing.T) {
	ctx := context.Background()
	layer := t.TempDir()
	for name, body := range map[string]string{
		"good.py":   "VALUE = 42\n",
		"broken.py": "raise RuntimeError('this package is broken')\n",
	} {
		if err := os.WriteFile(filepath.Join(layer, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sb, err := sandbox.New(ctx, sandbox.Options{Packages: layer, Preload: []string{"good", "broken"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	err = sb.StartRuntime(ctx, "py")
	if !errors.Is(err, sandbox.ErrPackages) || !strings.Contains(err.Error(), "preloading broken failed: RuntimeError: this package is broken") {
		if testenv.IsNotBuilt(err) {
			testenv.NotBuilt(t, err)
		}
		t.Fatalf("StartRuntime: %v; want ErrPackages saying broken failed", err)
	}

	sb2, err := sandbox.New(ctx, sandbox.Options{Packages: layer, Preload: []string{"good"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb2.Close(ctx)
	if err := sb2.StartRuntime(ctx, "py"); err != nil {
		testenv.NotBuilt(t, err)
	}
	s, err := sb2.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "import sys\nprint(sys.modules['good'].VALUE)"}}})
	if err != nil || !strings.Contains(res.Content[0].Text, "42") {
		t.Fatalf("eval: %v %+v", err, res)
	}
}
