package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// layerDir makes a package layer of one module, name, whose VALUE is
// value.
func layerDir(t *testing.T, name, value string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, "__init__.py"), []byte("VALUE = "+value+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSessionPackageLayer: sessions of one Sandbox name package layers of
// their own (SessionOptions.Packages, .Preload); each sees only its own
// layer's packages, one that names none sees the Sandbox's, and sessions
// of the same layer share its runtime.
func TestSessionPackageLayer(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	base, a, b := layerDir(t, "pkgbase", "'base'"), layerDir(t, "pkga", "'a'"), layerDir(t, "pkgb", "'b'")
	sb, err := sandbox.New(ctx, sandbox.Options{CacheDir: t.TempDir(), Packages: base})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	newSession := func(o sandbox.SessionOptions) *sandbox.Session {
		t.Helper()
		o.Root = t.TempDir()
		s, err := sb.NewSession(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(ctx) })
		return s
	}
	probe := `import importlib, sys
pre = [n for n in ("pkgbase", "pkga", "pkgb") if n in sys.modules]
seen = []
for name in ("pkgbase", "pkga", "pkgb"):
    try:
        seen.append(importlib.import_module(name).VALUE)
    except ModuleNotFoundError:
        pass
print(",".join(seen), ",".join(pre), end="")`
	tests := []struct {
		name string
		o    sandbox.SessionOptions
		want string
	}{
		{"sandbox's", sandbox.SessionOptions{}, "base "},
		{"a", sandbox.SessionOptions{Packages: a}, "a "},
		{"b preloaded", sandbox.SessionOptions{Packages: b, Preload: []string{"pkgb"}}, "b pkgb"},
		{"a again", sandbox.SessionOptions{Packages: a}, "a "},
		{"sandbox's, none preloaded", sandbox.SessionOptions{Preload: []string{}}, "base "},
		{"sandbox's, preloaded", sandbox.SessionOptions{Preload: []string{"pkgbase"}}, "base pkgbase"},
	}
	sessions := map[string]*sandbox.Session{}
	for _, tt := range tests {
		s := newSession(tt.o)
		sessions[tt.name] = s
		if got := evalOut(t, s, py(probe))[0]; got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if n := sandbox.LayerRuntimes(sb); n != 4 {
		t.Errorf("%d runtimes for the sessions' layers, want 4 (a, b with pkgb, the sandbox's with none and with pkgbase)", n)
	}
	// A preloaded package that does not import fails the first Python
	// cell of a session on that layer, saying why.
	bad := layerDir(t, "pkgbad", "1\nraise ImportError('pkgbad is broken')")
	s := newSession(sandbox.SessionOptions{Packages: bad, Preload: []string{"pkgbad"}})
	_, err = s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{py("1")}})
	if !errors.Is(err, sandbox.ErrPackages) || !strings.Contains(err.Error(), "pkgbad is broken") {
		t.Errorf("a preload that fails: %v, want an error wrapping ErrPackages that gives the ImportError", err)
	}
	// What one session does to its layer's modules stays its own.
	evalOut(t, sessions["a"], py("import pkga\npkga.VALUE = 'changed'"))
	if got := evalOut(t, sessions["a again"], py("import pkga\nprint(pkga.VALUE, end='')"))[0]; got != "a" {
		t.Errorf("another session of layer a: %q, want a", got)
	}
}

