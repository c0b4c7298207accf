//go:build cgo

package wasm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wasmeval/wasmeval/wasm"
)

func TestResolveEngine(t *testing.T) {
	tests := []struct {
		name, arg, env, want, err string
	}{
		{name: "default", want: wasm.DefaultEngine},
		{name: "wazero", arg: "wazero", env: "wasmtime", want: "wazero"},
		{name: "wasmtime", arg: "wasmtime", want: "wasmtime"},
		{name: "from the environment", env: "wasmtime", want: "wasmtime"},
		{name: "bad name", arg: "v8", err: `wasm: engine "v8": use wazero or wasmtime`},
		{name: "bad environment", env: "wasmer", err: `wasm: $WASMEVAL_ENGINE "wasmer": use wazero or wasmtime`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(wasm.EngineEnv, tc.env)
			got, err := wasm.ResolveEngine(tc.arg)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("got %q, %v; want error %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestDefaultEngine: with nothing configured and $WASMEVAL_ENGINE unset, a
// build with cgo (as this file is) compiles on wasmtime, the faster engine
// (README.md, "Engines"); wasmtime_nocgo.go keeps wazero for the others.
func TestDefaultEngine(t *testing.T) {
	t.Setenv(wasm.EngineEnv, "")
	if wasm.DefaultEngine != wasm.EngineWasmtime {
		t.Fatalf("DefaultEngine = %q in a build with cgo, want %q", wasm.DefaultEngine, wasm.EngineWasmtime)
	}
	bin, err := wasmtime.Wat2Wasm(`(module (func (export "f") (result i32) i32.const 1))`)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := wasm.CompileModule(ctx, "", wasm.Config{}, bin, "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if c.Engine() != wasm.EngineWasmtime {
		t.Errorf("compiled on %s with no engine named, want %s", c.Engine(), wasm.EngineWasmtime)
	}
}

// engineGuest exercises what the runtimes need of an engine: host
// functions (with the caller's context and memory), WASI through the
// ModuleConfig, a mutable global, memory growth, traps, host panics and
// a guest exit.
const engineGuest = `(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (import "t" "add" (func $add (param i32 i64) (result i64)))
  (import "t" "boom" (func $boom))
  (memory (export "memory") 1 100)
  (global (export "g") (mut i64) (i64.const 7))
  (func (export "add") (param i32 i64) (result i64) local.get 0 local.get 1 call $add)
  (func (export "hello") (result i32)
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 5))
    (i32.store (i32.const 16) (i32.const 0x6c6c6568))
    (i32.store8 (i32.const 20) (i32.const 0x6f))
    (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
  (func (export "exit") (call $exit (i32.const 3)))
  (func (export "trap") unreachable)
  (func (export "boom") call $boom)
  (func (export "grow") (param i32) (result i32) local.get 0 memory.grow))`

type ctxKey struct{}

var errBoom = errors.New("boom from the host")

// TestEnginesAgree runs engineGuest on each engine and expects the same
// behaviour from both.
func TestEnginesAgree(t *testing.T) {
	bin, err := wasmtime.Wat2Wasm(engineGuest)
	if err != nil {
		t.Fatal(err)
	}
	i32, i64 := api.ValueTypeI32, api.ValueTypeI64
	var sawCtx any
	host := []wasm.HostFunc{
		{Name: "add", Params: []api.ValueType{i32, i64}, Results: []api.ValueType{i64}, Fn: func(ctx context.Context, m api.Module, stack []uint64) {
			sawCtx = ctx.Value(ctxKey{})
			b, _ := m.Memory().Read(16, 5)
			if string(b) != "hello" {
				panic(errors.New("the host function does not see the guest's memory"))
			}
			stack[0] = uint64(int64(api.DecodeI32(stack[0])) + int64(stack[1]))
		}},
		{Name: "boom", Fn: func(context.Context, api.Module, []uint64) { panic(errBoom) }},
	}
	for _, engine := range wasm.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			c, err := wasm.CompileModule(ctx, engine, wasm.Config{}, bin, "t", host)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			if c.Engine() != engine {
				t.Fatalf("compiled on %s, want %s", c.Engine(), engine)
			}
			var stdout bytes.Buffer
			h := &wasm.MemoryHandle{}
			mod, err := c.Instantiate(ctx, wazero.NewModuleConfig().WithName("").WithStdout(&stdout), wasm.MemoryOptions{Limit: 4 << 20, Handle: h})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release()
			defer mod.Close(ctx)
			call := func(name string, params ...uint64) []uint64 {
				t.Helper()
				res, err := mod.ExportedFunction(name).Call(context.WithValue(ctx, ctxKey{}, name), params...)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return res
			}
			if res := call("hello"); res[0] != 0 || stdout.String() != "hello" {
				t.Errorf("fd_write: errno %d, stdout %q", res[0], stdout.String())
			}
			if res := call("add", api.EncodeI32(-2), 44); int64(res[0]) != 42 || sawCtx != "add" {
				t.Errorf("add: %d, context value %v", int64(res[0]), sawCtx)
			}
			g := mod.ExportedGlobal("g")
			if g == nil || g.Get() != 7 {
				t.Fatalf("global: %v", g)
			}
			g.Set(9)
			if g.Get() != 9 {
				t.Errorf("global after Set(9): %d", g.Get())
			}
			if mod.ExportedFunction("nope") != nil || mod.ExportedGlobal("nope") != nil {
				t.Error("a missing export is not nil")
			}
			if res := call("grow", 2); res[0] != 1 || mod.Memory().Size() != 3<<16 {
				t.Errorf("grow: %d, memory %d bytes", res[0], mod.Memory().Size())
			}
			if res := call("grow", 100); int32(res[0]) != -1 {
				t.Errorf("grow past the 4 MiB limit: %d, want -1", int32(res[0]))
			}
			mod.Memory().WriteByte(3<<16-1, 0xaa)
			if d, err := h.DirtyPages(mod.Memory().Size()); err != nil || len(d) == 0 || d[len(d)-1] != 3<<16/4096-1 {
				t.Errorf("dirty pages: %v, %v", d, err)
			}
			if _, err := mod.ExportedFunction("trap").Call(ctx); err == nil || !strings.HasPrefix(err.Error(), "wasm error: unreachable") {
				t.Errorf("trap: %v", err)
			}
			if _, err := mod.ExportedFunction("boom").Call(ctx); !errors.Is(err, errBoom) {
				t.Errorf("host panic: %v, want errBoom", err)
			}
			if mod.IsClosed() {
				t.Fatal("closed before its exit")
			}
			_, err = mod.ExportedFunction("exit").Call(ctx)
			if exit, ok := errors.AsType[*sys.ExitError](err); !ok || exit.ExitCode() != 3 {
				t.Errorf("exit: %v, want exit code 3", err)
			}
			if !mod.IsClosed() {
				t.Error("not closed after its exit")
			}
			if b, ok := mod.Memory().Read(16, 5); !ok || string(b) != "hello" {
				t.Errorf("memory after the exit: %q %v", b, ok)
			}
		})
	}
}

// TestEnginesMapImages: an instance started from an image sees the image,
// its writes stay its own (copy-on-write), and only the pages it wrote are
// dirty, on each engine.
func TestEnginesMapImages(t *testing.T) {
	bin, err := wasmtime.Wat2Wasm(`(module (memory (export "memory") 1))`)
	if err != nil {
		t.Fatal(err)
	}
	img := make([]byte, 5<<16)
	for i := range img {
		img[i] = byte(i / 4096)
	}
	for _, engine := range wasm.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			im, err := wasm.NewImage(img)
			if err != nil {
				t.Fatal(err)
			}
			defer im.Close()
			snap := wasm.SnapshotFromImage(im)
			c, err := wasm.CompileModule(ctx, engine, wasm.Config{}, bin, "t", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			var mods []wasm.Module
			for i := range 2 {
				h := &wasm.MemoryHandle{}
				mod, err := c.Instantiate(ctx, wazero.NewModuleConfig().WithName(""), wasm.MemoryOptions{Limit: 1 << 20, Image: im, Handle: h})
				if err != nil {
					t.Fatal(err)
				}
				defer h.Release()
				defer mod.Close(ctx)
				if err := snap.Restore(mod.Memory()); err != nil {
					t.Fatal(err)
				}
				mem := mod.Memory()
				if b, _ := mem.Read(0, mem.Size()); !bytes.Equal(b, img) {
					t.Fatalf("instance %d does not start with the image", i)
				}
				mem.WriteByte(uint32(i+1)*4096+7, 0xff)
				if d, err := h.DirtyPages(mem.Size()); err != nil || len(d) != 1 || d[0] != uint32(i+1) {
					t.Errorf("instance %d: dirty pages %v, %v; want [%d]", i, d, err, i+1)
				}
				mods = append(mods, mod)
			}
			if v, _ := mods[0].Memory().ReadByte(2*4096 + 7); v != 2 {
				t.Errorf("a write of one instance shows in another: %#x", v)
			}
			if v, _ := mods[1].Memory().ReadByte(4096 + 7); v != 1 {
				t.Errorf("a write of one instance shows in another: %#x", v)
			}
		})
	}
}

