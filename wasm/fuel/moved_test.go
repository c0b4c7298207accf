package fuel_test

import (
	"context"
	"testing"

	"github.com/wasmeval/wasmeval/wasm/fuel"
)

// movedModule exports spin(n) (function 1), which calls inner (2) once in
// its loop's straight-line run and once outside any run (inside an if);
// inner calls leaf (3); without hook, there is no import and the
// indices are one less. exported adds exports for inner and leaf, which
// keeps their entry charges at their entries; without them, with
// ChargeOnlyAtEntry, the pass moves those charges to the call sites.
func movedModule(exported, hook bool) []byte {
	f := byte(1) // the index of spin; inner and leaf follow
	imports := sec(2, vec(importFunc("wasmeval", "fuel", 0)))
	if !hook { // for AddImport
		f, imports = 0, nil
	}
	exports := [][]byte{export("spin", 0, uint32(f))}
	if exported {
		exports = append(exports, export("inner", 0, uint32(f+1)), export("leaf", 0, uint32(f+2)))
	}
	return module(
		commonTypes, imports,
		sec(3, vec(u(1), u(0), u(0))),
		sec(7, vec(exports...)),
		sec(10, vec(
			body(nil,
				opLoop, empty,
				opCall, f+1, // in the loop's run
				opLocalGet, 0,
				opIf, empty,
				opCall, f+1, // outside any run
				opEnd,
				opLocalGet, 0, i32c(1), 0x6b /* i32.sub */, opLocalTee, 0, opBrIf, 0,
				opEnd,
				opEnd),
			body(nil, opCall, f+2, opEnd),  // inner: entry cost 2
			body(nil, opNop, opNop, opEnd), // leaf: entry cost 3
		)),
	)
}

// TestMovedEntriesChargeTheSame: with ChargeOnlyAtEntry, the entry charge
// of a function only direct calls reach is made at its call sites (merged
// into the check of the run a call is in, or a charge of its own before a
// call outside any run), and the fuel a call consumes is exactly what it
// was with the charge at the function's entry: the module where the same
// functions are exported (so their charges stay put) consumes the same.
func TestMovedEntriesChargeTheSame(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts fuel.Options
		hook bool
	}{
		{"charge only at entry", fuel.Options{ChargeOnlyAtEntry: true}, true},
		{"and skip leaf entries", fuel.Options{ChargeOnlyAtEntry: true, SkipLeafEntries: true}, true},
		{"added hook import", fuel.Options{ChargeOnlyAtEntry: true, AddImport: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const initial = 1 << 40
			tc.opts.InitialFuel = initial
			for _, n := range []uint64{1, 2, 17, 1000} {
				var used [2]int64
				for i, exported := range []bool{false, true} {
					mt := &meter{}
					rt := newRuntime(t, mt, 0)
					m := instantiate(t, rt, mustInstrument(t, movedModule(exported, tc.hook), tc.opts))
					if _, err := m.ExportedFunction("spin").Call(context.Background(), n); err != nil {
						t.Fatal(err)
					}
					used[i] = initial - fuelLeft(m)
				}
				// Per iteration: the loop's run (call, local.get, if: 3)
				// and inner twice (2, plus leaf's 3 unless leaf entries
				// are skipped); the tail after the if is in no run. The
				// entry: loop (1).
				leaf := int64(3)
				if tc.opts.SkipLeafEntries {
					leaf = 0
				}
				want := 1 + int64(n)*(3+2*(2+leaf))
				if used[0] != used[1] || used[0] != want {
					t.Errorf("spin(%d): moved charges consumed %d fuel, charges at the entries %d, want %d for both", n, used[0], used[1], want)
				}
			}
		})
	}
}

// TestMovedEntriesAndLoopLocal: in movedModule with the options
// runtimes/python uses (ChargeOnlyAtEntry, SkipLeafEntries), inner (reached by direct calls only) has no entry charge of its own,
// unless it is exported; spin, whose loop header tests the counter, gets
// an i64 local for the new value instead of reading the global back.
func TestMovedEntriesAndLoopLocal(t *testing.T) {
	opts := fuel.Options{ChargeOnlyAtEntry: true, SkipLeafEntries: true}
	for _, exported := range []bool{false, true} {
		bodies := codeBodies(mustInstrument(t, movedModule(exported, true), opts))
		spin, inner := bodies[0], bodies[1]
		// The module has no globals: the fuel global is global 0.
		if got, want := startsWith(inner, 0x00 /* no locals */, opGlobalGet, 0x00), exported; got != want {
			t.Errorf("exported=%v: inner starts with an entry charge: %v, want %v (body % x)", exported, got, want, inner)
		}
		if !startsWith(spin, 0x01, 0x01, i64) {
			t.Errorf("exported=%v: spin does not declare one i64 local for its loop check (body % x)", exported, spin)
		}
	}
}

func startsWith(b []byte, prefix ...byte) bool {
	return len(b) >= len(prefix) && string(b[:len(prefix)]) == string(prefix)
}

// codeBodies returns the function bodies (without their sizes) of a
// well-formed module.
func codeBodies(bin []byte) [][]byte {
	readU32 := func(b []byte) (uint32, int) {
		var v uint32
		for i := 0; ; i++ {
			v |= uint32(b[i]&0x7f) << (7 * i)
			if b[i]&0x80 == 0 {
				return v, i + 1
			}
		}
	}
	for b := bin[8:]; len(b) > 0; {
		size, n := readU32(b[1:])
		content := b[1+n : 1+n+int(size)]
		if b[0] == 10 {
			count, k := readU32(content)
			content = content[k:]
			var bodies [][]byte
			for range count {
				size, k := readU32(content)
				bodies = append(bodies, content[k:k+int(size)])
				content = content[k+int(size):]
			}
			return bodies
		}
		b = b[1+n+int(size):]
	}
	return nil
}
