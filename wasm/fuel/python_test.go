package fuel_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/klauspost/compress/zstd"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/wasm/fuel"
)

// The real CPython artifact, when `make python` has built it. python.wasm
// does not import wasmeval.fuel (yet), so these tests use AddImport: the
// pass renumbers every function, which exercises the whole rewrite.

var python struct {
	once         sync.Once
	wasm, stdlib []byte
	err          error
}

func pythonArtifact(tb testing.TB) (wasm, stdlib []byte) {
	tb.Helper()
	python.once.Do(func() {
		dist := filepath.Join("..", "python", "dist")
		read := func(name string) ([]byte, error) {
			b, err := os.ReadFile(filepath.Join(dist, name))
			if err != nil {
				return nil, err
			}
			d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
			if err != nil {
				return nil, err
			}
			defer d.Close()
			return d.DecodeAll(b, nil)
		}
		if python.wasm, python.err = read("python.wasm.zst"); python.err == nil {
			python.stdlib, python.err = read("python311.zip.zst")
		}
	})
	if errors.Is(python.err, os.ErrNotExist) {
		testenv.RequirePython(tb)
	}
	if python.err != nil {
		tb.Fatal(python.err)
	}
	return python.wasm, python.stdlib
}

func TestInstrumentPython(t *testing.T) {
	bin, _ := pythonArtifact(t)
	out := mustInstrument(t, bin, fuel.Options{AddImport: true})
	t.Logf("python.wasm %d bytes -> instrumented %d bytes (%+.1f%%; DWARF dropped)",
		len(bin), len(out), 100*float64(len(out)-len(bin))/float64(len(bin)))
	// Instrumenting the output again finds the hook it added.
	if _, err := fuel.Instrument(out, fuel.Options{GlobalExport: "again"}); err != nil {
		t.Errorf("second pass: %v", err)
	}
	// The shim imports wasmeval.fuel itself, so no import needs adding;
	// a hook name the module lacks is reported.
	if _, err := fuel.Instrument(bin, fuel.Options{}); err != nil {
		t.Errorf("without AddImport: %v", err)
	}
	if _, err := fuel.Instrument(bin, fuel.Options{HookName: "no_such_hook"}); !errors.Is(err, fuel.ErrNoHook) {
		t.Errorf("missing hook: %v, want ErrNoHook", err)
	}
	// TestPython compiles and runs the output with wazero.
}

// pythonPrelude stands in for prelude/python: the shim imports
// _wasmeval_prelude and calls run_cell and control.
const pythonPrelude = `import _wasmeval

_globals = {"__name__": "__main__"}

def _emit(*args):
    _wasmeval.emit(1, " ".join(str(a) for a in args) + "\n")

_globals["emit"] = _emit

def run_cell(src):
    try:
        exec(compile(src, "<cell>", "exec"), _globals)
        return 0
    except BaseException as e:
        _wasmeval.emit(2, type(e).__name__ + "\n")
        return 1

def control(msg):
    return 0
`

