// Package python embeds the CPython-WASI artifact: python.wasm (a reactor
// built from Debian's python3.11 sources with the shim in shim/) and the
// stdlib zip, both zstd-compressed. It is implementation detail of
// wasmeval's Python runtime.
//
// The artifact is built by `make python` (build.sh; README.md lists the
// versions, flags and modules). A binary built without it still compiles
// and runs; Wasm and Stdlib then return ErrNotBuilt.
package python

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Regenerate with `make python` (runs build.sh, then zstd -19 into dist/).
//
//go:embed dist
var dist embed.FS

// ErrNotBuilt is returned when the binary was built without the artifact.
var ErrNotBuilt = errors.New("python runtime not built: run make")

var (
	once            sync.Once
	wasmBin, libZip []byte
	errLoad         error
)

// load decompresses both files at once: it is on every process's start.
func load() {
	var wg sync.WaitGroup
	var errZip error
	wg.Add(1)
	go func() {
		defer wg.Done()
		libZip, errZip = decompress("dist/python311.zip.zst")
	}()
	wasmBin, errLoad = decompress("dist/python.wasm.zst")
	wg.Wait()
	if errLoad == nil {
		errLoad = errZip
	}
}

func decompress(name string) ([]byte, error) {
	b, err := dist.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotBuilt
	}
	if err != nil {
		return nil, fmt.Errorf("python: read %s: %w", name, err)
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("python: %s: %w", name, err)
	}
	defer d.Close()
	out, err := d.DecodeAll(b, nil)
	if err != nil {
		return nil, fmt.Errorf("python: decompress %s: %w", name, err)
	}
	return out, nil
}

// Wasm returns the python.wasm module bytes.
func Wasm() ([]byte, error) {
	once.Do(load)
	return wasmBin, errLoad
}

// Stdlib returns the stdlib zip, mounted in the guest at
// /usr/local/lib/python311.zip.
func Stdlib() ([]byte, error) {
	once.Do(load)
	return libZip, errLoad
}
