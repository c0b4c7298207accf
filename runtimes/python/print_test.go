package python_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/benchreport/cputime"
	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/python"
)

// writesSink records each host write of text, by stream.
type writesSink struct{ writes []string }

func (w *writesSink) Stdout(s string)               { w.writes = append(w.writes, "out:"+s) }
func (w *writesSink) Stderr(s string)               { w.writes = append(w.writes, "err:"+s) }
func (w *writesSink) Display(runtimes.Bundle, bool) {}
func (w *writesSink) Status(string, string)         {}

// TestPrintWrites: a print to the session's own streams is one host write
// (wasmeval.emit), not one per value, sep and end (issue 15: print(x) was
// two), with the builtin's bytes, in the builtin's order against the other
// stream; the builtin's behaviour where the prelude's print hands over to
// it (another file, a replaced write, bad arguments, a failing str()).
func TestPrintWrites(t *testing.T) {
	inst, _ := newInstance(t)
	const failing = "class A:\n    def __str__(self): raise ValueError('no')\n"
	for _, tc := range []struct {
		code string
		want []string
	}{
		{"print(1)", []string{"out:1\n"}},
		{"print(1, 'a')", []string{"out:1 a\n"}},
		{"print()", []string{"out:\n"}},
		{"print(end='')", nil},
		{"print('a', 'b', sep='-', end='!')", []string{"out:a-b!"}},
		{"print(1, 2, sep=None, end=None)", []string{"out:1 2\n"}},
		{"import sys\nprint('o')\nprint('e', 1, file=sys.stderr)\nprint('o2')", []string{"out:o\n", "err:e 1\n", "out:o2\n"}},
		{failing + "try:\n    print('a', A(), 'b')\nexcept ValueError:\n    pass", []string{"out:a "}},
		{failing + "try:\n    print(A(), 'b')\nexcept ValueError:\n    pass", nil},
		{"import io, contextlib\nf = io.StringIO()\nwith contextlib.redirect_stdout(f):\n    print(1, 2)\nprint(repr(f.getvalue()))", []string{"out:'1 2\\n'\n"}},
		{"import sys\nsys.stdout = None\nprint(1)", nil},
		{"try:\n    print(foo=1)\nexcept TypeError as e:\n    print(e)", []string{"out:'foo' is an invalid keyword argument for print()\n"}},
		{"try:\n    print(1, sep=3)\nexcept TypeError as e:\n    print(e)", []string{"out:sep must be None or a string, not int\n"}},
		{"import sys\nw = []\nsys.stdout.write = w.append\nprint(1)\ndel sys.stdout.write\nprint(w)", []string{"out:['1', '\\n']\n"}},
		// Past 64 Ki characters, the pieces go apart: not copied into one.
		{"print('x' * 70000)", []string{"out:" + strings.Repeat("x", 70000), "out:\n"}},
	} {
		var sink writesSink
		o, err := inst.Run(context.Background(), tc.code, &sink)
		if err != nil || o.Failed {
			t.Fatalf("%s: %v %+v %q", tc.code, err, o, sink.writes)
		}
		if !slices.Equal(sink.writes, tc.want) {
			t.Errorf("%s:\nwrites %q\nwant   %q", tc.code, cut(sink.writes), cut(tc.want))
		}
	}

	// A str() that raises: the cell's traceback shows no frame of the
	// prelude's print, as none of the builtin's.
	var sink writesSink
	o, err := inst.Run(context.Background(), failing+"print('a', A())", &sink)
	if err != nil || !o.Failed {
		t.Fatalf("%v %+v", err, o)
	}
	all := strings.Join(sink.writes, "")
	if !strings.HasPrefix(all, "out:a err:") || !strings.Contains(all, "ValueError: no") || strings.Contains(all, "in print") || strings.Contains(all, "wasmeval") {
		t.Errorf("a failing str() in print: %q", all)
	}
}

// cut shortens long writes for a message.
func cut(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		if len(w) > 80 {
			w = fmt.Sprintf("%s...(%d bytes)", w[:40], len(w))
		}
		out[i] = w
	}
	return out
}

// BenchmarkPrintCell: a cell of print(1) in a warm session, and one of
// ten prints of two values each.
func BenchmarkPrintCell(b *testing.B) {
	for _, code := range []string{"print(1)", "for i in range(10):\n    print(i, 'a')"} {
		b.Run("cell="+strings.Fields(code)[0], func(b *testing.B) {
			onEngines(b, func(b *testing.B, r *python.Runtime) {
				inst := newInstanceOn(b, r, runtimes.InstanceOptions{})
				ctx := context.Background()
				b.ReportAllocs()
				cpu0 := cputime.Self()
				for b.Loop() {
					o, err := inst.Run(ctx, code, nopSink{})
					if err != nil || o.Failed {
						b.Fatalf("%v %+v", err, o)
					}
				}
				b.ReportMetric(float64(cputime.Self()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		})
	}
}
