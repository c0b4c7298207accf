package fuel

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// hotLoopsWithHook counts, in an instrumented module, the innermost loops
// (those with no loop inside) whose code calls the hook, and all the
// innermost loops.
func hotLoopsWithHook(t *testing.T, bin []byte, hook uint32) (withHook, loops int) {
	t.Helper()
	m := &module{bin: bin, hook: -1}
	if err := m.parseSections(); err != nil {
		t.Fatal(err)
	}
	r := m.reader(m.section(secCode))
	n, _ := r.u32()
	type frame struct{ loop, inner, calls bool }
	var in instr
	for i := uint32(0); i < n; i++ {
		size, _ := r.u32()
		br := &reader{b: r.b[r.off : r.off+int(size)], base: r.base + r.off}
		r.off += int(size)
		k, _ := br.u32()
		for ; k > 0; k-- {
			br.u32()
			br.byte()
		}
		var stack []frame
		for !br.eof() {
			if err := br.next(&in); err != nil {
				t.Fatal(err)
			}
			switch {
			case in.flags&flagOpen != 0:
				if in.flags&flagLoop != 0 {
					for j := range stack {
						stack[j].inner = true
					}
				}
				stack = append(stack, frame{loop: in.flags&flagLoop != 0})
			case in.flags&flagEnd != 0 && len(stack) > 0:
				f := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if f.loop && !f.inner {
					loops++
					if f.calls {
						withHook++
					}
				}
			case in.op == 0x10 && in.fn == hook:
				for j := range stack {
					stack[j].calls = true
				}
			}
		}
	}
	return withHook, loops
}

// With Options.WrapLoops almost no innermost loop of instrumented CPython
// calls the hook: the hook call of a wrapped loop sits in its wrappers,
// outside it. (By default every loop header calls it.)
func TestPythonHotLoopsHoldNoHookCall(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "python", "dist", "python.wasm.zst"))
	if errors.Is(err, os.ErrNotExist) {
		testenv.RequirePython(t)
	}
	if err != nil {
		t.Fatal(err)
	}
	d, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	defer d.Close()
	bin, err := d.DecodeAll(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{AddImport: true, SkipLeafEntries: true, ChargeOnlyAtEntry: true}
	old, oldSt, err := instrument(bin, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.WrapLoops = true
	out, st, err := instrument(bin, opts)
	if err != nil {
		t.Fatal(err)
	}
	oldWith, oldLoops := hotLoopsWithHook(t, old, oldSt.hook)
	with, loops := hotLoopsWithHook(t, out, st.hook)
	t.Logf("innermost loops calling the hook: %d of %d (header hooks: %d of %d); module %d bytes (header hooks: %d)",
		with, loops, oldWith, oldLoops, len(out), len(old))
	if oldWith != oldLoops || oldWith == 0 {
		t.Fatalf("header hooks: %d of %d innermost loops call the hook, want all", oldWith, oldLoops)
	}
	if with*20 > loops {
		t.Errorf("%d of %d innermost loops call the hook, want at most 5%%", with, loops)
	}
}
