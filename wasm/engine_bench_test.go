//go:build cgo

package wasm_test

import (
	"context"
	"io"
	"testing"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmeval/wasmeval/wasm"
)

// benchModule instantiates engineGuest on each engine for b.Run.
func benchModule(b *testing.B, engine string) wasm.Module {
	bin, err := wasmtime.Wat2Wasm(engineGuest)
	if err != nil {
		b.Fatal(err)
	}
	i32, i64 := api.ValueTypeI32, api.ValueTypeI64
	host := []wasm.HostFunc{
		{Name: "add", Params: []api.ValueType{i32, i64}, Results: []api.ValueType{i64}, Fn: func(ctx context.Context, m api.Module, stack []uint64) {
			stack[0] = uint64(int64(api.DecodeI32(stack[0])) + int64(stack[1]))
		}},
		{Name: "boom", Fn: func(context.Context, api.Module, []uint64) {}},
	}
	ctx := context.Background()
	c, err := wasm.CompileModule(ctx, engine, wasm.Config{}, bin, "t", host)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close(ctx) })
	mod, err := c.Instantiate(ctx, wazero.NewModuleConfig().WithName("").WithStdout(io.Discard), wasm.MemoryOptions{Limit: 4 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { mod.Close(ctx) })
	return mod
}

// BenchmarkHostCall: a call into the guest that calls a host function
// (what the shim's emit and fuel imports cost, plus the call in).
func BenchmarkHostCall(b *testing.B) {
	for _, engine := range wasm.Engines() {
		b.Run(engine, func(b *testing.B) {
			fn := benchModule(b, engine).ExportedFunction("add")
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := fn.Call(ctx, 1, 2); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWASICall: a call into the guest that makes one WASI call
// (fd_write of 5 bytes), wazero's WASI on both engines.
func BenchmarkWASICall(b *testing.B) {
	for _, engine := range wasm.Engines() {
		b.Run(engine, func(b *testing.B) {
			fn := benchModule(b, engine).ExportedFunction("hello")
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := fn.Call(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkImageStart: an instance whose memory starts as a 32 MiB image
// (a template snapshot's size), mapped copy-on-write (both engines), or
// copied into the memory ("copy", what wasmtime's API alone allows).
func BenchmarkImageStart(b *testing.B) {
	bin, err := wasmtime.Wat2Wasm(`(module (memory (export "memory") 1))`)
	if err != nil {
		b.Fatal(err)
	}
	img := make([]byte, 32<<20)
	for i := range img {
		img[i] = byte(i >> 12)
	}
	im, err := wasm.NewImage(img)
	if err != nil {
		b.Fatal(err)
	}
	defer im.Close()
	snap := wasm.SnapshotFromImage(im)
	for _, bc := range []struct{ name, engine string }{
		{"wazero-cow", wasm.EngineWazero}, {"wasmtime-cow", wasm.EngineWasmtime}, {"wasmtime-copy", wasm.EngineWasmtime},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			c, err := wasm.CompileModule(ctx, bc.engine, wasm.Config{}, bin, "t", nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close(ctx)
			cfg := wazero.NewModuleConfig().WithName("")
			b.ReportAllocs()
			for b.Loop() {
				h := &wasm.MemoryHandle{}
				mo := wasm.MemoryOptions{Limit: 64 << 20, Image: im, Handle: h}
				if bc.name == "wasmtime-copy" {
					mo.Image = nil
				}
				mod, err := c.Instantiate(ctx, cfg, mo)
				if err != nil {
					b.Fatal(err)
				}
				if err := snap.Restore(mod.Memory()); err != nil {
					b.Fatal(err)
				}
				if mo.Image == nil {
					mod.Memory().Write(0, img)
				}
				mod.Close(ctx)
				h.Release()
			}
		})
	}
}
