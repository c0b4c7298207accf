//go:build cgo

package wasm_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmeval/wasmeval/internal/benchreport/cputime"
	"github.com/wasmeval/wasmeval/wasm"
)

// hookGuest calls its hook import n times in a loop, charging its fuel
// global before each call, as the fuel pass's checks do when a slice is
// spent.
const hookGuest = `(module
  (import "wasmeval" "fuel" (func $hook))
  (memory (export "memory") 1)
  (global $fuel (export "fuel") (mut i64) (i64.const 0))
  (func (export "run") (param $n i32)
    (loop $l
      (global.set $fuel (i64.sub (global.get $fuel) (i64.const 1)))
      call $hook
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l (local.get $n)))))`

// BenchmarkFuelHook: one call of a fuel hook from a guest loop, by wall
// and CPU time (all the process's threads): the host call's way in and
// out, the hook's read and write of the fuel global (a cgo call each on
// wasmtime) and, in the gosched variants, runtime.Gosched, which on
// wasmtime (a cgo callback, on a locked thread) hands the P to another
// thread and back (issue 15).
func BenchmarkFuelHook(b *testing.B) {
	bin, err := wasmtime.Wat2Wasm(hookGuest)
	if err != nil {
		b.Fatal(err)
	}
	for _, engine := range wasm.Engines() {
		for _, yield := range []bool{false, true} {
			name := engine + "/plain"
			if yield {
				name = engine + "/gosched"
			}
			b.Run(name, func(b *testing.B) { benchHook(b, engine, bin, yield) })
		}
	}
}

func benchHook(b *testing.B, engine string, bin []byte, yield bool) {
	var g wasm.Global
	host := []wasm.HostFunc{{Name: "fuel", Fn: func(ctx context.Context, m api.Module, stack []uint64) {
		g.Set(uint64(int64(g.Get()) + 1))
		if yield {
			runtime.Gosched()
		}
	}}}
	ctx := context.Background()
	c, err := wasm.CompileModule(ctx, engine, wasm.Config{}, bin, "wasmeval", host)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	mod, err := c.Instantiate(ctx, wazero.NewModuleConfig().WithName(""), wasm.MemoryOptions{Limit: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer mod.Close(ctx)
	g = mod.ExportedGlobal("fuel")
	run := mod.ExportedFunction("run")
	const hooks = 1000
	b.ReportAllocs()
	t0, c0 := time.Now(), cputime.Self()
	for b.Loop() {
		if _, err := run.Call(ctx, hooks); err != nil {
			b.Fatal(err)
		}
	}
	n := float64(b.N) * hooks
	b.ReportMetric(float64(time.Since(t0).Nanoseconds())/n, "ns/hook")
	b.ReportMetric(float64((cputime.Self()-c0).Nanoseconds())/n, "cpu-ns/hook")
	if v := int64(g.Get()); v != 0 {
		b.Fatalf("fuel global %d after the hooks, want 0", v)
	}
}
