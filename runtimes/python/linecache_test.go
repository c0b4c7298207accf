package python_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/wasm"
)

// onEnginesT runs f as a subtest per engine, each with a fresh session.
func onEnginesT(t *testing.T, f func(t *testing.T, inst runtimes.Instance)) {
	for _, e := range wasm.Engines() {
		t.Run("engine="+e, func(t *testing.T) {
			r := engineRuntime(t, e, false)
			inst, err := r.NewInstance(context.Background(), runtimes.InstanceOptions{Root: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { inst.Close(context.Background()) })
			f(t, inst)
		})
	}
}

// output runs a cell that must complete and returns its output.
func output(t *testing.T, inst runtimes.Instance, code string) string {
	t.Helper()
	return mustRun(t, inst, code).out.String()
}

// trivialCells are cells that leave nothing behind but a global's value.
var trivialCells = []string{"x = 1", "x", "y = x + 1\ny", "if x:\n    z = [x, 2]", "print(end='')"}

// TestTrivialCellsKeepHeap: cells that complete and define no code leave
// no allocated block behind in the guest, so a long session of them keeps
// writing the same heap pages (issue 15: with checkpoints on, a growing
// heap cost a write fault and a page-table walk on most cells). Before
// run_cell dropped their linecache entries, each such cell kept five
// blocks (its name, source line, line list and the entry).
func TestTrivialCellsKeepHeap(t *testing.T) {
	const cells = 2000
	onEnginesT(t, func(t *testing.T, inst runtimes.Instance) {
		for i := range 50 { // warm: caches fill, free lists settle
			mustRun(t, inst, trivialCells[i%len(trivialCells)])
		}
		mustRun(t, inst, "import gc, linecache, sys\ngc.collect()\nblocks0, entries0 = sys.getallocatedblocks(), len(linecache.cache)")
		for i := range cells {
			mustRun(t, inst, trivialCells[i%len(trivialCells)])
		}
		out := output(t, inst, "gc.collect()\nprint(sys.getallocatedblocks() - blocks0, len(linecache.cache) - entries0)")
		f := strings.Fields(out)
		if len(f) != 2 {
			t.Fatalf("got %q", out)
		}
		blocks, _ := strconv.Atoi(f[0])
		entries, _ := strconv.Atoi(f[1])
		t.Logf("after %d trivial cells: %d more allocated blocks, %d more linecache entries", cells, blocks, entries)
		// Not zero: the measuring cells' own code and a dict resize may
		// add a few; a block a cell is 2,000.
		if blocks > cells/20 || entries > 0 {
			t.Fatalf("the guest heap grew by %d blocks (%d linecache entries) over %d trivial cells", blocks, entries, cells)
		}
	})
}

// TestCellSourceKept: the cells whose lines may be shown later keep them
// in linecache, with trivial cells (which drop theirs) run in between:
// functions, lambdas and generators from earlier cells, a raising cell,
// an exception a cell caught and stored, and a cell that the compile
// cache renamed.
func TestCellSourceKept(t *testing.T) {
	between := func(t *testing.T, inst runtimes.Instance) {
		for i := range 10 {
			mustRun(t, inst, trivialCells[i%len(trivialCells)])
		}
	}
	cases := []struct {
		name   string
		setup  []string // cells that must complete, then trivial cells
		code   string   // the cell whose output is checked
		failed bool     // whether code must fail
		want   []string // in code's output
	}{
		{
			name:   "function from an earlier cell",
			setup:  []string{"def f(d):\n    return 1 / d"},
			code:   "f(0)",
			failed: true,
			want:   []string{", line 2, in f\n    return 1 / d\n", "ZeroDivisionError"},
		},
		{
			name:   "raising cell",
			code:   "x = 1\nraise ValueError('boom')",
			failed: true,
			want:   []string{", line 2, in <module>\n    raise ValueError('boom')\n", "ValueError: boom"},
		},
		{
			name:   "lambda",
			setup:  []string{"h = lambda: 1 / 0"},
			code:   "h()",
			failed: true,
			want:   []string{"in <lambda>\n    h = lambda: 1 / 0\n"},
		},
		{
			name:   "generator expression",
			setup:  []string{"gen = (1 / v for v in [1, 0])"},
			code:   "list(gen)",
			failed: true,
			want:   []string{"in <genexpr>\n    gen = (1 / v for v in [1, 0])\n"},
		},
		{
			name:  "inspect.getsource",
			setup: []string{"def g(a):\n    return a * 2"},
			code:  "import inspect\nprint(repr(inspect.getsource(g)))",
			want:  []string{"'def g(a):\\n    return a * 2'\n"},
		},
		{
			// The cell completed, but err's traceback goes through its frame.
			name:  "stored exception",
			setup: []string{"try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    err = e"},
			code:  "import traceback\ntraceback.print_exception(err)",
			want:  []string{", line 2, in <module>\n    1 / 0\n", "ZeroDivisionError: division by zero"},
		},
		{
			// The third run of a short cell is a hit of the compile
			// cache, which renames its code objects to the new cell.
			name:   "renamed by the compile cache",
			setup:  []string{"def k(): return 1 / 0", "def k(): return 1 / 0", "def k(): return 1 / 0", "print(k.__code__.co_filename)"},
			code:   "k()",
			failed: true,
			want:   []string{"in k\n    def k(): return 1 / 0\n"},
		},
	}
	onEnginesT(t, func(t *testing.T, inst runtimes.Instance) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var name string // the last setup cell's output
				for _, s := range c.setup {
					name = output(t, inst, s)
				}
				between(t, inst)
				r, o := run(t, inst, c.code)
				out := r.out.String()
				if o.Failed != c.failed {
					t.Fatalf("failed = %v, want %v: %s", o.Failed, c.failed, out)
				}
				for _, w := range c.want {
					if !strings.Contains(out, w) {
						t.Errorf("output lacks %q:\n%s", w, out)
					}
				}
				if c.name == "renamed by the compile cache" {
					// The function is the third cell's, not the second's
					// (whose code the cache holds).
					if name == "" || !strings.Contains(out, `File "`+strings.TrimSpace(name)+`", line 1, in k`) {
						t.Errorf("traceback does not name %q:\n%s", strings.TrimSpace(name), out)
					}
				}
				between(t, inst)
			})
		}
	})
}

// TestStoredFrameSource: what run_cell leaves out (its doc comment): a
// trivial cell that stores its own frame drops its lines like any other,
// so a later look-up finds no source, as for code run by exec().
func TestStoredFrameSource(t *testing.T) {
	onEnginesT(t, func(t *testing.T, inst runtimes.Instance) {
		mustRun(t, inst, "import sys, linecache\nfr = sys._getframe()")
		out := output(t, inst, "print(repr(linecache.getline(fr.f_code.co_filename, 2)), fr.f_code.co_filename in linecache.cache)")
		if out != "'' False\n" {
			t.Fatalf("got %q, want the stored frame's cell forgotten", out)
		}
		// A cell that is still running has its lines.
		out = output(t, inst, "print(repr(linecache.getline(sys._getframe().f_code.co_filename, 1)))")
		if !strings.Contains(out, "linecache.getline(sys._getframe()") {
			t.Fatalf("a running cell's lines: got %q", out)
		}
	})
}