// pythonGuest is an instance of instrumented CPython with the shim's
// exports, its output and its fuel meter.
type pythonGuest struct {
	t   testing.TB
	m   api.Module
	mt  *meter
	out *bytes.Buffer
	// interrupt, when set, makes the next hook call trip CPython's SIGINT flags.
	interrupt atomic.Bool
	flags     [4]uint32
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// newPython instantiates out, the instrumented python.wasm, with a hook that
// adds slice per call and stops the guest after maxCalls calls.
func newPython(t testing.TB, rt wazero.Runtime, cm wazero.CompiledModule, stdlib, prelude []byte, slice, maxCalls int64) *pythonGuest {
	t.Helper()
	ctx := context.Background()
	g := &pythonGuest{t: t, mt: &meter{slice: slice}, out: &bytes.Buffer{}}
	g.mt.onHook = func(ctx context.Context, m api.Module) {
		if g.interrupt.CompareAndSwap(true, false) {
			for _, addr := range g.flags {
				m.Memory().WriteUint32Le(addr, 1)
			}
		}
		if g.mt.calls.Load() >= maxCalls {
			panic(errStop)
		}
	}
	fsys := fstest.MapFS{
		"python311.zip":        {Data: stdlib},
		"wasmeval/prelude.zip": {Data: prelude},
	}
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions("_initialize").
		WithFSConfig(wazero.NewFSConfig().WithFSMount(fsys, "/usr/local/lib")).
		WithRandSource(zeroReader{}) // a fixed hash seed: runs are identical
	m, err := rt.InstantiateModule(withHooks(ctx, g), cm, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(ctx) })
	g.m = m
	if rc := g.call("wasmeval_init"); rc != 0 {
		t.Fatalf("wasmeval_init() = %d: %s", int32(rc), g.out)
	}
	ptr := g.call("wasmeval_alloc", 16)
	g.call("wasmeval_interrupt_flags", ptr)
	for i := range g.flags {
		g.flags[i], _ = m.Memory().ReadUint32Le(uint32(ptr) + 4*uint32(i))
	}
	return g
}

type guestKey struct{}

// withHooks routes the host module's calls to g (one runtime serves
// several guests).
func withHooks(ctx context.Context, g *pythonGuest) context.Context {
	return context.WithValue(ctx, guestKey{}, g)
}

func (g *pythonGuest) call(name string, args ...uint64) uint64 {
	g.t.Helper()
	fn := g.m.ExportedFunction(name)
	if fn == nil {
		g.t.Skipf("python.wasm has no export %s: the shim changed; update this test", name)
	}
	res, err := fn.Call(withHooks(context.Background(), g), args...)
	if err != nil {
		g.t.Fatalf("%s: %v", name, err)
	}
	if len(res) == 0 {
		return 0
	}
	return res[0]
}

// run runs a cell and returns its status and output.
func (g *pythonGuest) run(code string) (uint64, string, error) {
	g.t.Helper()
	ptr := g.call("wasmeval_alloc", uint64(len(code)))
	g.m.Memory().Write(uint32(ptr), []byte(code))
	g.out.Reset()
	res, err := g.m.ExportedFunction("wasmeval_run").Call(withHooks(context.Background(), g), ptr, uint64(len(code)))
	if err != nil {
		return 0, g.out.String(), err
	}
	return res[0], g.out.String(), nil
}

func pythonRuntime(t testing.TB, instrument bool) (wazero.Runtime, wazero.CompiledModule, []byte, []byte) {
	t.Helper()
	bin, _ := pythonArtifact(t)
	out := bin
	if instrument {
		out = mustInstrument(t, bin, fuel.Options{AddImport: true})
	}
	return pythonRuntimeFor(t, out, instrument)
}

// pythonRuntimeFor is pythonRuntime for out, python.wasm as instrumented
// (when instrumented) by the caller.
func pythonRuntimeFor(t testing.TB, out []byte, instrument bool) (wazero.Runtime, wazero.CompiledModule, []byte, []byte) {
	t.Helper()
	_, stdlib := pythonArtifact(t)
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.Create("_wasmeval_prelude.py")
	io.WriteString(w, pythonPrelude)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	guest := func(ctx context.Context) *pythonGuest { return ctx.Value(guestKey{}).(*pythonGuest) }
	_, err := rt.NewHostModuleBuilder("wasmeval").
		NewFunctionBuilder().WithFunc(func(ctx context.Context, m api.Module) {
		guest(ctx).mt.hook(ctx, m)
	}).Export("fuel").
		NewFunctionBuilder().WithFunc(func(ctx context.Context, m api.Module, kind, ptr, n uint32) {
		b, _ := m.Memory().Read(ptr, n)
		guest(ctx).out.Write(b)
	}).Export("emit").
		// Host calls are not exercised here: refuse every one.
		NewFunctionBuilder().WithFunc(func(ctx context.Context, ptr, n uint32) int32 { return -1 }).Export("call_start").
		NewFunctionBuilder().WithFunc(func(ctx context.Context) int32 { return -2 }).Export("call_wait").
		NewFunctionBuilder().WithFunc(func(ctx context.Context, id int32) int32 { return 0 }).Export("call_result_len").
		NewFunctionBuilder().WithFunc(func(ctx context.Context, id int32, dst uint32) {}).Export("call_result").
		Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := rt.CompileModule(ctx, out)
	if err != nil {
		t.Fatalf("wazero rejects instrumented python.wasm: %v", err)
	}
	hook := false
	for _, f := range cm.ImportedFunctions() {
		if mod, name, _ := f.Import(); mod == "wasmeval" && name == "fuel" {
			hook = true
		}
	}
	if instrument && !hook {
		t.Error("the instrumented module does not import wasmeval.fuel")
	}
	return rt, cm, stdlib, zb.Bytes()
}