// TestWasmtimeCache: wasmtime's compiled module is cached under the cache
// directory and loaded again (its time refreshed, so it is not pruned); a
// forged entry is compiled over, never loaded; entries nobody loaded for
// two weeks go when a new one is written.
func TestWasmtimeCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := wasm.Config{CacheDir: dir}
	compile := func(wat string) {
		t.Helper()
		bin, err := wasmtime.Wat2Wasm(wat)
		if err != nil {
			t.Fatal(err)
		}
		c, err := wasm.CompileModule(ctx, wasm.EngineWasmtime, cfg, bin, "t", nil)
		if err != nil {
			t.Fatal(err)
		}
		mod, err := c.Instantiate(ctx, wazero.NewModuleConfig().WithName(""), wasm.MemoryOptions{Limit: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if res, err := mod.ExportedFunction("f").Call(ctx); err != nil || res[0] != 42 {
			t.Fatalf("f: %v %v", res, err)
		}
		mod.Close(ctx)
		c.Close(ctx)
	}
	const watA = `(module (memory (export "memory") 1) (func (export "f") (result i32) i32.const 42))`
	const watB = `(module (memory (export "memory") 1) (func (export "f") (result i32) i32.const 40 i32.const 2 i32.add))`
	compile(watA)
	entries, _ := filepath.Glob(filepath.Join(dir, "wasmtime", "*.cwasm"))
	if len(entries) != 1 {
		t.Fatalf("cache entries %v, want one", entries)
	}
	a := entries[0]
	old := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(a, old, old); err != nil {
		t.Fatal(err)
	}
	compile(watA) // loaded: its time is refreshed
	if st, err := os.Stat(a); err != nil || time.Since(st.ModTime()) > time.Hour {
		t.Fatalf("a loaded entry's time was not refreshed: %v %v", st, err)
	}
	// A forged entry: wasmtime's native code with a MAC that is not ours.
	forged, _ := os.ReadFile(a)
	forged[len(forged)-1] ^= 1
	if err := os.WriteFile(a, forged, 0o600); err != nil {
		t.Fatal(err)
	}
	compile(watA)
	if b, _ := os.ReadFile(a); bytes.Equal(b, forged) {
		t.Error("the forged entry was kept")
	}
	// An entry nobody loaded for 30 days goes when another is written.
	if err := os.Chtimes(a, old, old); err != nil {
		t.Fatal(err)
	}
	compile(watB)
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Errorf("a stale entry was kept: %v", err)
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, "wasmtime", "*.cwasm")); len(entries) != 1 {
		t.Errorf("cache entries %v, want the new one", entries)
	}
}

