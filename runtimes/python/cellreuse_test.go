package python_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/wasm"
)

// cellNumber runs a cell that prints its own number (N in <cell-N>).
func cellNumber(t *testing.T, inst runtimes.Instance) int {
	t.Helper()
	out := output(t, inst, "import _wasmeval_prelude\nprint(_wasmeval_prelude._cell_count)")
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("cell number: %q", out)
	}
	return n
}

// TestRepeatedCellRunsCachedCode: a short cell that defines no code and
// handles no exception, run a third time with the same text, runs the
// code compiled for its second run (the first caches nothing; the
// second compiles it into the cache under its own name), so what looks
// at its frame sees that cell's name (issue 15: renaming the cached code
// to each new cell made two code objects a trivial cell).
func TestRepeatedCellRunsCachedCode(t *testing.T) {
	onEnginesT(t, func(t *testing.T, inst runtimes.Instance) {
		// Not sys._getframe(): a name ending in e before "(" reads as a
		// call of a literal (1e5(), which warns), and is not cached.
		mustRun(t, inst, "import sys\nfrm = sys._getframe")
		n := cellNumber(t, inst)
		const code = "print(frm(0).f_code.co_filename)"
		var got []string
		for range 4 {
			got = append(got, strings.TrimSpace(output(t, inst, code)))
		}
		want := []string{
			fmt.Sprintf("<cell-%d>", n+1),
			fmt.Sprintf("<cell-%d>", n+2),
			fmt.Sprintf("<cell-%d>", n+2),
			fmt.Sprintf("<cell-%d>", n+2),
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("the cells' code is named %v, want %v", got, want)
		}
		// A cell that defines code is renamed to each new cell, for
		// the tracebacks and inspect.getsource of later cells.
		const def = "def k(): return frm(0).f_code.co_filename"
		for range 3 {
			mustRun(t, inst, def)
		}
		if got, want := strings.TrimSpace(output(t, inst, "print(k())")), fmt.Sprintf("<cell-%d>", n+7); got != want {
			t.Fatalf("a function of a cell compiled from the cache is named %s, want %s", got, want)
		}
	})
}

// TestRepeatedCellTraceback: a cell run from the compile cache under an
// earlier cell's name still names itself in its traceback, with its
// lines, and keeps them in linecache under its own name; a warning it
// issues names the cell that compiled it (whose text is the same).
func TestRepeatedCellTraceback(t *testing.T) {
	onEnginesT(t, func(t *testing.T, inst runtimes.Instance) {
		mustRun(t, inst, "import linecache, warnings\ndef f(d):\n    return 1 / d")
		cases := []struct {
			code string
			want []string // in the output of cell N; %[1]d is N
		}{
			{"1/0", []string{"File \"<cell-%[1]d>\", line 1, in <module>\n    1/0\n", "ZeroDivisionError: division by zero"}},
			{"f(0)", []string{"File \"<cell-%[1]d>\", line 1, in <module>\n    f(0)\n", ", line 3, in f\n    return 1 / d\n"}},
			{"y = 2\nint('no')", []string{"File \"<cell-%[1]d>\", line 2, in <module>\n    int('no')\n", "ValueError: invalid literal"}},
		}
		for _, c := range cases {
			t.Run(c.code, func(t *testing.T) {
				n := cellNumber(t, inst)
				for i := 1; i <= 4; i++ { // the third and fourth run cached code
					r, o := run(t, inst, c.code)
					out := r.out.String()
					if !o.Failed {
						t.Fatalf("run %d did not fail: %s", i, out)
					}
					for _, w := range c.want {
						if w = strings.ReplaceAll(w, "%[1]d", strconv.Itoa(n+i)); !strings.Contains(out, w) {
							t.Fatalf("run %d: %q is not in its traceback:\n%s", i, w, out)
						}
					}
					if i > 2 && strings.Contains(out, fmt.Sprintf("<cell-%d>", n+2)) {
						t.Fatalf("run %d names the cell whose code it ran:\n%s", i, out)
					}
				}
				// Each raising cell keeps its lines under its own name.
				check := "print([linecache.getline(f'<cell-{i}>', 1) for i in range(" + strconv.Itoa(n+1) + ", " + strconv.Itoa(n+5) + ")])"
				first := strings.SplitAfter(c.code, "\n")[0]
				want := "[" + strings.Repeat(pyRepr(first)+", ", 3) + pyRepr(first) + "]\n"
				if got := output(t, inst, check); got != want {
					t.Fatalf("linecache holds %s, want %s", got, want)
				}
			})
		}
		t.Run("warning", func(t *testing.T) {
			mustRun(t, inst, "warnings.simplefilter('always')")
			n := cellNumber(t, inst)
			for i := 1; i <= 4; i++ {
				out := output(t, inst, "warnings.warn('w')")
				k := n + min(i, 2) // from the third run on, the code of the second
				if w := fmt.Sprintf("<cell-%d>:1: UserWarning: w\n  warnings.warn('w')\n", k); !strings.Contains(out, w) {
					t.Fatalf("run %d: %q is not in its output:\n%s", i, w, out)
				}
			}
		})
	})
}

// pyRepr is Python's repr of a short ASCII str without quotes or
// backslashes in it, but for a final newline.
func pyRepr(s string) string {
	return "'" + strings.ReplaceAll(s, "\n", `\n`) + "'"
}

