package wasm

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Engine names, for Config.Engine, --engine and sandbox.Options.Engine.
const (
	EngineWazero   = "wazero"
	EngineWasmtime = "wasmtime"
)

// EngineEnv is the environment variable that picks the engine when none is
// configured (an empty Config.Engine): the test suite runs on each engine
// with it (make test).
const EngineEnv = "WASMEVAL_ENGINE"

// DefaultEngine (wasmtime.go, wasmtime_nocgo.go) is the engine used when
// none is configured and EngineEnv is unset: wasmtime where it is compiled
// in (cgo), wazero in a binary built with CGO_ENABLED=0. README.md,
// "Engines", gives the figures that chose it.

// ResolveEngine returns the engine name meant by name: name itself when
// set, else $WASMEVAL_ENGINE, else DefaultEngine. A name that is not an
// engine is an error that lists the engines.
func ResolveEngine(name string) (string, error) {
	from := "engine"
	if name == "" {
		name, from = os.Getenv(EngineEnv), "$"+EngineEnv
	}
	if name == "" {
		return DefaultEngine, nil
	}
	switch name {
	case EngineWazero, EngineWasmtime:
		return name, nil
	}
	return "", fmt.Errorf("wasm: %w", fmt.Errorf("%s %q: use %s", from, name, strings.Join(Engines(), " or ")))
}

// Engines lists the engine names.
func Engines() []string { return []string{EngineWazero, EngineWasmtime} }

// HostFunc is a function of the host module a guest imports. Both engines
// call Fn as wazero does: ctx is the one given to the Function.Call that
// runs the guest, m is the calling module (its Memory is the guest's), and
// stack holds the parameters and receives the results. A panic in Fn
// (an error value) stops the guest: the Call returns that error.
type HostFunc struct {
	Name            string
	Params, Results []api.ValueType
	Fn              api.GoModuleFunc
}

// Compiled is a module compiled by an engine, with its imports resolved:
// the host module and WASI preview1 (wazero's, over the ModuleConfig's
// filesystem, on both engines).
type Compiled interface {
	// Instantiate makes an instance: cfg gives its WASI side (filesystem,
	// stdio, clocks, random, sleep), mo its memory (cap, image, handle; a
	// zero Limit is no cap). Give cfg WithStartFunctions() and call them
	// instead: wasmtime runs none here.
	Instantiate(ctx context.Context, cfg wazero.ModuleConfig, mo MemoryOptions) (Module, error)
	// Engine is the engine's name.
	Engine() string
	// YieldEvery is how often a host function that the guest calls often
	// (the fuel hook) should yield (runtime.Gosched): 0 means at every
	// call. On wazero, 0: the compiled guest runs on its goroutine's P and
	// no signal can preempt it, so only the host function's Go code can
	// be, and without a yield other goroutines wait for sysmon's forced
	// preemption (10 ms and more each time). On wasmtime the guest runs
	// in a cgo call, which holds up neither the GC nor other goroutines,
	// and a yield (on a cgo callback's locked thread) hands the P to
	// another thread and back, some µs of CPU; but a goroutine that has
	// not been scheduled for 10 ms gets its P retaken by sysmon as soon
	// as it is back in C, after every host call, which costs more (the
	// retake, sysmon's wakeups, the next call's search for a P): a yield
	// every few ms keeps it from looking stuck (issue 15).
	YieldEvery() time.Duration
	// Close releases the compiled module; its instances must be closed first.
	Close(ctx context.Context) error
}

// Module is an instance of a Compiled module.
type Module interface {
	// Memory is the instance's linear memory, as wazero's api.Memory on
	// both engines (it stays readable after the guest exited, until Close).
	Memory() api.Memory
	// ExportedFunction returns the named export, or nil.
	ExportedFunction(name string) Function
	// ExportedGlobal returns the named mutable i64 global, or nil.
	ExportedGlobal(name string) Global
	// IsClosed reports whether the guest exited (WASI proc_exit) or the
	// module was closed: its code must not run again.
	IsClosed() bool
	// Close releases the instance.
	Close(ctx context.Context) error
}

// Function is an exported function of a Module. A guest exit is a
// *sys.ExitError, a panic of a HostFunc its value, a trap another error.
type Function interface {
	Call(ctx context.Context, params ...uint64) ([]uint64, error)
}

// Global is a mutable i64 global of a Module.
type Global interface {
	Get() uint64
	Set(v uint64)
}

// CompileModule compiles bin on the named engine (see ResolveEngine), with
// the host module hostName made of host and WASI preview1 as imports.
func CompileModule(ctx context.Context, engine string, cfg Config, bin []byte, hostName string, host []HostFunc) (Compiled, error) {
	engine, err := ResolveEngine(engine)
	if err != nil {
		return nil, err
	}
	if engine == EngineWasmtime {
		return compileWasmtime(ctx, cfg, bin, hostName, host)
	}
	rt, mod, err := Compile(ctx, cfg, bin, func(rt wazero.Runtime) error {
		if err := InstantiateWASI(ctx, rt); err != nil {
			return err
		}
		_, err := HostModuleBuilder(rt, hostName, host).Instantiate(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &wazeroCompiled{rt: rt, mod: mod}, nil
}

// HostModuleBuilder builds the host module name of host in a wazero runtime.
func HostModuleBuilder(rt wazero.Runtime, name string, host []HostFunc) wazero.HostModuleBuilder {
	b := rt.NewHostModuleBuilder(name)
	for _, f := range host {
		b = b.NewFunctionBuilder().WithGoModuleFunction(f.Fn, f.Params, f.Results).Export(f.Name)
	}
	return b
}

// wazeroCompiled is a module compiled by wazero.
type wazeroCompiled struct {
	rt  wazero.Runtime
	mod wazero.CompiledModule
}

func (c *wazeroCompiled) Engine() string { return EngineWazero }

func (c *wazeroCompiled) YieldEvery() time.Duration { return 0 }

func (c *wazeroCompiled) Instantiate(ctx context.Context, cfg wazero.ModuleConfig, mo MemoryOptions) (Module, error) {
	if mo.Limit == 0 {
		mo.Limit = 1 << 32 // no cap but the 32-bit address space
	}
	m, err := c.rt.InstantiateModule(WithMemory(ctx, mo), c.mod, cfg)
	if err != nil {
		return nil, err
	}
	return wazeroModule{m}, nil
}

func (c *wazeroCompiled) Close(ctx context.Context) error { return c.rt.Close(ctx) }

// wazeroModule adapts api.Module to Module.
type wazeroModule struct{ api.Module }

func (m wazeroModule) ExportedFunction(name string) Function {
	if f := m.Module.ExportedFunction(name); f != nil {
		return f
	}
	return nil
}

func (m wazeroModule) ExportedGlobal(name string) Global {
	if g, ok := m.Module.ExportedGlobal(name).(api.MutableGlobal); ok {
		return g
	}
	return nil
}
