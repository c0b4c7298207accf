package fuel_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/wasmeval/wasmeval/wasm/fuel"
)

func f32b(v float32) []byte { return binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)) }
func f64b(v float64) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(v)) }

func i32x4(a, b, c, d uint32) []byte {
	var v []byte
	for _, x := range []uint32{a, b, c, d} {
		v = binary.LittleEndian.AppendUint32(v, x)
	}
	return v
}

// acc adds the i64 on the stack to local l.
func acc(l int) []byte { return cat(opLocalGet, l, 0x7c /* i64.add */, opLocalSet, l) }

const (
	extendU = 0xad // i64.extend_i32_u
	extendS = 0xac // i64.extend_i32_s
)

// opcodeModule uses every class of instruction the pass decodes (but
// atomics and tail calls, which need wazero's experimental features: see
// TestAtomicsAndTailCalls). Each exported function returns an i64.
var opcodeModule = module(
	sec(1, vec(
		functype(nil, nil),
		functype(nil, []byte{i64}),
		functype([]byte{i32}, []byte{i32}),
		functype([]byte{i32, i32}, []byte{i32, i32}), // 3: a multi-value block type
	)),
	hookImport,
	sec(3, vec(u(2), u(2), u(2), u(1), u(1), u(1), u(1), u(1))), // funcs 1..8
	sec(4, vec(cat(funcref, 0x01, 4, 10))),
	sec(5, vec(cat(0x01, 1, 3))),
	sec(6, vec(
		cat(i32, 0x01, i32c(7), opEnd),
		cat(funcref, 0x00, opRefFunc, 2, opEnd),
	)),
	sec(7, vec(
		export("control", 0, 4), export("memory", 0, 5), export("tables", 0, 6),
		export("numeric", 0, 7), export("simd", 0, 8),
	)),
	sec(9, vec(
		cat(0, i32c(0), opEnd, vec(u(1), u(2))), // active: add, mul at 0
		cat(1, 0x00, vec(u(1))),                 // passive: add
		cat(3, 0x00, vec(u(3))),                 // declarative: decl
		cat(4, i32c(2), opEnd, vec(cat(opRefFunc, 2, opEnd), cat(opRefNull, funcref, opEnd))),
	)),
	sec(12, u(2)),
	sec(10, vec(
		body(nil, opLocalGet, 0, i32c(1), 0x6a, opEnd), // 1 add(x) = x+1
		body(nil, opLocalGet, 0, i32c(3), 0x6c, opEnd), // 2 mul(x) = 3x
		body(nil, opLocalGet, 0, i32c(5), 0x6c, opEnd),
		controlBody, memoryBody, tablesBody, numericBody, simdBody, // 4..8
	)),
	sec(11, vec(
		cat(0, i32c(16), opEnd, str("hello")),
		cat(1, str("world")),
	)),
)

var controlBody = body([][2]int{{2, i32}, {1, i64}},
	opBlock, i32, i32c(5), opEnd, opLocalSet, 0,
	opLoop, empty, // l1 = 5+4+3+2+1
	opLocalGet, 1, opLocalGet, 0, 0x6a, opLocalSet, 1,
	opLocalGet, 0, i32c(1), 0x6b, opLocalTee, 0, opBrIf, 0,
	opEnd,
	opLocalGet, 1, i32c(15), 0x46, // i32.eq
	opIf, i64, i64c(100), opElse, i64c(200), opEnd, opLocalSet, 2,
	opBlock, empty,
	opBlock, empty,
	opBlock, empty,
	i32c(1), opBrTable, 2, 0, 1, 2,
	opEnd,
	opLocalGet, 2, i64c(1), 0x7c, opLocalSet, 2, opBr, 1,
	opEnd,
	opLocalGet, 2, i64c(10), 0x7c, opLocalSet, 2,
	opEnd,
	i32c(3), i32c(4), opBlock, 3, opEnd, 0x6c, extendU, acc(2), // multi-value block
	opLocalGet, 2, i64c(1), i32c(0), opSelect, opLocalGet, 2, 0x7c,
	i64c(7), i32c(1), opSelectT, 1, i64, opLocalSet, 2,
	i32c(0), opIf, empty, opUnreachable, opEnd,
	opNop, i32c(9), opDrop,
	opGlobalGet, 0, opGlobalGet, 0, i32c(1), 0x6a, opGlobalSet, 0, extendU, acc(2),
	i32c(6), opCall, 2, extendU, acc(2),
	opLoop, i64,
	opLocalGet, 2, i64c(1000), 0x7c, opReturn,
	opEnd,
	opEnd,
)

