package fuel_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero/api"

	"github.com/wasmeval/wasmeval/wasm/fuel"
)

// shapesModule exports functions of type (i32) -> i32 whose loops take
// every path the wrapping of loops rewrites (see the package doc): back
// edges by br and by br_if, from nested blocks, ifs and loops; exits that
// cross the wrappers by br, br_if and br_table, to a block, an outer loop
// and the function's own label; a loop with a result; and a loop a
// br_table names, which keeps its hook call in the header.
var shapesModule = module(
	sec(1, vec(
		functype(nil, nil),                 // 0: the hook
		functype([]byte{i32}, []byte{i32}), // 1
	)),
	hookImport,
	sec(3, vec(u(1), u(1), u(1), u(1), u(1))),
	sec(7, vec(export("edges", 0, 1), export("nested", 0, 2), export("result", 0, 3),
		export("tabled", 0, 4), export("ret", 0, 5))),
	sec(10, vec(
		// edges: br back edges, one from inside an if in a block; the exit
		// by br_if crosses the loop's wrappers.
		body([][2]int{{1, i32}},
			opBlock, empty,
			opLoop, empty,
			opLocalGet, 0, 0x45 /* i32.eqz */, opBrIf, 1,
			opLocalGet, 0, i32c(1), 0x6b /* i32.sub */, opLocalSet, 0,
			opLocalGet, 1, i32c(3), 0x6a /* i32.add */, opLocalSet, 1,
			opBlock, empty,
			opLocalGet, 0, i32c(1), 0x71, /* i32.and */
			opIf, empty,
			opLocalGet, 1, i32c(1), 0x6a, opLocalSet, 1,
			opBr, 2,
			opEnd,
			opEnd,
			opBr, 0,
			opEnd,
			opEnd,
			opLocalGet, 1,
			opEnd),
		// nested: the inner loop's conditional branch is a back edge of the
		// outer one; a return from inside the outer loop.
		body([][2]int{{2, i32}},
			opLoop, empty,
			opLocalGet, 0, 0x45, opIf, empty, opLocalGet, 2, opReturn, opEnd,
			opLocalGet, 0, i32c(1), 0x6b, opLocalSet, 0,
			i32c(5), opLocalSet, 1,
			opLoop, empty,
			opLocalGet, 2, i32c(1), 0x6a, opLocalSet, 2,
			opLocalGet, 1, i32c(1), 0x6b, opLocalTee, 1,
			0x45, opBrIf, 1,
			opBr, 0,
			opEnd,
			opEnd,
			opLocalGet, 2,
			opEnd),
		// result: a loop of type [] -> [i32], left at its end.
		body([][2]int{{1, i32}},
			opLoop, i32,
			opLocalGet, 1, opLocalGet, 0, 0x6a, opLocalSet, 1,
			opLocalGet, 0, i32c(1), 0x6b, opLocalTee, 0,
			opBrIf, 0,
			opLocalGet, 1,
			opEnd,
			opEnd),
		// tabled: the outer loop is named by a br_table inside the inner
		// one, which crosses the inner loop's wrappers; the inner loop is
		// left by a br to the outer one.
		body([][2]int{{1, i32}},
			opBlock, empty,
			opLoop, empty,
			opLocalGet, 0, 0x45, opBrIf, 1,
			opLocalGet, 0, i32c(1), 0x6b, opLocalSet, 0,
			opLoop, empty,
			opBlock, empty,
			opLocalGet, 1, i32c(1), 0x6a, opLocalTee, 1,
			i32c(3), 0x70, /* i32.rem_u */
			opBrTable, u(1), u(0), u(2),
			opEnd,
			opLocalGet, 1, i32c(5), 0x70, opBrIf, 0,
			opBr, 1,
			opEnd,
			opEnd,
			opEnd,
			opLocalGet, 1,
			opEnd),
		// ret: a br_if to the function's own label, with its result.
		body([][2]int{{1, i32}},
			opLoop, empty,
			opLocalGet, 1, i32c(2), 0x6a, opLocalSet, 1,
			opLocalGet, 1,
			opLocalGet, 0, i32c(1), 0x6b, opLocalTee, 0, 0x45,
			opBrIf, 1,
			opDrop,
			opBr, 0,
			opEnd,
			opUnreachable,
			opEnd),
	)),
)

// run calls fn(n) in bin with a hook that adds slice, and returns the
// result, the fuel consumed and the counter's value at each hook call.
func runShape(t *testing.T, bin []byte, fn string, n, slice int64) (uint64, int64, []int64) {
	t.Helper()
	var seen []int64
	mt := &meter{slice: slice}
	rt := newRuntime(t, mt, 0)
	m := instantiate(t, rt, bin)
	g := m.ExportedGlobal(fuel.DefaultGlobalExport)
	mt.onHook = func(context.Context, api.Module) { seen = append(seen, int64(g.Get())-slice) }
	res, err := m.ExportedFunction(fn).Call(context.Background(), uint64(n))
	if err != nil {
		t.Fatalf("%s(%d): %v", fn, n, err)
	}
	return res[0], int64(len(seen))*slice - fuelLeft(m), seen
}

