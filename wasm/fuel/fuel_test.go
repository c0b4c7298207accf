package fuel_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmeval/wasmeval/wasm/fuel"
)

// meter is a host's side of the fuel hook: it counts calls and adds slice
// to the counter on each (keeping the overdraft, so accounting is exact).
type meter struct {
	slice int64
	calls atomic.Int64
	// onHook, when set, runs on every call after the refill.
	onHook func(ctx context.Context, m api.Module)
}

func (mt *meter) hook(ctx context.Context, m api.Module) {
	mt.calls.Add(1)
	g := m.ExportedGlobal(fuel.DefaultGlobalExport).(api.MutableGlobal)
	g.Set(uint64(int64(g.Get()) + mt.slice))
	if mt.onHook != nil {
		mt.onHook(ctx, m)
	}
}

// newRuntime returns a runtime with the host module "wasmeval" whose "fuel"
// is mt's hook. features, when non-zero, replaces wazero's defaults.
func newRuntime(t testing.TB, mt *meter, features api.CoreFeatures) wazero.Runtime {
	t.Helper()
	ctx := context.Background()
	cfg := wazero.NewRuntimeConfig()
	if features != 0 {
		cfg = cfg.WithCoreFeatures(features)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	t.Cleanup(func() { rt.Close(ctx) })
	_, err := rt.NewHostModuleBuilder("wasmeval").
		NewFunctionBuilder().WithFunc(mt.hook).Export("fuel").
		Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func instantiate(t testing.TB, rt wazero.Runtime, bin []byte) api.Module {
	t.Helper()
	ctx := context.Background()
	cm, err := rt.CompileModule(ctx, bin)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	m, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	t.Cleanup(func() { m.Close(ctx) })
	return m
}

func mustInstrument(t testing.TB, bin []byte, opts fuel.Options) []byte {
	t.Helper()
	out, err := fuel.Instrument(bin, opts)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func fuelLeft(m api.Module) int64 {
	return int64(m.ExportedGlobal(fuel.DefaultGlobalExport).Get())
}

// Type indices shared by the small modules below.
var commonTypes = sec(1, vec(
	functype(nil, nil),                      // 0: () -> ()
	functype([]byte{i32}, nil),              // 1: (i32) -> ()
	functype([]byte{i64}, []byte{i64}),      // 2: (i64) -> i64
	functype([]byte{i32, i32}, nil),         // 3: (i32, i32) -> ()
	functype([]byte{i64, i64}, []byte{i64}), // 4: (i64, i64) -> i64
))

var hookImport = sec(2, vec(importFunc("wasmeval", "fuel", 0)))

// loopModule exports spin(n): a loop of n iterations (n >= 1).
// Entry: loop (1). Loop: local.get, i32.const, i32.sub, local.tee, br_if (5).
// Fuel: 1 + 5n.
var loopModule = module(
	commonTypes, hookImport,
	sec(3, vec(u(1))),
	sec(7, vec(export("spin", 0, 1))),
	sec(10, vec(body(nil,
		opLoop, empty,
		opLocalGet, 0, i32c(1), 0x6b /* i32.sub */, opLocalTee, 0, opBrIf, 0,
		opEnd,
		opEnd))),
)

// factModule exports fact(n) = n!, recursively.
// Entry: local.get, i64.eqz, if (3) per call; fact(n) makes n+1 calls.
var factModule = module(
	commonTypes, hookImport,
	sec(3, vec(u(2))),
	sec(7, vec(export("fact", 0, 1))),
	sec(10, vec(body(nil,
		opLocalGet, 0, 0x50, /* i64.eqz */
		opIf, i64,
		i64c(1),
		opElse,
		opLocalGet, 0,
		opLocalGet, 0, i64c(1), 0x7d, /* i64.sub */
		opCall, 1,
		0x7e, /* i64.mul */
		opEnd,
		opEnd))),
)

// nestedModule exports nested(n, m): n outer iterations of m inner ones.
// Entry: loop (1). Outer: local.get, local.set, loop (3). Inner: 5. The
// outer loop's tail after the inner loop follows a br_if: not charged.
// Fuel: 1 + n(3 + 5m).
var nestedModule = module(
	commonTypes, hookImport,
	sec(3, vec(u(3))),
	sec(7, vec(export("nested", 0, 1))),
	sec(10, vec(body([][2]int{{1, i32}},
		opLoop, empty,
		opLocalGet, 1, opLocalSet, 2,
		opLoop, empty,
		opLocalGet, 2, i32c(1), 0x6b, opLocalTee, 2, opBrIf, 0,
		opEnd,
		opLocalGet, 0, i32c(1), 0x6b, opLocalTee, 0, opBrIf, 0,
		opEnd,
		opEnd))),
)

func TestFuelIsExact(t *testing.T) {
	factorial := func(n uint64) uint64 {
		r := uint64(1)
		for i := uint64(2); i <= n; i++ {
			r *= i
		}
		return r
	}
	tests := []struct {
		name   string
		bin    []byte
		fn     string
		args   []uint64
		want   uint64 // result, when the function returns one
		fuel   int64
		result bool
	}{
		{name: "loop 1", bin: loopModule, fn: "spin", args: []uint64{1}, fuel: 1 + 5},
		{name: "loop 1000", bin: loopModule, fn: "spin", args: []uint64{1000}, fuel: 1 + 5*1000},
		{name: "loop 123457", bin: loopModule, fn: "spin", args: []uint64{123457}, fuel: 1 + 5*123457},
		{name: "recursion 0", bin: factModule, fn: "fact", args: []uint64{0}, want: 1, result: true, fuel: 3},
		{name: "recursion 20", bin: factModule, fn: "fact", args: []uint64{20}, want: factorial(20), result: true, fuel: 3 * 21},
		{name: "nested 7x11", bin: nestedModule, fn: "nested", args: []uint64{7, 11}, fuel: 1 + 7*(3+5*11)},
	}
	const initial = 1 << 40
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mt := &meter{}
			rt := newRuntime(t, mt, 0)
			bin := mustInstrument(t, tt.bin, fuel.Options{InitialFuel: initial})
			for run := 0; run < 2; run++ { // the same call, the same fuel
				m := instantiate(t, rt, bin)
				res, err := m.ExportedFunction(tt.fn).Call(context.Background(), tt.args...)
				if err != nil {
					t.Fatal(err)
				}
				if tt.result && res[0] != tt.want {
					t.Errorf("%s%v = %d, want %d", tt.fn, tt.args, res[0], tt.want)
				}
				if got := initial - fuelLeft(m); got != tt.fuel {
					t.Errorf("run %d: consumed %d fuel, want %d", run, got, tt.fuel)
				}
			}
			if n := mt.calls.Load(); n != 0 {
				t.Errorf("hook called %d times with fuel to spare", n)
			}
		})
	}
}