var memoryBody = body([][2]int{{1, i64}},
	i32c(0), i64c(0x0102030405060708), 0x37, memarg(3, 32), // i64.store
	i32c(0), 0x2c, memarg(0, 32), extendS, opLocalSet, 0, // i32.load8_s
	i32c(0), 0x2f, memarg(1, 33), extendU, acc(0), // i32.load16_u
	i32c(0), 0x2e, memarg(1, 34), extendS, acc(0), // i32.load16_s
	i32c(0), 0x28, memarg(2, 32), extendU, acc(0), // i32.load
	i32c(0), 0x29, memarg(3, 32), acc(0), // i64.load
	i32c(8), i32c(0x7f), 0x3a, memarg(0, 0), // i32.store8
	i32c(8), 0x30, memarg(0, 0), acc(0), // i64.load8_s
	i32c(8), 0x31, memarg(0, 0), acc(0), // i64.load8_u
	i32c(10), i32c(0x1234), 0x3b, memarg(1, 0), // i32.store16
	i32c(10), 0x32, memarg(1, 0), acc(0), // i64.load16_s
	i32c(10), 0x33, memarg(1, 0), acc(0), // i64.load16_u
	i32c(40), i64c(-1), 0x3e, memarg(2, 0), // i64.store32
	i32c(40), 0x35, memarg(2, 0), acc(0), // i64.load32_u
	i32c(40), 0x34, memarg(2, 0), acc(0), // i64.load32_s
	i32c(44), i64c(0x5678), 0x3d, memarg(1, 0), // i64.store16
	i32c(44), i64c(0x9a), 0x3c, memarg(0, 1), // i64.store8
	i32c(44), 0x28, memarg(2, 0), extendU, acc(0),
	i32c(48), i32c(-3), 0x36, memarg(2, 0), // i32.store
	i32c(48), 0x2d, memarg(0, 0), extendU, acc(0), // i32.load8_u
	i32c(52), opF32Const, f32b(1.5), 0x38, memarg(2, 0), // f32.store
	i32c(52), 0x2a, memarg(2, 0), 0xae, acc(0), // f32.load; i64.trunc_f32_s
	i32c(56), opF64Const, f64b(2.5), 0x39, memarg(3, 0), // f64.store
	i32c(56), 0x2b, memarg(3, 0), 0xb0, acc(0), // f64.load; i64.trunc_f64_s
	i32c(16), 0x2d, memarg(0, 0), extendU, acc(0), // 'h' from the active data segment
	0x3f, 0, extendU, acc(0), // memory.size
	i32c(1), 0x40, 0, extendU, acc(0), // memory.grow
	0x3f, 0, extendU, acc(0),
	i32c(100), i32c(0xab), i32c(4), fc(11, 0), // memory.fill
	i32c(100), 0x28, memarg(2, 0), extendU, acc(0),
	i32c(200), i32c(99), i32c(6), fc(10, 0, 0), // memory.copy
	i32c(200), 0x29, memarg(0, 0), acc(0),
	i32c(300), i32c(0), i32c(5), fc(8, 1, 0), // memory.init from "world"
	fc(9, 1), // data.drop
	i32c(300), 0x29, memarg(0, 0), acc(0),
	opLocalGet, 0, opEnd,
)

var tablesBody = body([][2]int{{1, i64}},
	i32c(10), i32c(0), opCallInd, 2, 0, extendU, opLocalSet, 0, // add(10)
	i32c(10), i32c(2), opCallInd, 2, 0, extendU, acc(0), // mul(10), from the expression segment
	i32c(3), i32c(0), opTableGet, 0, opTableSet, 0, // table[3] = table[0]
	i32c(5), i32c(3), opCallInd, 2, 0, extendU, acc(0),
	fc(16, 0), extendU, acc(0), // table.size
	opRefNull, funcref, i32c(3), fc(15, 0), extendU, acc(0), // table.grow
	i32c(4), opRefFunc, 3, i32c(2), fc(17, 0), // table.fill with decl
	i32c(6), i32c(0), i32c(1), fc(12, 1, 0), // table.init from the passive segment
	fc(13, 1),                               // elem.drop
	i32c(0), i32c(4), i32c(1), fc(14, 0, 0), // table.copy
	i32c(7), i32c(0), opCallInd, 2, 0, extendU, acc(0), // decl(7)
	i32c(7), i32c(6), opCallInd, 2, 0, extendU, acc(0), // add(7)
	i32c(1), opTableGet, 0, opRefIsNull, extendU, acc(0),
	opRefNull, funcref, opRefIsNull, extendU, acc(0),
	i32c(1), opGlobalGet, 1, opTableSet, 0,
	i32c(2), i32c(1), opCallInd, 2, 0, extendU, acc(0), // mul(2)
	opLocalGet, 0, opEnd,
)

