package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/wasmeval/wasmeval/wasm"
)

// engineFlag is --engine on eval, serve and mcp: the WebAssembly engine
// Python runs on (sandbox.Options.Engine). It rides on packageFlags, which
// all three register and apply. Unset means $WASMEVAL_ENGINE, else wazero.
type engineFlag struct{ name string }

const engineUsage = `  --engine NAME
        the WebAssembly engine Python runs on: wazero (the default) or
        wasmtime; unset, $WASMEVAL_ENGINE names it
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