// TestSessionPackageLayerErrors: a session's layer that cannot be used
// fails NewSession with an error that says what is wrong and what would
// be right.
func TestSessionPackageLayerErrors(t *testing.T) {
	ctx := context.Background()
	layer := layerDir(t, "pkga", "1")
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("x"), 0o644)
	missing := filepath.Join(t.TempDir(), "missing")
	other := t.TempDir()
	if _, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: other}); err != nil {
		t.Fatal(err)
	}
	inOther := filepath.Join(other, "layer")
	os.Mkdir(inOther, 0o755)
	tests := []struct {
		name    string
		o       sandbox.SessionOptions
		is      error
		message string
	}{
		{"missing", sandbox.SessionOptions{Root: t.TempDir(), Packages: missing}, sandbox.ErrPackages,
			"SessionOptions.Packages " + missing + ": no such file or directory; give a folder of installed pure-Python packages"},
		{"file", sandbox.SessionOptions{Root: t.TempDir(), Packages: file}, sandbox.ErrPackages,
			"SessionOptions.Packages " + file + ": not a folder"},
		{"preload not in layer", sandbox.SessionOptions{Root: t.TempDir(), Packages: layer, Preload: []string{"numpy"}}, sandbox.ErrPackages,
			"SessionOptions.Preload numpy: the package layer " + layer + " has no numpy/ folder or numpy.py"},
		{"preload without a layer", sandbox.SessionOptions{Root: t.TempDir(), Preload: []string{"pkga"}}, sandbox.ErrPackages,
			"SessionOptions.Preload pkga: neither the session nor the sandbox has a package layer to preload from"},
		{"root inside the layer", sandbox.SessionOptions{Root: filepath.Join(layer, "pkga"), Packages: layer}, sandbox.ErrRootOverlap,
			"lies inside " + layer + ", a package layer sessions import from (SessionOptions.Packages)"},
		{"layer inside another session's root", sandbox.SessionOptions{Root: t.TempDir(), Packages: inOther}, sandbox.ErrRootOverlap,
			"the root " + other + " of another session of the sandbox contains the package layer " + inOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := sb.NewSession(ctx, tt.o)
			if err == nil {
				s.Close(ctx)
				t.Fatal("no error")
			}
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.message) {
				t.Errorf("error %q\nwant one wrapping %v with %q", err, tt.is, tt.message)
			}
		})
	}
	// A root of a later session may not overlap a layer an earlier one
	// named either.
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Packages: layer})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	_, err = sb.NewSession(ctx, sandbox.SessionOptions{Root: layer})
	if !errors.Is(err, sandbox.ErrRootOverlap) {
		t.Errorf("a root that is another session's layer: %v, want ErrRootOverlap", err)
	}
}

// TestForkKeepsPackageLayer: a fork of a session with a layer of its own
// keeps that layer, so a reset of the copy (a fresh interpreter from the
// layer's template) still imports from it; asking the fork for another
// layer is refused, since the copy's Python holds what it imported.
func TestForkKeepsPackageLayer(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	base, a, b := layerDir(t, "pkgbase", "'base'"), layerDir(t, "pkga", "'a'"), layerDir(t, "pkgb", "'b'")
	sb, err := sandbox.New(ctx, sandbox.Options{CacheDir: t.TempDir(), Packages: base})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Packages: a, Preload: []string{"pkga"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	// A fork made before the source ran Python starts its own interpreter
	// from its options' layer.
	early, err := s.Fork(ctx, sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close(ctx)
	if out, _ := evalLang(t, early, "py", "import importlib\nfor n in ('pkgbase', 'pkga'):\n    try: print(importlib.import_module(n).VALUE)\n    except ModuleNotFoundError: pass"); out != "a\n" {
		t.Errorf("a fork made before any Python sees %q; want its source's layer: \"a\\n\"", out)
	}
	if out, _ := evalLang(t, s, "py", "import pkga; print(pkga.VALUE)"); out != "a\n" {
		t.Fatalf("the source session: %q", out)
	}
	cp, err := s.Fork(ctx, sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close(ctx)
	probe := `import importlib, sys
seen = []
for name in ("pkgbase", "pkga", "pkgb"):
    try:
        seen.append(importlib.import_module(name).VALUE)
    except ModuleNotFoundError:
        pass
print(",".join(seen), "pkga" in sys.modules)`
	res, err := cp.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: probe, Reset: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Details.Cells[0].Output; got != "a True\n" {
		t.Errorf("the fork after a reset sees %q; want its source's layer, preloaded: \"a True\\n\"", got)
	}
	_, err = s.Fork(ctx, sandbox.SessionOptions{Root: t.TempDir(), Packages: b})
	if !errors.Is(err, sandbox.ErrPackages) || !strings.Contains(err.Error(), "leave SessionOptions.Packages and .Preload empty") {
		t.Errorf("a fork asking for another layer: %v; want ErrPackages saying to leave them empty", err)
	}
	if _, err := s.Fork(ctx, sandbox.SessionOptions{Root: t.TempDir(), Packages: a, Preload: []string{"pkga"}}); err != nil {
		t.Errorf("a fork naming its source's own layer: %v", err)
	}
}
