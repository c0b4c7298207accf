package python_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/internal/testpackages"
	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/python"
)

// userCache is the cache the package's other tests use: compiling
// python.wasm again per test would cost tens of seconds.
func userCache() string {
	dir, _ := os.UserCacheDir()
	return filepath.Join(dir, "wasmeval")
}

var (
	realOnce sync.Once
	realRT   *python.Runtime
	realErr  error
)

// realPackages is a runtime whose package layer is the Debian packages of
// `make py-test-packages`, with sympy and networkx preloaded.
func realPackages(t testing.TB) *python.Runtime {
	t.Helper()
	dir := testpackages.Dir(t)
	realOnce.Do(func() {
		realRT, realErr = python.New(context.Background(), python.Config{
			CacheDir: userCache(), Packages: dir, Preload: []string{"sympy", "networkx"},
		})
	})
	testenv.NotBuilt(t, realErr)
	return realRT
}

func newInstanceOf(t testing.TB, r *python.Runtime) (runtimes.Instance, string) {
	t.Helper()
	root := t.TempDir()
	inst, err := r.NewInstance(context.Background(), runtimes.InstanceOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close(context.Background()) })
	return inst, root
}

// cell runs code and returns its output, failing the test when the cell
// fails and wantFail is not set (or succeeds when it is).
func cell(t testing.TB, inst runtimes.Instance, code string, wantFail bool) string {
	t.Helper()
	var r rec
	out, err := inst.Run(context.Background(), code, &r)
	if err != nil {
		t.Fatalf("%s: %v", code, err)
	}
	if out.Failed != wantFail {
		t.Fatalf("%s: failed=%v, want %v; output:\n%s", code, out.Failed, wantFail, r.out.String())
	}
	return r.out.String()
}

func TestPackagesReal(t *testing.T) {
	r := realPackages(t)
	inst, root := newInstanceOf(t, r)
	tests := []struct {
		name, code, want string
		fail             bool
	}{
		{name: "preloaded", code: "import sys; print('sympy' in sys.modules, 'networkx' in sys.modules, 'attr' in sys.modules)",
			want: "True True False"},
		{name: "sys.path after the root",
			code: "import sys; print(sys.path.index(" + pyQuote(root) + ") < sys.path.index('" + python.PackagesPath + "'))",
			want: "True"},
		{name: "sympy", code: "import sympy\nx = sympy.Symbol('x')\nprint(sympy.solve(x**2 - 5*x + 6, x))", want: "[2, 3]"},
		{name: "sympy simplify and print", code: "import sympy\nx = sympy.Symbol('x')\nprint(sympy.simplify(sympy.sin(x)**2 + sympy.cos(x)**2), sympy.latex(x**2 / 2), sympy.sqrt(8))",
			want: "1 \\frac{x^{2}}{2} 2*sqrt(2)"},
		{name: "networkx", code: "import networkx as nx\ng = nx.Graph([(1, 2), (2, 3), (3, 4), (1, 5), (5, 4)])\nprint(nx.shortest_path(g, 1, 3))",
			want: "[1, 2, 3]"},
		{name: "distribution metadata", code: "import importlib.metadata as m; print(m.version('networkx'), m.version('attrs'))",
			want: "2.8.8 22.2.0"},
		{name: "attrs", code: "import attr, attrs\n@attrs.define\nclass P:\n    x: int\n    y: int = 0\nprint(P(1), attr.asdict(P(2, 3)))",
			want: "P(x=1, y=0) {'x': 2, 'y': 3}"},
		{name: "pure fallback of a C extension", code: "import yaml\nprint(yaml.__with_libyaml__, yaml.safe_load('a: [1, 2]'))",
			want: "False {'a': [1, 2]}"},
		{name: "C extension named", code: "import yaml._yaml", fail: true,
			want: "ImportError: module 'yaml._yaml' needs the C extension _yaml.cpython-311-x86_64-linux-gnu.so"},
		{name: "bz2 imports, says why it cannot compress", code: "import bz2\nbz2.compress(b'x')", fail: true,
			want: "NotImplementedError: bz2 compression is not available"},
		{name: "write", code: "open('" + python.PackagesPath + "/sympy/new.py', 'w')", fail: true,
			want: "OSError: [Errno 69] Read-only file system"},
		{name: "overwrite", code: "open('" + python.PackagesPath + "/sympy/__init__.py', 'a')", fail: true,
			want: "OSError: [Errno 69] Read-only file system"},
		{name: "remove", code: "import os; os.remove('" + python.PackagesPath + "/isympy.py')", fail: true,
			want: "OSError: [Errno 69] Read-only file system"},
		{name: "mkdir", code: "import os; os.mkdir('" + python.PackagesPath + "/evil')", fail: true,
			want: "OSError: [Errno 69] Read-only file system"},
		{name: "rename", code: "import os; os.rename('" + python.PackagesPath + "/isympy.py', '" + python.PackagesPath + "/x.py')", fail: true,
			want: "OSError: [Errno 69] Read-only file system"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := cell(t, inst, tc.code, tc.fail)
			if !strings.Contains(out, tc.want) {
				t.Errorf("output:\n%s\nwant it to contain %q", out, tc.want)
			}
		})
	}
	// The layer did not change.
	if _, err := os.Stat(filepath.Join(testpackages.Dir(t), "sympy", "new.py")); err == nil {
		t.Error("a guest wrote into the package layer")
	}
}

func pyQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

// syntheticLayer makes a small package layer: a module, a package, C
// extensions by Debian's and the stable ABI's names, and symlinks that
// lead out of the layer and within it.
func syntheticLayer(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret.txt")
	files := map[string]string{
		"mymod.py":              "VALUE = 1\n",
		"broken.py":             "import fastthing\n",
		"pkg/__init__.py":       "from . import helper\n",
		"extra.pth":             "# a comment\nvendored\n",
		"vendored/vmod.py":      "NAME = 'vendored'\n",
		"pkg/helper.py":         "def f():\n    return 'helped'\n",
		"pkg/_speedups.abi3.so": "\x7fELF",
		"fastthing.cpython-311-x86_64-linux-gnu.so": "\x7fELF",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(secret, []byte("host secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"out_abs.txt": secret,               // absolute, out of the layer
		"out_rel":     "../../..",           // relative, out of the layer
		"out_dir":     filepath.Dir(secret), // a host folder
		"inside.py":   "mymod.py",           // stays inside: followed
		"pkg/up.py":   "../mymod.py",        // up, but still inside
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPackagesConfined(t *testing.T) {
	dir := syntheticLayer(t)
	r, err := python.New(context.Background(), python.Config{CacheDir: userCache(), Packages: dir})
	testenv.NotBuilt(t, err)
	defer r.Close(context.Background())
	inst, _ := newInstanceOf(t, r)
	p := python.PackagesPath
	tests := []struct {
		name, code, want string
		fail             bool
	}{
		{name: "module", code: "import mymod; print(mymod.VALUE)", want: "1"},
		{name: "package", code: "import pkg; print(pkg.helper.f())", want: "helped"},
		{name: ".pth file", code: "import vmod; print(vmod.NAME)", want: "vendored"},
		{name: "inside link", code: "import inside; print(inside.VALUE)", want: "1"},
		{name: "upward link inside", code: "print(open('" + p + "/pkg/up.py').read())", want: "VALUE = 1"},
		{name: "C extension", code: "import fastthing", fail: true,
			want: "ImportError: module 'fastthing' needs the C extension fastthing.cpython-311-x86_64-linux-gnu.so"},
		{name: "C extension in a package", code: "from pkg import _speedups", fail: true,
			want: "module 'pkg._speedups' needs the C extension _speedups.abi3.so"},
		{name: "no such module", code: "import nothere", fail: true, want: "ModuleNotFoundError: No module named 'nothere'"},
		{name: "absolute link out", code: "open('" + p + "/out_abs.txt').read()", fail: true, want: "PermissionError"},
		{name: "relative link out", code: "import os; os.listdir('" + p + "/out_rel')", fail: true, want: "PermissionError"},
		{name: "folder link out", code: "import os; os.listdir('" + p + "/out_dir')", fail: true, want: "PermissionError"},
		{name: "readlink out", code: "import os; os.readlink('" + p + "/out_abs.txt')", fail: true, want: "PermissionError"},
		{name: "readlink inside", code: "import os; print(os.readlink('" + p + "/inside.py'))", want: "mymod.py"},
		{name: "dot-dot out", code: "import os; os.listdir('" + p + "/../../../../..')", fail: true, want: "PermissionError"},
		{name: "symlink", code: "import os; os.symlink('mymod.py', '" + p + "/l.py')", fail: true, want: "Read-only file system"},
		{name: "utime", code: "import os; os.utime('" + p + "/mymod.py', (0, 0))", fail: true, want: "Read-only file system"},
		{name: "truncate", code: "import os; os.truncate('" + p + "/mymod.py', 0)", fail: true, want: "Read-only file system"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := cell(t, inst, tc.code, tc.fail)
			if !strings.Contains(out, tc.want) || strings.Contains(out, "host secret") {
				t.Errorf("output:\n%s\nwant it to contain %q (and no host secret)", out, tc.want)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "mymod.py")); string(b) != "VALUE = 1\n" {
		t.Errorf("the layer's mymod.py is now %q", b)
	}
}

// TestPackagesPreloadRebuilt: a preloaded module is in the template (a new
// session has it without importing), and a changed layer makes a new
// template instead of reusing the cached one.
func TestPackagesPreloadRebuilt(t *testing.T) {
	dir := t.TempDir()
	mod := filepath.Join(dir, "mymod.py")
	if err := os.WriteFile(mod, []byte("VALUE = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A cache of its own, so that the templates of the test's throwaway
	// layers do not stay in the user's; only wazero's compiled code is
	// made again.
	cache := t.TempDir()
	templates := func() int {
		m, _ := filepath.Glob(filepath.Join(cache, "python-template-*.json"))
		return len(m)
	}
	value := func() string {
		t.Helper()
		r, err := python.New(context.Background(), python.Config{CacheDir: cache, Packages: dir, Preload: []string{"mymod"}})
		testenv.NotBuilt(t, err)
		defer r.Close(context.Background())
		inst, _ := newInstanceOf(t, r)
		return strings.TrimSpace(cell(t, inst, "import sys; print('mymod' in sys.modules, sys.modules['mymod'].VALUE)", false))
	}
	if got := value(); got != "True 1" {
		t.Fatalf("first template: %q, want the preloaded module with VALUE 1", got)
	}
	if n := templates(); n != 1 {
		t.Fatalf("%d templates cached, want 1", n)
	}
	if got := value(); got != "True 1" || templates() != 1 {
		t.Fatalf("unchanged layer: %q with %d templates, want the cached one reused", got, templates())
	}
	later := time.Now().Add(2 * time.Second)
	if err := os.WriteFile(mod, []byte("VALUE = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(mod, later, later)
	if got := value(); got != "True 2" {
		t.Fatalf("changed layer: %q, want a new template with VALUE 2", got)
	}
	if n := templates(); n != 2 {
		t.Fatalf("%d templates cached after the change, want 2", n)
	}
}

func TestPackagesBadConfig(t *testing.T) {
	layer := syntheticLayer(t)
	file := filepath.Join(layer, "mymod.py")
	tests := []struct {
		name    string
		cfg     python.Config
		want    string
		needsPy bool
	}{
		{name: "missing", cfg: python.Config{Packages: filepath.Join(layer, "nope")}, want: "no such file or directory; give a folder of installed pure-Python packages"},
		{name: "a file", cfg: python.Config{Packages: file}, want: "not a folder"},
		{name: "relative", cfg: python.Config{Packages: "site-packages"}, want: "give an absolute path"},
		{name: "preload without layer", cfg: python.Config{Preload: []string{"sympy"}}, want: "there is no package layer to preload from"},
		{name: "bad name", cfg: python.Config{Packages: layer, Preload: []string{"my-mod"}}, want: `"my-mod": not a module name`},
		{name: "not in layer", cfg: python.Config{Packages: layer, Preload: []string{"sympy"}}, want: "has no sympy/ folder or sympy.py"},
		{name: "preload fails", cfg: python.Config{Packages: layer, Preload: []string{"broken"}}, needsPy: true,
			want: "preloading broken failed: ImportError: module 'fastthing' needs the C extension fastthing.cpython-311-x86_64-linux-gnu.so"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.CacheDir = userCache()
			r, err := python.New(context.Background(), tc.cfg)
			if err == nil {
				r.Close(context.Background())
				t.Fatalf("New succeeded, want an error containing %q", tc.want)
			}
			if tc.needsPy && testenv.IsNotBuilt(err) {
				testenv.NotBuilt(t, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// BenchmarkNewSessionPackages is a new session's time until it has
// imported sympy and networkx, with them preloaded into the template and
// without. (sympy's first arithmetic imports more of it, about 0.7 s more
// either way; --preload those modules too to save that.)
func BenchmarkNewSessionPackages(b *testing.B) {
	dir := testpackages.Dir(b)
	for _, bc := range []struct {
		name    string
		preload []string
	}{
		{"Preloaded", []string{"sympy", "networkx"}},
		{"NotPreloaded", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r, err := python.New(context.Background(), python.Config{CacheDir: userCache(), Packages: dir, Preload: bc.preload})
			testenv.NotBuilt(b, err)
			defer r.Close(context.Background())
			root := b.TempDir()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				inst, err := r.NewInstance(context.Background(), runtimes.InstanceOptions{Root: root})
				if err != nil {
					b.Fatal(err)
				}
				out, err := inst.Run(context.Background(), "import sympy, networkx", nopSink{})
				if err != nil || out.Failed {
					b.Fatalf("%v %+v", err, out)
				}
				inst.Close(context.Background())
			}
		})
	}
}

// TestPackagesMemoryLimitBelowTemplate: a session whose memory limit is
// below the template's size (the interpreter and its preloaded packages)
// fails to start with a message saying so.
func TestPackagesMemoryLimitBelowTemplate(t *testing.T) {
	r := realPackages(t)
	if r.TemplateSize() <= 40<<20 {
		t.Fatalf("the template is %d MiB; the test needs one over 40 MiB", r.TemplateSize()>>20)
	}
	inst, err := r.NewInstance(context.Background(), runtimes.InstanceOptions{Root: t.TempDir(), MemoryLimitBytes: 40 << 20})
	if err == nil {
		inst.Close(context.Background())
		t.Fatal("a session with a 40 MiB limit started from a larger template")
	}
	want := "python: the session's memory limit, 40 MiB, is below the"
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "preloaded packages (sympy, networkx)") {
		t.Fatalf("error %q, want %q naming the preloaded packages", err, want)
	}
}