var numericBody = body([][2]int{{1, i64}},
	opF32Const, f32b(3.75), fc(0), extendU, opLocalSet, 0, // i32.trunc_sat_f32_s
	opF32Const, f32b(-1), fc(1), extendU, acc(0),
	opF64Const, f64b(1e300), fc(2), extendU, acc(0),
	opF64Const, f64b(5.5), fc(3), extendU, acc(0),
	opF32Const, f32b(1e20), fc(4), acc(0),
	opF32Const, f32b(7), fc(5), acc(0),
	opF64Const, f64b(-3), fc(6), acc(0),
	opF64Const, f64b(9), fc(7), acc(0),
	i32c(0xff), 0xc0, extendS, acc(0), // i32.extend8_s
	i32c(0xffff), 0xc1, extendS, acc(0), // i32.extend16_s
	i64c(0xff), 0xc2, acc(0), // i64.extend8_s
	i64c(0xffff), 0xc3, acc(0), // i64.extend16_s
	i64c(0xffffffff), 0xc4, acc(0), // i64.extend32_s
	opF32Const, f32b(2), 0x91, 0xbb, opF64Const, f64b(0.5), 0xa0, 0xb6, 0xbc, extendU, acc(0),
	i64c(-7), 0xb9, opF64Const, f64b(math.Copysign(0, -1)), 0xa6, 0xbd, acc(0),
	i32c(0x00ff0000), 0x67, extendU, acc(0), // i32.clz
	i64c(0x0f0f), 0x7b, acc(0), // i64.popcnt
	i64c(1), i64c(63), 0x89, acc(0), // i64.rotl
	i32c(100), i32c(7), 0x6e, extendU, acc(0), // i32.div_u
	i64c(-100), i64c(7), 0x81, acc(0), // i64.rem_s
	opLocalGet, 0, opEnd,
)

var simdBody = body([][2]int{{1, i64}, {1, v128}},
	fd(0x0c, i32x4(1, 2, 3, 4)), fd(0x0c, i32x4(10, 20, 30, 40)), fd(0xae), opLocalSet, 1, // i32x4.add
	opLocalGet, 1, opLocalGet, 1,
	fd(0x0d, []byte{4, 5, 6, 7, 0, 1, 2, 3, 28, 29, 30, 31, 24, 25, 26, 27}), opLocalSet, 1, // i8x16.shuffle
	opLocalGet, 1, fd(0x1b, 2), extendU, opLocalSet, 0, // i32x4.extract_lane
	i32c(0), opLocalGet, 1, fd(0x0b, memarg(4, 0)), // v128.store
	i32c(0), fd(0x00, memarg(4, 0)), fd(0x1d, 1), acc(0), // v128.load; i64x2.extract_lane
	i32c(0), opLocalGet, 1, fd(0x56, memarg(2, 4), 3), fd(0x1b, 3), extendU, acc(0), // v128.load32_lane
	i32c(0), fd(0x5c, memarg(2, 8)), fd(0x1b, 0), extendU, acc(0), // v128.load32_zero
	i32c(0), fd(0x07, memarg(0, 0)), fd(0x16, 5), extendU, acc(0), // v128.load8_splat; extract_lane_u
	i32c(9), fd(0x11), i32c(77), fd(0x1c, 1), fd(0x1b, 1), extendU, acc(0), // splat, replace_lane
	opLocalGet, 1, fd(0x53), extendU, acc(0), // v128.any_true
	opLocalGet, 1, fd(0x64), extendU, acc(0), // i8x16.bitmask
	i32c(32), opLocalGet, 1, fd(0x5a, memarg(2, 0), 2), // v128.store32_lane
	i32c(32), 0x28, memarg(2, 0), extendU, acc(0),
	opLocalGet, 0, opEnd,
)

