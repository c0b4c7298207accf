package fuel_test

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmeval/wasmeval/wasm/fuel"
)

// A host gives the guest fuel in slices: the hook adds one slice per call
// (keeping the overdraft), and is where it would check deadlines and yield
// to the Go scheduler.
func ExampleInstrument() {
	// loopModule imports wasmeval.fuel and exports spin(n), a loop of n
	// iterations that costs 1 + 5n fuel.
	bin, err := fuel.Instrument(loopModule, fuel.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	const slice = 1000
	calls := 0
	_, err = rt.NewHostModuleBuilder("wasmeval").
		NewFunctionBuilder().WithFunc(func(ctx context.Context, m api.Module) {
		calls++
		g := m.ExportedGlobal(fuel.DefaultGlobalExport).(api.MutableGlobal)
		g.Set(uint64(int64(g.Get()) + slice))
	}).Export("fuel").
		Instantiate(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := rt.Instantiate(ctx, bin)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := m.ExportedFunction("spin").Call(ctx, 10_000); err != nil {
		fmt.Println(err)
		return
	}
	left := int64(m.ExportedGlobal(fuel.DefaultGlobalExport).Get())
	fmt.Println("hook calls:", calls)
	fmt.Println("fuel used:", calls*slice-int(left))
	// Output:
	// hook calls: 51
	// fuel used: 50001
}
