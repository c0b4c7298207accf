// Package wasm is wasmeval's boundary to the WebAssembly engine (wazero):
// runtime creation with an on-disk compilation cache, the guest filesystem,
// and memory snapshots. It is implementation detail of the runtimes.
package wasm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tetratelabs/wazero"
)

// Config configures NewRuntime.
type Config struct {
	// CacheDir holds wazero's compilation cache. Empty means no on-disk
	// cache: every process compiles the module again.
	CacheDir string
	// MemoryLimitPages caps every memory of the runtime (64 KiB pages);
	// zero means wazero's default (4 GiB).
	MemoryLimitPages uint32
}

// Compile creates a wazero runtime in compiler mode and compiles bin with
// it. When the on-disk cache is unreadable or corrupt the cache is emptied
// and the module compiled again, then without the cache if that fails too:
// a broken cache costs time, never a run. Writes to the cache are atomic
// (wazero writes a temporary file and renames it), so processes may share it.
func Compile(ctx context.Context, cfg Config, bin []byte, setup func(wazero.Runtime) error) (wazero.Runtime, wazero.CompiledModule, error) {
	dirs := []string{cfg.CacheDir, cfg.CacheDir, ""}
	if cfg.CacheDir == "" {
		dirs = []string{""}
	}
	var errs []error
	for i, dir := range dirs {
		if i == 1 {
			// Second try: the cache was bad; start it afresh.
			_ = os.RemoveAll(filepath.Join(dir, "wazero"))
		}
		rt, mod, err := compile(ctx, cfg, dir, bin, setup)
		if err == nil {
			return rt, mod, nil
		}
		errs = append(errs, err)
	}
	return nil, nil, fmt.Errorf("wasm: compile: %v", errs)
}

func compile(ctx context.Context, cfg Config, dir string, bin []byte, setup func(wazero.Runtime) error) (wazero.Runtime, wazero.CompiledModule, error) {
	rc := wazero.NewRuntimeConfigCompiler()
	if cfg.MemoryLimitPages > 0 {
		rc = rc.WithMemoryLimitPages(cfg.MemoryLimitPages)
	}
	if dir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(filepath.Join(dir, "wazero"))
		if err != nil {
			return nil, nil, err
		}
		rc = rc.WithCompilationCache(cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if setup != nil {
		if err := setup(rt); err != nil {
			rt.Close(ctx)
			return nil, nil, err
		}
	}
	mod, err := rt.CompileModule(ctx, bin)
	if err != nil {
		rt.Close(ctx)
		return nil, nil, err
	}
	return rt, mod, nil
}