// TestWasmtimeCacheLoad: a cached compiled module is loaded without being
// read into this process's heap (a warm start's largest cost was copying
// its 20 MiB twice, into a buffer and into wasmtime's memory), and the
// code that runs is a private copy: writing over the cache file after the
// load changes nothing the instance runs.
func TestWasmtimeCacheLoad(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := wasm.Config{CacheDir: dir}
	var wat strings.Builder
	wat.WriteString("(module (memory (export \"memory\") 1)\n")
	for i := range 8000 { // about 1.5 MiB of native code
		fmt.Fprintf(&wat, "(func $f%d (param i32) (result i32) local.get 0 i32.const %d i32.mul i32.const %d i32.xor local.get 0 i32.const 3 i32.shl i32.add)\n", i, i+1, i*7)
	}
	wat.WriteString("(func (export \"f\") (result i32) i32.const 6 call $f7999 drop i32.const 42))")
	bin, err := wasmtime.Wat2Wasm(wat.String())
	if err != nil {
		t.Fatal(err)
	}
	c, err := wasm.CompileModule(ctx, wasm.EngineWasmtime, cfg, bin, "t", nil) // compiles and caches
	if err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	entries, _ := filepath.Glob(filepath.Join(dir, "wasmtime", "*.cwasm"))
	if len(entries) != 1 {
		t.Fatalf("cache entries %v, want one", entries)
	}
	st, err := os.Stat(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	c, err = wasm.CompileModule(ctx, wasm.EngineWasmtime, cfg, bin, "t", nil) // loads
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	alloc := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("loading a %d-byte entry allocated %d bytes", st.Size(), alloc)
	if alloc > uint64(st.Size())/2 {
		t.Errorf("loading a %d-byte cache entry allocated %d bytes of heap: it was read into memory", st.Size(), alloc)
	}
	mod, err := c.Instantiate(ctx, wazero.NewModuleConfig().WithName(""), wasm.MemoryOptions{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)
	zeros := make([]byte, st.Size())
	if err := os.WriteFile(entries[0], zeros, 0o600); err != nil {
		t.Fatal(err)
	}
	if res, err := mod.ExportedFunction("f").Call(ctx); err != nil || res[0] != 42 {
		t.Fatalf("f after the cache file was overwritten: %v %v", res, err)
	}
}
