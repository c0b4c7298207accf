package fuel_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/wasmeval/wasmeval/wasm/fuel"
)

// FuzzInstrument feeds arbitrary bytes to the pass, with the default
// options and with runtimes/python's (local hook, charges at entry, leaf
// entries skipped): it must never panic; what it accepts it must be able to
// read back; and when wazero accepts the input it must accept the output.
func FuzzInstrument(f *testing.F) {
	for _, seed := range [][]byte{
		loopModule, factModule, nestedModule, foreverModule, opcodeModule,
		module(commonTypes, hookImport, sec(3, vec(u(0))), sec(10, vec(body(nil, fd(0x0c, make([]byte, 16)), opDrop, opEnd)))),
		module(sec(1, vec(functype(nil, nil))), sec(3, vec(u(0))), sec(8, u(0)), sec(10, vec(body(nil, opEnd)))),
		[]byte("\x00asm\x01\x00\x00\x00"),
		nil,
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	f.Cleanup(func() { rt.Close(ctx) })
	valid := func(bin []byte) error {
		cm, err := rt.CompileModule(ctx, bin)
		if err == nil {
			cm.Close(ctx)
		}
		return err
	}
	f.Fuzz(func(t *testing.T, bin []byte, addImport bool) {
		for _, opts := range []fuel.Options{{AddImport: addImport},
			{AddImport: addImport, SkipLeafEntries: true, ChargeOnlyAtEntry: true, LocalHook: true}} {
			out, err := fuel.Instrument(bin, opts)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "fuel: ") {
					t.Fatalf("%+v: error without the package prefix: %v", opts, err)
				}
				return
			}
			if _, err := fuel.Instrument(out, fuel.Options{GlobalExport: "\x00again"}); err != nil && !strings.Contains(err.Error(), "already exports") {
				t.Fatalf("%+v: the pass cannot read its own output: %v", opts, err)
			}
			if valid(bin) == nil {
				if err := valid(out); err != nil {
					t.Fatalf("%+v: wazero accepts the input but not the output: %v", opts, err)
				}
			}
		}
	})
}
