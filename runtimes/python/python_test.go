package python_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wasmeval/wasmeval/internal/testenv"
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
	testenv.NotBuilt(t, rtErr)
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

func TestCells(t *testing.T) {
	inst, root := newInstance(t)
	cases := []struct {
		name, code string
		failed     bool
		out        string // exact combined stdout+stderr, unless contains is set
		contains   []string
		result     string // text/plain of the last expression, "" for none
		display    []runtimes.Bundle
	}{
		{name: "print", code: "print('a'); print('b')", out: "a\nb\n"},
		{name: "state set", code: "counter = 10\ndef bump(n=1):\n    global counter\n    counter += n\n    return counter", out: ""},
		{name: "state kept", code: "bump(5)", result: "15"},
		{name: "last expression", code: "x = [1, 2]\nx + [3]", result: "[1, 2, 3]"},
		{name: "semicolon hides", code: "counter;", out: ""},
		{name: "semicolon with comment", code: "counter;  # quiet", out: ""},
		{name: "None shows nothing", code: "None", out: ""},
		{name: "string repr", code: "'hi'", result: "'hi'"},
		{name: "underscore", code: "_", result: "'hi'"},
		{name: "stdout stderr order", code: "import sys\nprint('1')\nprint('2', file=sys.stderr)\nprint('3')", out: "1\n2\n3\n"},
		{name: "traceback", code: "def f():\n    raise ValueError('bad')\nf()", failed: true,
			contains: []string{"Traceback (most recent call last):", `File "<cell-`, "in f", "ValueError: bad"}},
		{name: "state after error", code: "counter", result: "15"},
		{name: "syntax error", code: "def (", failed: true, contains: []string{"SyntaxError"}},
		{name: "top-level await", code: "import asyncio\nasync def g():\n    await asyncio.sleep(0.01)\n    return 7\nv = await g()\nv * 6", result: "42"},
		{name: "await keeps state", code: "v", result: "7"},
		{name: "sleep", code: "import time\nt0 = time.monotonic()\ntime.sleep(0.05)\ntime.monotonic() - t0 >= 0.05", result: "True"},
		{name: "input", code: "input('name? ')", failed: true, contains: []string{"stdin is not supported"}},
		{name: "cwd is root", code: "import os\nos.getcwd()", result: "'" + root + "'"},
		{name: "display json", code: "display({'k': [1, 2]})", display: []runtimes.Bundle{{"text/plain": "{'k': [1, 2]}", "application/json": `{"k": [1, 2]}`}}},
		{name: "display markdown", code: "class M:\n    def _repr_markdown_(self): return '# T'\ndisplay(M())",
			display: []runtimes.Bundle{{"text/markdown": "# T", "text/plain": "<__main__.M object>"}}},
		{name: "display png", code: "class P:\n    def _repr_png_(self): return b'\\x89PNG'\ndisplay(P())",
			display: []runtimes.Bundle{{"image/png": "iVBORw==", "text/plain": "<__main__.P object>"}}},
		{name: "sqlite", code: "import sqlite3\nsqlite3.connect(':memory:').execute('select 1+1').fetchone()[0]", result: "2"},
		{name: "zlib", code: "import zlib\nzlib.decompress(zlib.compress(b'abc'))", result: "b'abc'"},
		{name: "recursion", code: "def r(n): return r(n + 1)\nr(0)", failed: true, contains: []string{"RecursionError"}},
		{name: "alive after recursion", code: "counter + 1", result: "16"},
		{name: "system exit", code: "import sys\nsys.exit(3)", failed: true, contains: []string{"SystemExit: 3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, o := run(t, inst, tc.code)
			out := r.out.String()
			if o.Failed != tc.failed {
				t.Fatalf("failed = %v, want %v; output:\n%s", o.Failed, tc.failed, out)
			}
			if tc.contains != nil {
				for _, c := range tc.contains {
					if !strings.Contains(out, c) {
						t.Errorf("output lacks %q:\n%s", c, out)
					}
				}
				if strings.Contains(out, "_wasmeval") || strings.Contains(out, "prelude") {
					t.Errorf("traceback shows frames of ours:\n%s", out)
				}
			} else if out != tc.out {
				t.Errorf("output = %q, want %q", out, tc.out)
			}
			got := ""
			if len(r.result) > 0 {
				got = r.result[0]["text/plain"]
			}
			if got != tc.result {
				t.Errorf("result = %q, want %q", got, tc.result)
			}
			if tc.display != nil {
				if len(r.display) != len(tc.display) {
					t.Fatalf("display = %v, want %v", r.display, tc.display)
				}
				for i, want := range tc.display {
					for k, v := range want {
						g := r.display[i][k]
						if k == "text/plain" && strings.HasPrefix(v, "<__main__.") {
							if !strings.HasPrefix(g, strings.TrimSuffix(v, ">")) {
								t.Errorf("display[%d][%s] = %q, want prefix %q", i, k, g, v)
							}
							continue
						}
						if g != v {
							t.Errorf("display[%d][%s] = %q, want %q", i, k, g, v)
						}
					}
				}
			}
		})
	}
}

