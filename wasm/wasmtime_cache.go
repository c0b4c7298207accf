//go:build cgo

package wasm

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"
	"golang.org/x/sys/unix"
)

// wasmtimeSettings are what compileWasmtime sets in wasmtime's Config, all
// of it: the compiled-module cache names its files by them (cacheName).
// wasmtime itself loads a serialized module compiled with another
// optimisation level, other Cranelift flags or NaN canonicalisation
// without a word (wasmtime-go v39: it checks its version, the target's CPU
// features, the wasm features and the memory layout), so a setting the
// name left out would have a warm cache serve code compiled the old way.
type wasmtimeSettings struct {
	OptLevel       wasmtime.OptLevel
	MaxWasmStack   int
	CraneliftFlags []craneliftFlag // SetCraneliftFlag, in order
}

type craneliftFlag struct{ Name, Value string }

// wasmtimeEngineSettings are the engine's settings. Cranelift's other
// flags were measured and left at their defaults (wasm/python/README.md,
// "Speed flags"); the host's CPU features are wasmtime's default.
var wasmtimeEngineSettings = wasmtimeSettings{OptLevel: wasmtime.OptLevelSpeed, MaxWasmStack: wasmtimeStack}

// config is a wasmtime Config with s.
func (s wasmtimeSettings) config() *wasmtime.Config {
	wc := wasmtime.NewConfig()
	wc.SetCraneliftOptLevel(s.OptLevel)
	wc.SetMaxWasmStack(s.MaxWasmStack)
	for _, f := range s.CraneliftFlags {
		wc.SetCraneliftFlag(f.Name, f.Value)
	}
	return wc
}

// cacheName is the file name of the module with digest compiled with s:
// every field of s, as Go prints it, so a field added later is covered
// too.
func (s wasmtimeSettings) cacheName(digest [32]byte) string {
	sum := sha256.Sum256(append([]byte(fmt.Sprintf("wasmtime-go v39 %+v\x00", s)), digest[:]...))
	return hex.EncodeToString(sum[:]) + ".cwasm"
}

// loadCwasm loads a compiled module that SaveFile wrote under label at
// path, with the checks of ReadFile (a valid MAC, or a stamp that shows
// the file unchanged since its MAC was checked), and without the two
// 20 MiB copies into fresh memory that reading it into a buffer and
// NewModuleDeserialize's own copy cost: most of a warm process's start,
// in page faults. The file's bytes are copied inside the kernel
// (sendfile) into a sealed memory file of this process, which wasmtime
// maps (NewModuleDeserializeFile) and pages in only as the code runs. The
// cache file itself is never mapped: a later write to it must not reach
// code that was checked (see LoadImage).
func loadCwasm(engine *wasmtime.Engine, key *CacheKey, path, label string) (*wasmtime.Module, error) {
	src, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	st, err := statStamp(src)
	if err != nil {
		return nil, err
	}
	if st.size < MACSize {
		return nil, fmt.Errorf("wasm: cache file %s: too short", path)
	}
	n := int64(st.size) - MACSize
	fd, err := unix.MemfdCreate("wasmeval-cwasm", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("wasm: memfd_create: %w", err)
	}
	mem := os.NewFile(uintptr(fd), "wasmeval-cwasm")
	defer mem.Close() // wasmtime's mapping keeps the pages
	if err := sendAll(mem, src, n); err != nil {
		return nil, fmt.Errorf("wasm: cache file %s: %w", path, err)
	}
	// Nothing changes the copy from here on: what is checked is what runs.
	if _, err := unix.FcntlInt(mem.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL); err != nil {
		return nil, fmt.Errorf("wasm: seal: %w", err)
	}
	mac := make([]byte, MACSize)
	if _, err := src.ReadAt(mac, n); err != nil {
		return nil, fmt.Errorf("wasm: cache file %s: %w", path, err)
	}
	checked := false
	if key.stamped(path, label, st, nil) {
		after, err := statStamp(src)
		checked = err == nil && after == st // unchanged while copied
	}
	if !checked {
		macChecks.Add(1)
		if err := checkMAC(key, label, mem, n, mac); err != nil {
			return nil, fmt.Errorf("wasm: cache file %s: %w", path, err)
		}
		key.stamp(path, label, src, st, nil)
	}
	return wasmtime.NewModuleDeserializeFile(engine, "/proc/self/fd/"+strconv.Itoa(int(mem.Fd())))
}

// sendAll copies the first n bytes of src into dst at its start, inside
// the kernel.
func sendAll(dst, src *os.File, n int64) error {
	var off int64
	for off < n {
		k, err := unix.Sendfile(int(dst.Fd()), int(src.Fd()), &off, int(min(n-off, 1<<30)))
		if err != nil {
			return err
		}
		if k == 0 {
			return fmt.Errorf("cut short at %d of %d bytes", off, n)
		}
	}
	return nil
}

// checkMAC compares the MAC of the first n bytes of f with mac.
func checkMAC(key *CacheKey, label string, f *os.File, n int64, mac []byte) error {
	h := key.newMAC(label)
	if n > 0 {
		b, err := unix.Mmap(int(f.Fd()), 0, int(n), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return err
		}
		h.Write(b)
		unix.Munmap(b)
	}
	if !hmac.Equal(h.Sum(nil), mac) {
		return fmt.Errorf("not authentic")
	}
	return nil
}
