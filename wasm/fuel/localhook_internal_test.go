package fuel

import "testing"

// hookCallers returns, per defined function of an instrumented module,
// how many direct calls to fn its code makes, and the last body's bytes.
func hookCallers(t *testing.T, bin []byte, fn uint32) (calls []int, last []byte) {
	t.Helper()
	m := &module{bin: bin, hook: -1}
	if err := m.parseSections(); err != nil {
		t.Fatal(err)
	}
	r := m.reader(m.section(secCode))
	n, _ := r.u32()
	var in instr
	for i := uint32(0); i < n; i++ {
		size, _ := r.u32()
		last = r.b[r.off : r.off+int(size)]
		br := &reader{b: last, base: r.base + r.off}
		r.off += int(size)
		k, _ := br.u32()
		for ; k > 0; k-- {
			br.u32()
			br.byte()
		}
		c := 0
		for !br.eof() {
			if err := br.next(&in); err != nil {
				t.Fatal(err)
			}
			if in.op == 0x10 && in.fn == fn {
				c++
			}
		}
		calls = append(calls, c)
	}
	return calls, last
}

// With Options.LocalHook the pass appends one function, (func call
// $hook), which is the only caller of the hook, and the checks call it;
// without, the checks call the hook itself. The module below has one
// function (index 1, after the hook import) with a loop.
func TestLocalHookShape(t *testing.T) {
	bin := []byte{0, 'a', 's', 'm', 1, 0, 0, 0,
		1, 4, 1, 0x60, 0, 0, // type 0: () -> ()
		2, 17, 1, 8, 'w', 'a', 's', 'm', 'e', 'v', 'a', 'l', 4, 'f', 'u', 'e', 'l', 0, 0, // the hook
		3, 2, 1, 0, // function 1: type 0
		10, 7, 1, 5, 0, 0x03, 0x40, 0x0b, 0x0b, // (loop end)
	}
	for _, local := range []bool{false, true} {
		out, st, err := instrument(bin, Options{LocalHook: local})
		if err != nil {
			t.Fatal(err)
		}
		if st.hook != 0 {
			t.Fatalf("hook %d, want 0", st.hook)
		}
		calls, last := hookCallers(t, out, st.hook)
		if !local {
			if st.call != st.hook || len(calls) != 1 || calls[0] != 2 {
				t.Errorf("calls the hook %v (entry and loop: 2 each), checks call %d", calls, st.call)
			}
			continue
		}
		if st.call != 2 || len(calls) != 2 || calls[0] != 0 || calls[1] != 1 {
			t.Fatalf("hook calls per function %v (want [0 1]); checks call %d, want 2", calls, st.call)
		}
		if want := []byte{0x00, 0x10, 0x00, 0x0b}; string(last) != string(want) {
			t.Errorf("the added function is % x, want % x", last, want)
		}
		if c, _ := hookCallers(t, out, st.call); c[0] != 2 || c[1] != 0 {
			t.Errorf("calls to the added function per function %v, want [2 0]", c)
		}
	}
}
