package python_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/python"
)

var (
	rtOnce sync.Once
	rt     *python.Runtime
	rtErr  error
)

// runtimeForTest compiles the module once for the whole package.
func runtimeForTest(t testing.TB) *python.Runtime {
	t.Helper()
	rtOnce.Do(func() {
		dir, _ := os.UserCacheDir()
		rt, rtErr = python.New(context.Background(), python.Config{CacheDir: dir + "/wasmeval"})
	})
	if errors.Is(rtErr, python.ErrNotBuilt) && os.Getenv("WASMEVAL_REQUIRE_PYTHON") == "" {
		t.Skip(rtErr)
	}
	if rtErr != nil {
		t.Fatal(rtErr)
	}
	return rt
}

type rec struct {
	out     strings.Builder
	display []runtimes.Bundle
	result  []runtimes.Bundle
}

func (r *rec) Stdout(s string) { r.out.WriteString(s) }
func (r *rec) Stderr(s string) { r.out.WriteString(s) }
func (r *rec) Display(b runtimes.Bundle, result bool) {
	if result {
		r.result = append(r.result, b)
	} else {
		r.display = append(r.display, b)
	}
}
func (r *rec) Status(kind, msg string) {}

func newInstance(t testing.TB) (runtimes.Instance, string) {
	t.Helper()
	r := runtimeForTest(t)
	root := t.TempDir()
	inst, err := r.NewInstance(context.Background(), runtimes.InstanceOptions{Root: root, Env: map[string]string{"LANG": "C.UTF-8"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close(context.Background()) })
	return inst, root
}

func run(t testing.TB, inst runtimes.Instance, code string) (*rec, runtimes.Outcome) {
	t.Helper()
	var r rec
	o, err := inst.Run(context.Background(), code, &r)
	if err != nil {
		t.Fatal(err)
	}
	return &r, o
}

func TestSmoke(t *testing.T) {
	inst, root := newInstance(t)
	r, o := run(t, inst, "import os, sys\nx = 41\nprint('hello', sys.version_info[:2], os.getcwd())")
	t.Logf("%q %+v", r.out.String(), o)
	if o.Failed || !strings.Contains(r.out.String(), "hello (3, 11) "+root) {
		t.Fatalf("got %q %+v", r.out.String(), o)
	}
	r, o = run(t, inst, "x + 1")
	if o.Failed || len(r.result) != 1 || r.result[0]["text/plain"] != "42" {
		t.Fatalf("got %q %+v %v", r.out.String(), o, r.result)
	}
}

func TestInterrupt(t *testing.T) {
	inst, _ := newInstance(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var r rec
	o, err := inst.Run(ctx, "y = 5\nwhile True: pass", &r)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Interrupted || !strings.Contains(r.out.String(), "KeyboardInterrupt") {
		t.Fatalf("got %q %+v", r.out.String(), o)
	}
	r2, o := run(t, inst, "print(y)")
	if o.Failed || r2.out.String() != "5\n" {
		t.Fatalf("got %q %+v", r2.out.String(), o)
	}
}