// compare runs each export of bin and of its instrumented copy and checks
// that they agree, and that the instrumented one consumed fuel.
func compare(t *testing.T, features api.CoreFeatures, bin []byte, exports ...string) {
	t.Helper()
	const initial = 1 << 40
	ctx := context.Background()
	out := mustInstrument(t, bin, fuel.Options{InitialFuel: initial})
	for _, name := range exports {
		t.Run(name, func(t *testing.T) {
			mt := &meter{}
			rt := newRuntime(t, mt, features)
			orig := instantiate(t, rt, bin)
			inst := instantiate(t, rt, out)
			want, err := orig.ExportedFunction(name).Call(ctx)
			if err != nil {
				t.Fatalf("original: %v", err)
			}
			got, err := inst.ExportedFunction(name).Call(ctx)
			if err != nil {
				t.Fatalf("instrumented: %v", err)
			}
			if len(got) != len(want) || (len(got) > 0 && got[0] != want[0]) {
				t.Errorf("instrumented %s() = %v, original %v", name, got, want)
			}
			if used := initial - fuelLeft(inst); used <= 0 {
				t.Errorf("%s() consumed %d fuel", name, used)
			}
			t.Logf("%s() = %d", name, want)
		})
	}
}

func TestEveryOpcodeClass(t *testing.T) {
	compare(t, 0, opcodeModule, "control", "memory", "tables", "numeric", "simd")
}