// With a zero initial fuel and a hook that adds a slice, the hook is called
// exactly ceil(consumed/slice) times and leaves calls*slice-consumed.
func TestHookRefills(t *testing.T) {
	for _, slice := range []int64{6, 100, 4999, 1_000_000} {
		t.Run(fmt.Sprint("slice ", slice), func(t *testing.T) {
			mt := &meter{slice: slice}
			rt := newRuntime(t, mt, 0)
			m := instantiate(t, rt, mustInstrument(t, loopModule, fuel.Options{}))
			const n = 10_000
			if _, err := m.ExportedFunction("spin").Call(context.Background(), n); err != nil {
				t.Fatal(err)
			}
			consumed := int64(1 + 5*n)
			calls := (consumed + slice - 1) / slice
			if got := mt.calls.Load(); got != calls {
				t.Errorf("hook called %d times, want %d", got, calls)
			}
			if got, want := fuelLeft(m), calls*slice-consumed; got != want {
				t.Errorf("fuel left %d, want %d", got, want)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	code := func(b ...any) []byte { return sec(10, vec(body(nil, b...))) }
	funcs := sec(3, vec(u(0)))
	tests := []struct {
		name string
		bin  []byte
		opts fuel.Options
		want string
		is   error
	}{
		{name: "no hook", bin: module(commonTypes, funcs, code(opEnd)),
			want: "does not import the hook wasmeval.fuel", is: fuel.ErrNoHook},
		{name: "other hook name", bin: loopModule, opts: fuel.Options{HookName: "tick"},
			want: "wasmeval.tick", is: fuel.ErrNoHook},
		{name: "hook of wrong type", bin: module(commonTypes, sec(2, vec(importFunc("wasmeval", "fuel", 1))), funcs, code(opEnd)),
			want: "import wasmeval.fuel has type index 1, which is not () -> ()"},
		{name: "hook not a function", bin: module(commonTypes, sec(2, vec(cat(str("wasmeval"), str("fuel"), 0x03, i64, 0x01))), funcs, code(opEnd)),
			want: "import wasmeval.fuel is not a function"},
		{name: "export taken", bin: module(commonTypes, hookImport, funcs, sec(7, vec(export("wasmeval_fuel", 0, 1))), code(opEnd)),
			want: `already exports "wasmeval_fuel"`},
		{name: "not wasm", bin: []byte("#!/bin/sh\necho hi\n"), want: "not a WebAssembly module"},
		{name: "component", bin: []byte("\x00asm\x0d\x00\x01\x00"), want: "unsupported binary version"},
		{name: "truncated", bin: loopModule[:len(loopModule)-3], want: "past the end of the module"},
		{name: "exception handling", bin: module(commonTypes, hookImport, funcs, code(opNop, 0x06, empty, opEnd, opEnd)),
			want: "unknown opcode 0x06 (exception handling is not supported) at offset 0x"},
		{name: "GC opcode", bin: module(commonTypes, hookImport, funcs, code(0xfb, 0x00, opEnd)),
			want: "unknown opcode 0xfb (typed function references and GC"},
		{name: "SIMD gap", bin: module(commonTypes, hookImport, funcs, code(fd(0x9a), opEnd)),
			want: "unknown opcode 0xfd 0x9a (SIMD"},
		{name: "relaxed SIMD", bin: module(commonTypes, hookImport, funcs, code(fd(0x100), opEnd)),
			want: "unknown opcode 0xfd 0x100"},
		{name: "unknown 0xfc", bin: module(commonTypes, hookImport, funcs, code(fc(18), opEnd)),
			want: "unknown opcode 0xfc 0x12"},
		{name: "bad block type", bin: module(commonTypes, hookImport, funcs, code(opBlock, 0x60, opEnd, opEnd)),
			want: "unsupported block type 0x60"},
		{name: "bad local type", bin: module(commonTypes, hookImport, funcs, sec(10, vec(body([][2]int{{1, 0x63}}, opEnd)))),
			want: "unsupported value type 0x63"},
		{name: "no final end", bin: module(commonTypes, hookImport, funcs, code(opBlock, empty, opEnd)),
			want: "function body has no final end"},
		{name: "bytes after end", bin: module(commonTypes, hookImport, funcs, code(opEnd, opNop)),
			want: "continues after its final end"},
		{name: "truncated immediate", bin: module(commonTypes, hookImport, funcs, code(opI32Const)),
			want: "function 1: unexpected end of input"},
		{name: "overlong LEB", bin: module(commonTypes, hookImport, funcs, code(opI32Const, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, opEnd)),
			want: "malformed LEB128"},
		{name: "count mismatch", bin: module(commonTypes, hookImport, sec(3, vec(u(0), u(0))), code(opEnd)),
			want: "code section has 1 bodies but the function section declares 2"},
		{name: "GC type", bin: module(sec(1, vec(cat(0x5f, 0x00)))), want: "unsupported type form 0x5f"},
		{name: "object file", bin: module(commonTypes, custom("linking", []byte{2})), want: "relocatable object files"},
		{name: "duplicate section", bin: module(commonTypes, commonTypes), want: "duplicate type section"},
		{name: "section order", bin: module(hookImport, commonTypes), want: "type section out of order"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := fuel.Instrument(tt.bin, tt.opts)
			if err == nil {
				t.Fatalf("no error; returned %d bytes", len(out))
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "fuel: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q is not %v", err, tt.is)
			}
		})
	}
}

// The offset in an unknown-opcode error is the opcode's offset in the module.
func TestErrorOffset(t *testing.T) {
	bin := module(commonTypes, hookImport, sec(3, vec(u(0))), sec(10, vec(body(nil, opNop, 0x27, opEnd))))
	_, err := fuel.Instrument(bin, fuel.Options{})
	want := fmt.Sprintf("unknown opcode 0x27 at offset 0x%x", len(bin)-2)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
}

func TestGlobalAndExport(t *testing.T) {
	// A module that already has globals (one imported, one defined) and
	// exports: the fuel global is appended after them, as global 2.
	bin := module(
		commonTypes,
		sec(2, vec(importFunc("wasmeval", "fuel", 0), cat(str("env"), str("g"), 0x03, i32, 0x00))),
		sec(3, vec(u(0))),
		sec(6, vec(cat(i64, 0x01, i64c(-5), opEnd))),
		sec(7, vec(export("g", 3, 1), export("f", 0, 1))),
		sec(10, vec(body(nil, opEnd))),
	)
	out := mustInstrument(t, bin, fuel.Options{GlobalExport: "tank", InitialFuel: math.MaxInt64})
	env := module(sec(6, vec(cat(i32, 0x00, i32c(42), opEnd))), sec(7, vec(export("g", 3, 0))))

	ctx := context.Background()
	rt := newRuntime(t, &meter{}, 0)
	if _, err := rt.InstantiateWithConfig(ctx, env, wazero.NewModuleConfig().WithName("env")); err != nil {
		t.Fatal(err)
	}
	m := instantiate(t, rt, out)
	if _, err := m.ExportedFunction("f").Call(ctx); err != nil {
		t.Fatal(err)
	}
	if got := int64(m.ExportedGlobal("g").Get()); got != -5 {
		t.Errorf("global g = %d, want -5", got)
	}
	tank := m.ExportedGlobal("tank")
	if tank == nil {
		t.Fatal("no export tank")
	}
	if _, ok := tank.(api.MutableGlobal); !ok || tank.Type() != api.ValueTypeI64 {
		t.Errorf("tank is %v, want a mutable i64", tank)
	}
	if got := int64(tank.Get()); got != math.MaxInt64-1 { // f's body is one end: cost 1
		t.Errorf("tank = %d, want MaxInt64-1", got)
	}
}

// Custom sections are kept, except those that describe code offsets.
func TestCustomSections(t *testing.T) {
	bin := module(
		custom("first", []byte("x")),
		commonTypes, hookImport,
		sec(3, vec(u(0))),
		sec(10, vec(body(nil, opEnd))),
		custom("name", cat(0, 2, str("m"))),
		custom(".debug_info", []byte{1, 2, 3}),
		custom(".debug_line", []byte{4}),
		custom("sourceMappingURL", str("x.map")),
		custom("producers", []byte{0}),
	)
	out := mustInstrument(t, bin, fuel.Options{})
	got := strings.Join(sectionNames(out), " ")
	// The new global (6) and export (7) sections go in their places.
	if want := "first 1 2 3 6 7 10 name producers"; got != want {
		t.Errorf("sections %q, want %q", got, want)
	}
}

// With ChargeOnlyAtEntry, function entries charge the same fuel but never
// call the hook: recursion without loops runs on (bounded by the stack)
// while loops still call it.
func TestChargeOnlyAtEntry(t *testing.T) {
	opts := fuel.Options{ChargeOnlyAtEntry: true}
	// Recursion with no fuel left: charged exactly, no hook call.
	mt := &meter{slice: 1 << 40}
	rt := newRuntime(t, mt, 0)
	m := instantiate(t, rt, mustInstrument(t, factModule, opts))
	if _, err := m.ExportedFunction("fact").Call(context.Background(), 20); err != nil {
		t.Fatal(err)
	}
	if got := -fuelLeft(m); got != 3*21 {
		t.Errorf("recursion consumed %d fuel, want %d", got, 3*21)
	}
	if n := mt.calls.Load(); n != 0 {
		t.Errorf("entry checks called the hook %d times", n)
	}
	// A loop still calls the hook at its header.
	mt2 := &meter{slice: 100}
	rt2 := newRuntime(t, mt2, 0)
	m2 := instantiate(t, rt2, mustInstrument(t, loopModule, opts))
	if _, err := m2.ExportedFunction("spin").Call(context.Background(), 1000); err != nil {
		t.Fatal(err)
	}
	if mt2.calls.Load() == 0 {
		t.Error("the loop never called the hook")
	}
}