func TestMemoryLimit(t *testing.T) {
	r := runtimeForTest(t)
	inst, err := r.NewInstance(context.Background(), runtimes.InstanceOptions{Root: t.TempDir(), MemoryLimitBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(context.Background())
	run(t, inst, "keep = 'still here'")
	rec, o := run(t, inst, "big = bytearray(100 * 1024 * 1024)")
	if !o.Failed || !strings.Contains(rec.out.String(), "MemoryError") {
		t.Fatalf("100 MiB under a 64 MiB cap: failed=%v\n%s", o.Failed, rec.out.String())
	}
	rec, o = run(t, inst, "chunks = []\nwhile True:\n    chunks.append(bytearray(1 << 20))")
	if !o.Failed || !strings.Contains(rec.out.String(), "MemoryError") {
		t.Fatalf("endless allocation: failed=%v\n%s", o.Failed, rec.out.String())
	}
	rec, o = run(t, inst, "del chunks\nsmall = bytearray(8 << 20)\nprint(keep, len(small))")
	if o.Failed || rec.out.String() != "still here 8388608\n" {
		t.Fatalf("session after MemoryError: %q", rec.out.String())
	}
}

func TestFork(t *testing.T) {
	r := runtimeForTest(t)
	inst, _ := newInstance(t)
	run(t, inst, "import json\nshared = {'n': 1}\ndef bump():\n    shared['n'] += 1\n    return shared['n']")
	root2 := t.TempDir()
	cp, err := inst.(runtimes.Forker).Fork(context.Background(), runtimes.InstanceOptions{Root: root2, Env: map[string]string{"WHO": "copy"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close(context.Background())
	if rec, o := run(t, cp, "import os\nprint(bump(), os.getcwd() == "+"'"+root2+"'"+", os.environ['WHO'])"); o.Failed || rec.out.String() != "2 True copy\n" {
		t.Fatalf("copy: %q", rec.out.String())
	}
	// The original goes its own way.
	if rec, _ := run(t, inst, "print(bump())"); rec.out.String() != "2\n" {
		t.Fatalf("original after fork: %q", rec.out.String())
	}
	if rec, _ := run(t, cp, "print(bump())"); rec.out.String() != "3\n" {
		t.Fatalf("copy again: %q", rec.out.String())
	}
	_ = r
}

// TestHugeWrite: one print of 64 MiB reaches the sink in pieces, whole
// and in order, with multi-byte characters intact.
func TestHugeWrite(t *testing.T) {
	r := runtimeForTest(t)
	inst, err := r.NewInstance(context.Background(), runtimes.InstanceOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(context.Background())
	var pieces, total int
	var bad bool
	sink := &countSink{onOut: func(s string) {
		pieces++
		total += len(s)
		if !utf8.ValidString(s) {
			bad = true
		}
	}}
	o, err := inst.Run(context.Background(), "import sys\nsys.stdout.write('é' * (32 << 20))", sink)
	if err != nil || o.Failed {
		t.Fatalf("%v %+v", err, o)
	}
	if total != 64<<20 || pieces < 64 || bad {
		t.Fatalf("got %d bytes in %d pieces (valid UTF-8 in each: %v)", total, pieces, !bad)
	}
}

type countSink struct{ onOut func(string) }

func (c *countSink) Stdout(s string)               { c.onOut(s) }
func (c *countSink) Stderr(s string)               { c.onOut(s) }
func (c *countSink) Display(runtimes.Bundle, bool) {}
func (c *countSink) Status(string, string)         {}
