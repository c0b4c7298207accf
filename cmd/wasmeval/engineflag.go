package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/wasmeval/wasmeval/wasm"
)

// engineFlag is --engine on eval, serve and mcp: the WebAssembly engine
// Python runs on (sandbox.Options.Engine). It rides on packageFlags, which
// all three register and apply. Unset means $WASMEVAL_ENGINE, else
// wasm.DefaultEngine: wasmtime, or wazero in a binary built without cgo.
type engineFlag struct{ name string }

// engineUsage names this binary's default, which depends on how it was
// built (wasm.DefaultEngine).
const engineUsage = `  --engine NAME
        the WebAssembly engine Python runs on: wasmtime or wazero; unset,
        $WASMEVAL_ENGINE names it, else ` + wasm.DefaultEngine + ` (this binary's
        default; wasmtime needs a build with cgo, wazero is the default of
        one built with CGO_ENABLED=0)
`

func (e *engineFlag) register(fs *flag.FlagSet) { fs.Var(e, "engine", "") }

func (e *engineFlag) String() string { return e.name }

func (e *engineFlag) Set(s string) error {
	s = strings.TrimSpace(s)
	if _, err := wasm.ResolveEngine(s); err != nil || s == "" {
		return fmt.Errorf("%q is not an engine; use %s", s, strings.Join(wasm.Engines(), " or "))
	}
	e.name = s
	return nil
}