// Instrumented CPython runs, its fuel use is the same on every run, a
// spinning cell is stopped by the hook, and a soft stop (SIGINT flags set
// from the hook) raises KeyboardInterrupt and keeps the session.
func TestPython(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles python.wasm")
	}
	rt, cm, stdlib, prelude := pythonRuntime(t, true)
	const slice = 1_000_000
	const cell = "import json\nx = sum(i * i for i in range(100000))\nemit(x, json.dumps({'a': [1, 2]}))"

	var used [2]int64
	var calls [2]int64
	for i := range used {
		g := newPython(t, rt, cm, stdlib, prelude, slice, 1<<40)
		rc, out, err := g.run(cell)
		if err != nil || rc != 0 {
			t.Fatalf("run: rc=%d err=%v output %q", rc, err, out)
		}
		if want := "333328333350000 {\"a\": [1, 2]}\n"; out != want {
			t.Fatalf("output %q, want %q", out, want)
		}
		calls[i] = g.mt.calls.Load()
		used[i] = calls[i]*slice - fuelLeft(g.m)
	}
	t.Logf("init + cell: %d fuel, %d hook calls", used[0], calls[0])
	if used[0] != used[1] {
		t.Errorf("fuel differs between identical runs: %d and %d", used[0], used[1])
	}

	t.Run("infinite loop stopped", func(t *testing.T) {
		g := newPython(t, rt, cm, stdlib, prelude, slice, 1<<40)
		before := g.mt.calls.Load()
		g.mt.onHook = func(context.Context, api.Module) {
			if g.mt.calls.Load() >= before+20 {
				panic(errStop)
			}
		}
		_, _, err := g.run("while True:\n    pass")
		if !errors.Is(err, errStop) {
			t.Fatalf("run returned %v, want %v", err, errStop)
		}
	})

	t.Run("soft stop keeps the session", func(t *testing.T) {
		g := newPython(t, rt, cm, stdlib, prelude, slice, 1<<40)
		if rc, out, err := g.run("n = 41"); err != nil || rc != 0 {
			t.Fatalf("rc=%d err=%v %q", rc, err, out)
		}
		base := g.mt.onHook
		start := g.mt.calls.Load()
		g.mt.onHook = func(ctx context.Context, m api.Module) {
			if g.mt.calls.Load() == start+5 {
				g.interrupt.Store(true)
			}
			base(ctx, m)
		}
		rc, out, err := g.run("while True:\n    n += 0")
		if err != nil || rc != 1 || !strings.Contains(out, "KeyboardInterrupt") {
			t.Fatalf("rc=%d err=%v output %q, want KeyboardInterrupt", rc, err, out)
		}
		g.mt.onHook = base
		if rc, out, err := g.run("emit(n + 1)"); err != nil || rc != 0 || out != "42\n" {
			t.Fatalf("after the interrupt: rc=%d err=%v output %q", rc, err, out)
		}
	})
}
