//go:build !cgo

package wasm

import (
	"context"
	"errors"
)

// DefaultEngine is wazero here: wasmtime needs cgo, which this build lacks.
const DefaultEngine = EngineWazero

// compileWasmtime needs cgo: wasmtime is a C library linked into the binary.
func compileWasmtime(context.Context, Config, []byte, string, []HostFunc) (Compiled, error) {
	return nil, errors.New("wasm: engine wasmtime: this binary was built without cgo; build it with CGO_ENABLED=1 (and a C compiler) or use --engine wazero")
}
