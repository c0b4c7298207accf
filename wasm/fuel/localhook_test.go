package fuel_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/wasmeval/wasmeval/wasm/fuel"
)

// With Options.LocalHook the checks call a function the pass adds, which
// calls the hook: the same fuel is consumed and the hook runs at the same
// points (the same counter value at each call), whatever the slice and
// whatever the other options, wrapped loops included.
func TestLocalHookSameFuel(t *testing.T) {
	for _, opts := range []fuel.Options{{}, {SkipLeafEntries: true, ChargeOnlyAtEntry: true},
		{SkipLeafEntries: true, ChargeOnlyAtEntry: true, WrapLoops: true}} {
		old := mustInstrument(t, shapesModule, opts)
		local := opts
		local.LocalHook = true
		bin := mustInstrument(t, shapesModule, local)
		if slices.Equal(old, bin) {
			t.Fatal("LocalHook changed nothing")
		}
		for _, fn := range []string{"edges", "nested", "result", "tabled", "ret"} {
			for _, n := range []int64{1, 2, 7, 40} {
				for _, slice := range []int64{1, 3, 50, 1 << 30} {
					name := fmt.Sprintf("%+v/%s(%d)/slice=%d", opts, fn, n, slice)
					wantRes, wantFuel, wantSeen := runShape(t, old, fn, n, slice)
					gotRes, gotFuel, gotSeen := runShape(t, bin, fn, n, slice)
					if gotRes != wantRes {
						t.Errorf("%s: result %d, want %d", name, gotRes, wantRes)
					}
					if gotFuel != wantFuel || !slices.Equal(gotSeen, wantSeen) {
						t.Errorf("%s: %d fuel, hook at %v; calling the import: %d fuel, hook at %v", name, gotFuel, gotSeen, wantFuel, wantSeen)
					}
					if slice == 1 && len(gotSeen) == 0 {
						t.Errorf("%s: the hook never ran", name)
					}
				}
			}
		}
	}
}

// With AddImport too: the added function follows the renumbered ones.
func TestLocalHookAddImport(t *testing.T) {
	// count(n): a loop that counts n down and returns how often it ran,
	// calling twice() (a direct call that AddImport renumbers) each time.
	bin := module(
		sec(1, vec(functype([]byte{i32}, []byte{i32}))),
		sec(3, vec(u(0), u(0))),
		sec(7, vec(export("count", 0, 0))),
		sec(10, vec(
			body([][2]int{{1, i32}},
				opBlock, empty,
				opLoop, empty,
				opLocalGet, 0, 0x45 /* i32.eqz */, opBrIf, 1,
				opLocalGet, 0, i32c(1), 0x6b /* i32.sub */, opLocalSet, 0,
				opLocalGet, 1, opCall, 1, opLocalSet, 1,
				opBr, 0,
				opEnd,
				opEnd,
				opLocalGet, 1,
				opEnd),
			body(nil, opLocalGet, 0, i32c(1), 0x6a /* i32.add */, opEnd),
		)),
	)
	opts := fuel.Options{AddImport: true}
	old := mustInstrument(t, bin, opts)
	opts.LocalHook = true
	local := mustInstrument(t, bin, opts)
	for _, slice := range []int64{1, 4, 1000} {
		wantRes, wantFuel, wantSeen := runShape(t, old, "count", 9, slice)
		gotRes, gotFuel, gotSeen := runShape(t, local, "count", 9, slice)
		if gotRes != 9 || wantRes != 9 {
			t.Errorf("slice %d: count(9) = %d, calling the import %d; want 9", slice, gotRes, wantRes)
		}
		if gotFuel != wantFuel || !slices.Equal(gotSeen, wantSeen) || len(gotSeen) == 0 {
			t.Errorf("slice %d: %d fuel, hook at %v; calling the import: %d fuel, hook at %v", slice, gotFuel, gotSeen, wantFuel, wantSeen)
		}
	}
}

// CPython consumes the same fuel with a local hook and calls the hook at
// the same points.
func TestPythonLocalHookSameFuel(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles python.wasm twice")
	}
	bin, _ := pythonArtifact(t)
	opts := fuel.Options{AddImport: true, SkipLeafEntries: true, ChargeOnlyAtEntry: true}
	want := pythonTraces(t, mustInstrument(t, bin, opts))
	opts.LocalHook = true
	got := pythonTraces(t, mustInstrument(t, bin, opts))
	t.Logf("calling the import: %+v; local hook: %+v", want, got)
	if !slices.Equal(got, want) {
		t.Errorf("local hook: %+v, want (calling the import) %+v", got, want)
	}
}