// TestCachedCellKeepsEarlierLines: the lines a raising cell kept stay
// when a later cell with the same text runs its cached code and
// completes (it puts them under that cell's name while it runs, and
// takes away only what it put there).
func TestCachedCellKeepsEarlierLines(t *testing.T) {
	onEnginesT(t, func(t *testing.T, inst runtimes.Instance) {
		mustRun(t, inst, "import linecache")
		n := cellNumber(t, inst)
		for i := 1; i <= 2; i++ { // w is not defined yet: both raise
			if r, o := run(t, inst, "v = w"); !o.Failed {
				t.Fatalf("run %d did not fail: %s", i, r.out.String())
			}
		}
		mustRun(t, inst, "w = 5")
		mustRun(t, inst, "v = w") // the code compiled by cell n+2
		got := output(t, inst, fmt.Sprintf("print(repr(linecache.getline('<cell-%d>', 1)), repr(linecache.getline('<cell-%d>', 1)), v)", n+2, n+4))
		if want := "'v = w' '' 5\n"; got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	})
}

// TestStreamsBetweenCells: a stream a cell set to None or deleted is the
// session's own again in the next cell, and a stream a cell put in place
// of sys.stdout is flushed at the end of each cell (one whose flush
// fails does not fail the cell).
func TestStreamsBetweenCells(t *testing.T) {
	onEnginesT(t, func(t *testing.T, inst runtimes.Instance) {
		mustRun(t, inst, "import sys\nsys.stdout = None")
		if got := output(t, inst, "print('back')"); got != "back\n" {
			t.Fatalf("after sys.stdout = None: %q", got)
		}
		mustRun(t, inst, "del sys.stderr")
		r, o := run(t, inst, "1/0")
		if !o.Failed || !strings.Contains(r.out.String(), "ZeroDivisionError") {
			t.Fatalf("after del sys.stderr: failed %v, %q", o.Failed, r.out.String())
		}
		mustRun(t, inst, `class Held:
    def __init__(self):
        self.parts = []
    def write(self, s):
        self.parts.append(s)
        return len(s)
    def flush(self):
        sys.__stdout__.write('flushed: ' + ''.join(self.parts))
        self.parts.clear()
sys.stdout = Held()`)
		if got := output(t, inst, "print('held')"); got != "flushed: held\n" {
			t.Fatalf("a stream of the cell's: %q", got)
		}
		mustRun(t, inst, "def bad():\n    raise OSError('no flush')\nsys.stdout.flush = bad")
		if got := output(t, inst, "sys.__stdout__.write('still runs\\n')"); got != "still runs\n" {
			t.Fatalf("a stream whose flush fails: %q", got)
		}
		mustRun(t, inst, "sys.stdout = sys.__stdout__")
		if got := output(t, inst, "print('own')"); got != "own\n" {
			t.Fatalf("the session's own stream again: %q", got)
		}
	})
}

// TestCompileCacheWarnings: a cell whose compiling warns is not cached,
// so it warns each time it runs (the third run would be a cache hit);
// cells that only call or subscript names are cached (the cache took a
// name ending in e or a digit before "(" or "[" for a literal, so that
// range(3) or x.title() were compiled every time). The warnings are
// CPython 3.11's: SyntaxWarning, shown each time.
func TestCompileCacheWarnings(t *testing.T) {
	warns := []string{
		"None()", "1j()", "0xff()", "...[0]", "(1, 2)(3)", "'a'(1)", "1.5[0]", "{1}[0]",
		"[1, 2]['a']", "x is 1", "1 is x", "x is not -1", "x is b'a'", "assert (1, 'a')",
		"1if 1 else 2",
	}
	cached := []string{
		"range(3)", "isinstance(x, int)", "print(type(x).__name__.title())", "y = x is None", "x2 = [x]\nx2[0]",
		"str(x).title()", "x is True",
	}
	onEnginesT(t, func(t *testing.T, inst runtimes.Instance) {
		mustRun(t, inst, "x = 1\nimport _wasmeval_prelude as _p")
		for _, code := range warns {
			for i := 1; i <= 3; i++ {
				if r, _ := run(t, inst, code); !strings.Contains(r.out.String(), "SyntaxWarning") {
					t.Errorf("run %d of %q does not warn: %q", i, code, r.out.String())
				}
			}
		}
		for _, code := range cached {
			mustRun(t, inst, code)
			mustRun(t, inst, code)
			if got := output(t, inst, "print("+pyRepr(code)+" in _p._cache)"); got != "True\n" {
				t.Errorf("%q run twice is not in the compile cache", code)
			}
		}
	})
}

// TestRepeatedCellTracebackAfterNested: a cell run from the compile cache
// that raises after a nested cell ran (while it waited in a host call)
// names itself, not the nested cell, which counted on.
func TestRepeatedCellTracebackAfterNested(t *testing.T) {
	for _, e := range wasm.Engines() {
		t.Run("engine="+e, func(t *testing.T) {
			inst := nestedInstanceOn(t, engineRuntime(t, e, false))
			mustRun(t, inst, callHelper)
			n := cellNumber(t, inst)
			for i := range 3 { // each run is two cells: it, then the nested one
				self := n + 1 + 2*i
				r, o := run(t, inst, "nest('y = 2')\n1/0")
				out := r.out.String()
				if want := fmt.Sprintf("File \"<cell-%d>\", line 2, in <module>\n    1/0\n", self); !o.Failed || !strings.Contains(out, want) {
					t.Fatalf("run %d: %q is not in its traceback:\n%s", i+1, want, out)
				}
			}
		})
	}
}