func TestAtomicsAndTailCalls(t *testing.T) {
	features := api.CoreFeaturesV2 | experimental.CoreFeaturesThreads | experimental.CoreFeaturesTailCall
	bin := module(
		sec(1, vec(
			functype(nil, nil),
			functype(nil, []byte{i64}),
			functype([]byte{i64, i64}, []byte{i64}),
		)),
		hookImport,
		sec(3, vec(u(1), u(2), u(1))),
		sec(5, vec(cat(0x03, 1, 1))), // shared memory, 1..1 pages
		sec(7, vec(export("atomics", 0, 1), export("tail", 0, 3))),
		sec(10, vec(
			body([][2]int{{1, i64}},
				i32c(0), i32c(5), fe(0x17, memarg(2, 0)), // i32.atomic.store
				i32c(0), i32c(3), fe(0x1e, memarg(2, 0)), extendU, opLocalSet, 0, // i32.atomic.rmw.add
				i32c(0), fe(0x10, memarg(2, 0)), extendU, acc(0), // i32.atomic.load
				i32c(8), i64c(0), i64c(9), fe(0x49, memarg(3, 0)), acc(0), // i64.atomic.rmw.cmpxchg
				i32c(8), fe(0x11, memarg(3, 0)), acc(0), // i64.atomic.load
				fe(0x03, 0),                                               // atomic.fence
				i32c(0), i32c(1), fe(0x00, memarg(2, 0)), extendU, acc(0), // memory.atomic.notify
				i32c(0), i32c(0), i64c(0), fe(0x01, memarg(2, 0)), extendU, acc(0), // wait32: not equal
				opLocalGet, 0, opEnd),
			// sum(n, acc) = acc + n + (n-1) + ... by return_call.
			body(nil,
				opLocalGet, 0, 0x50, opIf, i64, opLocalGet, 1, opElse,
				opLocalGet, 0, i64c(1), 0x7d, opLocalGet, 1, opLocalGet, 0, 0x7c,
				opReturnCall, 2,
				opEnd, opEnd),
			body(nil, i64c(100000), i64c(0), opCall, 2, opEnd),
		)),
	)
	compare(t, features, bin, "atomics", "tail")

	// Tail calls are charged like calls: 3 per call of sum, 4 for tail().
	mt := &meter{}
	rt := newRuntime(t, mt, features)
	m := instantiate(t, rt, mustInstrument(t, bin, fuel.Options{InitialFuel: 1 << 40}))
	res, err := m.ExportedFunction("tail").Call(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res[0] != 100000*100001/2 {
		t.Errorf("tail() = %d", res[0])
	}
	if used, want := 1<<40-fuelLeft(m), int64(4+3*100001); used != want {
		t.Errorf("tail() consumed %d fuel, want %d", used, want)
	}
}

// With Options.AddImport the hook import is added and every function
// index after it moves: calls, ref.func, exports, the start function,
// element segments (index lists and expressions), global initialisers and
// the name section must all follow.
func TestAddImport(t *testing.T) {
	names := cat(
		1, // function names
		func() []byte {
			b := vec(
				cat(u(0), str("double")), cat(u(1), str("inc")), cat(u(2), str("start")),
				cat(u(3), str("get")), cat(u(4), str("viaTable")),
			)
			return cat(leb(uint64(len(b))), b)
		}(),
		2, // local names
		func() []byte {
			b := vec(cat(u(1), vec(cat(u(0), str("x")))))
			return cat(leb(uint64(len(b))), b)
		}(),
	)
	bin := module(
		sec(1, vec(
			functype(nil, nil),                 // 0
			functype([]byte{i32}, []byte{i32}), // 1
			functype(nil, []byte{i32}),         // 2
		)),
		sec(2, vec(importFunc("env", "double", 1))), // func 0
		sec(3, vec(u(1), u(0), u(2), u(2))),         // funcs 1..4
		sec(4, vec(cat(funcref, 0x00, 3))),          // table: 3
		sec(6, vec(
			cat(i32, 0x01, i32c(0), opEnd),          // global 0
			cat(funcref, 0x00, opRefFunc, 1, opEnd), // global 1 = inc
		)),
		sec(7, vec(export("get", 0, 3), export("inc", 0, 1), export("double", 0, 0))),
		sec(8, u(2)), // start
		sec(9, vec(
			cat(0, i32c(0), opEnd, vec(u(1), u(0))),               // inc, double
			cat(4, i32c(2), opEnd, vec(cat(opRefFunc, 1, opEnd))), // inc
			cat(3, 0x00, vec(u(4))),                               // declares viaTable
		)),
		sec(10, vec(
			body(nil, opLocalGet, 0, i32c(1), 0x6a, opEnd),        // inc
			body(nil, i32c(41), opCall, 1, opGlobalSet, 0, opEnd), // start
			body(nil,
				opGlobalGet, 0, // 42
				i32c(10), i32c(0), opCallInd, 1, 0, 0x6a, // inc(10) = 11
				opCall, 4, 0x6a, // viaTable() = 10
				i32c(7), i32c(2), opCallInd, 1, 0, 0x6a, // inc(7) = 8
				i32c(0), opGlobalGet, 1, opTableSet, 0, // table[0] = inc, still
				opRefFunc, 4, opRefIsNull, 0x6a, // 0
				opEnd),
			body(nil, i32c(5), i32c(1), opCallInd, 1, 0, opEnd), // double(5) = 10
		)),
		custom("name", names),
	)
	env := module(
		sec(1, vec(functype([]byte{i32}, []byte{i32}))),
		sec(3, vec(u(0))),
		sec(7, vec(export("double", 0, 0))),
		sec(10, vec(body(nil, opLocalGet, 0, i32c(2), 0x6c, opEnd))),
	)
	if _, err := fuel.Instrument(bin, fuel.Options{}); !errorsIs(err, fuel.ErrNoHook) {
		t.Fatalf("without AddImport: %v, want ErrNoHook", err)
	}
	out := mustInstrument(t, bin, fuel.Options{AddImport: true})

	ctx := context.Background()
	mt := &meter{slice: 1000}
	rt := newRuntime(t, mt, 0)
	if _, err := rt.InstantiateWithConfig(ctx, env, wazero.NewModuleConfig().WithName("env")); err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{bin, out} {
		m := instantiate(t, rt, b)
		res, err := m.ExportedFunction("get").Call(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res[0] != 71 {
			t.Errorf("get() = %d, want 71", res[0])
		}
		res, err = m.ExportedFunction("double").Call(ctx, 4)
		if err != nil || res[0] != 8 {
			t.Errorf("double(4) = %v, %v; want 8", res, err)
		}
	}
	if mt.calls.Load() == 0 {
		t.Error("the added hook was never called (the start function's entry check should call it)")
	}

	cm, err := rt.CompileModule(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	for export, want := range map[string]string{"get": "get", "inc": "inc", "double": "double"} {
		if got := cm.ExportedFunctions()[export].Name(); got != want {
			t.Errorf("export %s is named %q in the name section, want %q", export, got, want)
		}
	}
	imports := cm.ImportedFunctions()
	if len(imports) != 2 {
		t.Fatalf("%d imported functions, want 2", len(imports))
	}
	hook := imports[1]
	if mod, name, _ := hook.Import(); mod != "wasmeval" || name != "fuel" || len(hook.ParamTypes())+len(hook.ResultTypes()) != 0 {
		t.Errorf("import 1 is %s.%s %v -> %v", mod, name, hook.ParamTypes(), hook.ResultTypes())
	}
	if got := hook.Name(); got != "wasmeval.fuel" {
		t.Errorf("hook is named %q", got)
	}
}

// A module with no import, global or export section and no () -> () type
// gets all four.
func TestAddImportToBareModule(t *testing.T) {
	bin := module(
		sec(1, vec(functype([]byte{i32}, []byte{i32}))),
		sec(3, vec(u(0))),
		sec(10, vec(body(nil, opLocalGet, 0, opEnd))),
	)
	out := mustInstrument(t, bin, fuel.Options{AddImport: true, InitialFuel: 5})
	rt := newRuntime(t, &meter{}, 0)
	m := instantiate(t, rt, out)
	if got := fuelLeft(m); got != 5 {
		t.Errorf("fuel = %d, want 5", got)
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
