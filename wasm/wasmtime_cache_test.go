//go:build cgo

package wasm

import (
	"context"
	"path/filepath"
	"testing"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/tetratelabs/wazero"
)

// TestWasmtimeCacheCoversSettings: a module compiled with other engine
// settings is not served from the cache entry of the current ones, though
// wasmtime would load it (it does not check the optimisation level or
// Cranelift's flags), and each variant gets an entry of its own.
func TestWasmtimeCacheCoversSettings(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bin, err := wasmtime.Wat2Wasm(`(module (memory (export "memory") 1) (func (export "f") (result i32) i32.const 42))`)
	if err != nil {
		t.Fatal(err)
	}
	base := wasmtimeEngineSettings
	t.Cleanup(func() { wasmtimeEngineSettings = base })
	variants := []struct {
		name string
		s    wasmtimeSettings
	}{
		{"as committed", base},
		{"another optimisation level", wasmtimeSettings{OptLevel: wasmtime.OptLevelSpeedAndSize, MaxWasmStack: base.MaxWasmStack}},
		{"another stack", wasmtimeSettings{OptLevel: base.OptLevel, MaxWasmStack: 2 * base.MaxWasmStack}},
		{"a Cranelift flag", wasmtimeSettings{OptLevel: base.OptLevel, MaxWasmStack: base.MaxWasmStack,
			CraneliftFlags: []craneliftFlag{{"log2_min_function_alignment", "6"}}}},
		{"its other value", wasmtimeSettings{OptLevel: base.OptLevel, MaxWasmStack: base.MaxWasmStack,
			CraneliftFlags: []craneliftFlag{{"log2_min_function_alignment", "5"}}}},
	}
	for i, v := range variants {
		wasmtimeEngineSettings = v.s
		c, err := CompileModule(ctx, EngineWasmtime, Config{CacheDir: dir}, bin, "t", nil)
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		mod, err := c.Instantiate(ctx, wazero.NewModuleConfig().WithName(""), MemoryOptions{Limit: 1 << 20})
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if res, err := mod.ExportedFunction("f").Call(ctx); err != nil || res[0] != 42 {
			t.Errorf("%s: f() = %v, %v", v.name, res, err)
		}
		mod.Close(ctx)
		c.Close(ctx)
		entries, _ := filepath.Glob(filepath.Join(dir, "wasmtime", "*.cwasm"))
		if len(entries) != i+1 {
			t.Fatalf("with %s: %d cache entries, want %d: the module compiled with other settings was served", v.name, len(entries), i+1)
		}
	}
}