// Wrapped loops (Options.WrapLoops) consume exactly the fuel that checks
// in the loop headers (the default) do and call the
// hook at the same points (the same counter value at each call), whatever
// the slice, including a slice smaller than a check's cost, which leaves
// the counter below zero after the hook.
func TestWrappedLoopsSameFuel(t *testing.T) {
	plain := instantiate(t, newRuntime(t, &meter{}, 0), shapesModule)
	for _, opts := range []fuel.Options{{}, {SkipLeafEntries: true, ChargeOnlyAtEntry: true}} {
		old, err := fuel.Instrument(shapesModule, opts)
		if err != nil {
			t.Fatal(err)
		}
		wrapped := opts
		wrapped.WrapLoops = true
		bin := mustInstrument(t, shapesModule, wrapped)
		if slices.Equal(old, bin) {
			t.Fatal("the pass wrapped no loop")
		}
		for _, fn := range []string{"edges", "nested", "result", "tabled", "ret"} {
			for _, n := range []int64{1, 2, 7, 40} {
				res, err := plain.ExportedFunction(fn).Call(context.Background(), uint64(n))
				if err != nil {
					t.Fatal(err)
				}
				for _, slice := range []int64{1, 2, 3, 7, 50, 1 << 30} {
					name := fmt.Sprintf("%+v/%s(%d)/slice=%d", opts, fn, n, slice)
					wantRes, wantFuel, wantSeen := runShape(t, old, fn, n, slice)
					gotRes, gotFuel, gotSeen := runShape(t, bin, fn, n, slice)
					if wantRes != res[0] || gotRes != res[0] {
						t.Errorf("%s: result %d, header hooks %d, uninstrumented %d", name, gotRes, wantRes, res[0])
					}
					if gotFuel != wantFuel || !slices.Equal(gotSeen, wantSeen) {
						t.Errorf("%s: %d fuel, hook at %v; header hooks: %d fuel, hook at %v", name, gotFuel, gotSeen, wantFuel, wantSeen)
					}
				}
			}
		}
	}
}

// CPython consumes the same fuel with wrapped loops as with header hooks
// and calls the hook at the same points, with a slice that leaves it
// running for a while between calls and with one smaller than most checks'
// costs (the counter stays below zero after the hook).
func TestPythonWrappedLoopsSameFuel(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles python.wasm twice")
	}
	bin, _ := pythonArtifact(t)
	opts := fuel.Options{AddImport: true, SkipLeafEntries: true, ChargeOnlyAtEntry: true}
	want := pythonTraces(t, mustInstrument(t, bin, opts))
	opts.WrapLoops = true
	got := pythonTraces(t, mustInstrument(t, bin, opts))
	t.Logf("header hooks: %+v; wrapped loops: %+v", want, got)
	if !slices.Equal(got, want) {
		t.Errorf("wrapped loops: %+v, want (header hooks) %+v", got, want)
	}
}

// pythonTrace is what a cell of pythonTraces consumed: the hook's calls,
// the fuel used, and a hash of the counter's values at the hook calls.
type pythonTrace struct {
	calls, used int64
	at          uint64
}

// pythonTraces runs two cells in CPython instrumented as mod, the first
// with a slice that leaves it running for a while between hook calls, the
// second with one smaller than most checks' costs (the counter stays below
// zero after the hook), and returns their traces.
func pythonTraces(t *testing.T, mod []byte) (traces []pythonTrace) {
	t.Helper()
	rt, cm, stdlib, prelude := pythonRuntimeFor(t, mod, true)
	g := newPython(t, rt, cm, stdlib, prelude, 997, 1<<40)
	for _, c := range []struct {
		slice int64
		code  string
	}{
		{997, "def fib(n):\n    return n if n < 2 else fib(n-1) + fib(n-2)\nemit(fib(15), sum(i * i for i in range(3000)))"},
		{3, "s = 0\nfor i in range(300):\n    s += i\nemit(s)"},
	} {
		g.mt.slice = c.slice
		var tr pythonTrace
		calls0, left0 := g.mt.calls.Load(), fuelLeft(g.m)
		base := g.mt.onHook
		g.mt.onHook = func(ctx context.Context, m api.Module) {
			tr.at = tr.at*1_000_003 + uint64(fuelLeft(m))
			base(ctx, m)
		}
		rc, out, err := g.run(c.code)
		g.mt.onHook = base
		if err != nil || rc != 0 {
			t.Fatalf("run: rc=%d err=%v output %q", rc, err, out)
		}
		tr.calls = g.mt.calls.Load() - calls0
		tr.used = left0 + tr.calls*c.slice - fuelLeft(g.m)
		traces = append(traces, tr)
	}
	return traces
}
