package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

func TestFork(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	py := func(s *sandbox.Session, code string) string {
		t.Helper()
		res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: code}}})
		if err != nil {
			testenv.NotBuilt(t, err)
			t.Fatal(err)
		}
		return res.Content[0].Text
	}
	py(s, "counter = 1\nopen('notes.txt', 'w').write('original')")
	root2 := t.TempDir()
	cp, err := s.Fork(ctx, sandbox.SessionOptions{Root: root2})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close(ctx)
	if got := py(cp, "counter += 1\nopen('notes.txt', 'w').write('copy')\ncounter"); got != "2" {
		t.Fatalf("copy: %q", got)
	}
	if got := py(s, "counter, open('notes.txt').read()"); got != "(1, 'original')" {
		t.Fatalf("original after fork: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(root2, "notes.txt")); string(b) != "copy" {
		t.Fatalf("copy's file: %q", b)
	}
	// JavaScript state cannot be copied: the copy starts JavaScript
	// afresh, keeps the Python state and files, and says so.
	if _, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "var x = 1"}}}); err != nil {
		t.Fatal(err)
	}
	if fresh := cp.FreshLanguages(); fresh != nil {
		t.Errorf("a copy of a Python-only session reports fresh languages %v", fresh)
	}
	withJS, err := s.Fork(ctx, sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatalf("fork with JS state: %v", err)
	}
	defer withJS.Close(ctx)
	if fresh := withJS.FreshLanguages(); !slices.Equal(fresh, []string{"js"}) {
		t.Errorf("FreshLanguages = %v, want [js]", fresh)
	}
	if got := py(withJS, "counter"); got != "1" {
		t.Errorf("Python state in the copy of a session with JS: %q", got)
	}
	res, err := withJS.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "typeof x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].Text; got != "'undefined'" {
		t.Errorf("JS in the copy: typeof x = %s, want a fresh state", got)
	}
	// The copy needs an empty root.
	if _, err := cp.Fork(ctx, sandbox.SessionOptions{Root: root2}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("fork into a non-empty root: %v", err)
	}
}
