// Package wasm is wasmeval's boundary to the WebAssembly engine (wazero):
// runtime creation with an on-disk compilation cache, the guest filesystem,
// and memory snapshots. It is implementation detail of the runtimes.
package wasm

import (
	"context"
	"crypto/sha256"
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
	// KeyFile holds the key that authenticates the cache's entries (see
	// LoadCacheKey). Empty means DefaultKeyFile(CacheDir).
	KeyFile string
	// MemoryLimitPages caps every memory of the runtime (64 KiB pages);
	// zero means wazero's default (4 GiB).
	MemoryLimitPages uint32
	// ModuleDigest, when not zero, is the SHA-256 of the module's bytes,
	// which the caller already knows (the Python runtime keeps it with the
	// module in its cache): the compiled-code caches are named by it, and
	// hashing the module (8 MiB) again is skipped.
	ModuleDigest [32]byte
}

// moduleDigest is cfg.ModuleDigest, or bin's SHA-256 when it is zero.
func moduleDigest(cfg Config, bin []byte) [32]byte {
	if cfg.ModuleDigest != ([32]byte{}) {
		return cfg.ModuleDigest
	}
	return sha256.Sum256(bin)
}

// Compile creates a wazero runtime in compiler mode and compiles bin with
// it. When the on-disk cache is unreadable or corrupt the cache is emptied
// and the module compiled again, then without the cache if that fails too:
// a broken cache costs time, never a run. Writes to the cache are atomic
// (wazero writes a temporary file and renames it), so processes may share it.
//
// Compiled code from the cache runs natively, so wazero's CRC is not
// enough: before the runtime is made, every entry is checked against the
// MAC wasmeval wrote next to it under the cache key, and an entry without
// a valid one is deleted (wazero then compiles and writes it again);
// after compiling, the new entries get their MACs. Without a usable key
// the cache is not used at all.
//
// Each module has a folder of its own in the cache (wazeroModuleDir), and
// only that folder is checked: checking every entry of every artifact a
// machine ever ran read and hashed them all on each start (290 MiB, most
// of a second, on a developer's machine after a day of builds). Folders no
// process has used for cacheMaxAge are removed.
func Compile(ctx context.Context, cfg Config, bin []byte, setup func(wazero.Runtime) error) (wazero.Runtime, wazero.CompiledModule, error) {
	dirs := []string{cfg.CacheDir, cfg.CacheDir, ""}
	var key *CacheKey
	if cfg.CacheDir != "" {
		keyFile := cfg.KeyFile
		if keyFile == "" {
			keyFile = DefaultKeyFile(cfg.CacheDir)
		}
		var err error
		if key, err = LoadCacheKey(keyFile); err != nil {
			dirs = []string{""}
		}
	} else {
		dirs = []string{""}
	}
	var errs []error
	for i, dir := range dirs {
		wroot, wdir := "", ""
		if dir != "" {
			wroot, wdir = filepath.Join(dir, "wazero"), wazeroModuleDir(dir, moduleDigest(cfg, bin))
		}
		if i == 1 {
			// Second try: the cache was bad; start it afresh.
			_ = os.RemoveAll(wdir)
		}
		var verified map[string]bool
		if wdir != "" {
			verified = verifyWazeroCache(key, wroot, wdir)
		}
		rt, mod, err := compile(ctx, cfg, wdir, bin, setup)
		if err == nil {
			if wdir != "" {
				sealWazeroCache(key, wdir, verified)
				pruneWazeroCache(wroot, wdir)
			}
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
		cache, err := wazero.NewCompilationCacheWithDir(dir)
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
