package python_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestCellFastCompile: the prelude compiles a cell from its text when it
// can tell its last statement from the text (_fast_compile), and the code it
// makes is the code of the AST path (_ast_compile), byte for byte
// (marshal); cells it cannot tell go through the AST.
func TestCellFastCompile(t *testing.T) {
	inst, _ := newInstance(t)
	cells := []struct {
		code string
		fast bool
	}{
		{"x = 1", true},
		{"x", true},
		{"print(1)", true},
		{"x = 1\nx", true},
		{"# note\n\nx  # c\n# d\n", true},
		{"def f():\n    return 1\nf()", true},
		{"import os\nos.getcwd()", true},
		{"for i in range(3):\n    i", true},
		{"if a:\n    x\nelif b:\n    y\nelse:\n    z", true},
		{"try:\n    x\nexcept E:\n    pass", true},
		{"try:\n    x\nfinally:\n    y", true},
		{"await f()", true},
		{"x = await f()", true},
		{"@dec\ndef f(): pass", true},
		{"x: int = 1", true},
		{"x.y[0] += 2", true},
		{"x[0].y = 1", true},
		{"a, b = 1, 2", true},
		{"lambda: 1", true},
		{"lambda x=1: x", true},
		{"f(x=1)", true},
		{"x <<= 1", true},
		{"x <= 1", true},
		{"'''doc'''\nx", true},
		{"s = '''\nx = 1\n'''\ns", true},
		{"from __future__ import annotations\ndef f(a: int): pass\nf", true},
		{"print(1)\nprint(2)", true},
		// Left to the AST, and compiled right.
		{"f(\n)", false},
		{"f(\na=1)", false},
		{"[x\nfor x in y]", false},
		{"(a if b\nelse c)", false},
		{"x = (a if b\nelse c)", false},
		{"(\n1)", false},
		{"*a, b", false},
		{"x;", false},
		{"x  # c;", false},
		{"x = 1; y", false},
		{"x\\\n+ 1", false},
		{"a\r\nb", false},
		{"s = '''\nx\n'''", false},
	}
	codes := make([]string, len(cells))
	for i, c := range cells {
		codes[i] = c.code
	}
	js, _ := json.Marshal(codes)
	check := `import _wasmeval_prelude as p, json, marshal, warnings
def _same(c):
    fast = p._fast_compile(c, "<t>", c.splitlines(True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        slow = p._ast_compile(c, "<t>")
    m = lambda co: None if co is None else marshal.dumps(co)
    return [fast is not None, fast is None or (m(fast[0]), m(fast[1])) == (m(slow[0]), m(slow[1]))]
print(json.dumps([_same(c) for c in json.loads(` + fmt.Sprintf("%q", js) + `)]))`
	r, o := run(t, inst, check)
	if o.Failed {
		t.Fatalf("check failed: %s", r.out.String())
	}
	var got [][2]bool
	if err := json.Unmarshal([]byte(r.out.String()), &got); err != nil || len(got) != len(cells) {
		t.Fatalf("%v: %q", err, r.out.String())
	}
	for i, c := range cells {
		if got[i][0] != c.fast {
			t.Errorf("%q: fast path %v, want %v", c.code, got[i][0], c.fast)
		}
		if !got[i][1] {
			t.Errorf("%q: the fast path's code differs from the AST path's", c.code)
		}
	}
}

// TestCellCompileBehaviour: what a cell shows is the same whichever way it
// was compiled, and a repeated cell (its code from the cache) has its own
// name in tracebacks and warns again.
func TestCellCompileBehaviour(t *testing.T) {
	inst, _ := newInstance(t)
	cellName := regexp.MustCompile(`File "(<cell-\d+>)"`)
	var names []string
	for range 3 { // the third run's code comes from the cache
		r, o := run(t, inst, "def g():\n    return 1/0\ng()")
		m := cellName.FindAllStringSubmatch(r.out.String(), -1)
		if !o.Failed || len(m) != 2 || m[0][1] != m[1][1] || !strings.Contains(r.out.String(), "return 1/0") {
			t.Fatalf("want a ZeroDivisionError in g, both frames in this cell, with its source line; got %q", r.out.String())
		}
		names = append(names, m[0][1])
	}
	if names[0] == names[1] || names[1] == names[2] {
		t.Errorf("a repeated cell has the name of the one before in its traceback: %v", names)
	}
	for i := range 3 {
		r, o := run(t, inst, "1 is 1")
		if o.Failed || !strings.Contains(r.out.String(), "SyntaxWarning") {
			t.Errorf("run %d of a cell that warns: %+v %q", i+1, o, r.out.String())
		}
	}
	for _, c := range []struct{ code, result string }{
		{"[x\nfor x in range(3)]", "[0, 1, 2]"},
		{"a = [1]\n*a, 2", "(1, 2)"},
		{"t = (1 if True\nelse 2)\nt", "1"},
		{"try:\n    q = 1\nexcept ValueError:\n    pass", ""},
		{"q += 1\nq", "2"},
		{"q += 1\nq", "3"},
		{"q += 1\nq", "4"},
		{"_", "4"},
		{"q;", ""},
		{"import asyncio\nawait asyncio.sleep(0)\nq * 2", "8"},
		{"'''doc'''\nq", "4"},
		{"x: int = 5", ""},
		{"lambda: 1", "<lambda>"},
	} {
		r, o := run(t, inst, c.code)
		got := ""
		if len(r.result) == 1 {
			got = r.result[0]["text/plain"]
		}
		if o.Failed || len(r.result) > 1 || !strings.Contains(got, c.result) || (c.result == "") != (got == "") {
			t.Errorf("%q: result %q (%q, %+v), want %q", c.code, got, r.out.String(), o, c.result)
		}
	}
}

// BenchmarkUniqueCell: a trivial cell that is new each time (x = 0, x = 1,
// ...), which the prelude's cache of compiled cells does not hold, unlike
// BenchmarkTrivialCell's. fuel/op is the guest's work (deterministic).
func BenchmarkUniqueCell(b *testing.B) {
	inst, _ := newInstance(b)
	ctx := context.Background()
	var fuel int64
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		o, err := inst.Run(ctx, fmt.Sprintf("x = %d", i), nopSink{})
		if err != nil || o.Failed {
			b.Fatalf("%v %+v", err, o)
		}
		fuel += o.FuelUsed
		i++
	}
	b.ReportMetric(float64(fuel)/float64(b.N), "fuel/op")
}
