// Package python runs Python cells in CPython 3.11 compiled to WASI, inside
// wazero. It is implementation detail of the sandbox package.
//
// A Runtime compiles python.wasm once, initialises CPython and imports the
// prelude in a template instance, and keeps a snapshot of its memory. Each
// Instance (a session's Python state) is a fresh module instance with that
// snapshot restored: no second interpreter start-up.
//
// Guest and host talk through the wasm module "wasmeval" (the import emit)
// and the shim's exports (wasmeval_run, wasmeval_control, ...); see
// wasm/python/shim/wasmeval.c.
package python

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/wasm"
	"github.com/wasmeval/wasmeval/wasm/fuel"
	artifact "github.com/wasmeval/wasmeval/wasm/python"
)

// ErrNotBuilt is returned by New when the binary was built without the
// CPython artifact.
var ErrNotBuilt = artifact.ErrNotBuilt

// Guest paths of the read-only files every instance sees.
const (
	stdlibPath  = "/usr/local/lib/python311.zip"
	preludePath = "/usr/local/lib/wasmeval/prelude.zip"
)

// emit kinds, as in prelude/python/_wasmeval_prelude.py.
const (
	emitStdout  = 1
	emitStderr  = 2
	emitDisplay = 3
	emitResult  = 4
	emitStatus  = 5
)

// DefaultMemoryLimit caps a session's Python memory when
// InstanceOptions.MemoryLimitBytes is zero. Past it, allocations fail with
// MemoryError in the guest and the session stays alive.
const DefaultMemoryLimit = 256 << 20

// Config configures New.
type Config struct {
	// CacheDir holds wazero's compilation cache, the instrumented module
	// and the template snapshot; empty means none.
	CacheDir string
	// KeyFile holds the key that authenticates the cache's files (see
	// wasm.LoadCacheKey). Empty means wasm.DefaultKeyFile(CacheDir).
	KeyFile string
	// NoFuel runs the module without fuel metering, for benchmarks that
	// measure its cost. Without fuel a spinning cell cannot be stopped
	// and blocks Go's garbage collector: never use it with untrusted code.
	NoFuel bool
	// Packages is a host folder of installed pure-Python distributions
	// that every instance sees read-only at PackagesPath, on sys.path after
	// the session root; empty means none. See packages.go.
	Packages string
	// Preload names packages of Packages imported into the template, so
	// a new session starts with them imported.
	Preload []string
	// Engine names the WebAssembly engine (wasm.EngineWazero or
	// wasm.EngineWasmtime); empty means wasm.ResolveEngine's default.
	Engine string
}

// fuelSlice is how much fuel a check may burn between two calls to the
// host: about a millisecond of CPython on this kind of machine, so
// deadlines are checked and Go's scheduler and GC get a turn that often.
const fuelSlice = 10_000_000

// grace is how long a guest has to stop after its KeyboardInterrupt before
// it is stopped hard; retrip is how often the interrupt is repeated meanwhile
// (a guest may catch one and go on).
const (
	grace  = 2 * time.Second
	retrip = 250 * time.Millisecond
)

// Runtime is the compiled CPython module and its template snapshot.
type Runtime struct {
	rt       wasm.Compiled // the engine's compiled module; Close closes it
	compiled wasm.Compiled // the same, which instances are made from
	files    map[string][]byte
	template *wasm.Snapshot
	data     []wasm.Segment // the module's data segments, applied at boot
	flags    [4]uint32      // addresses the host sets to interrupt a cell

	heapOnce sync.Once
	heap     heapState // where the guest allocator's state lies, for trimming

	pkgs *packageLayer // nil: none

	// For WithLayer: the cache, the template's key without a package
	// layer, and (in a Runtime WithLayer made) the Runtime whose module
	// this one shares and must not close. WithLayer copies the fields
	// above but template, flags, heap and pkgs: keep it in step with them.
	cache   diskCache
	baseKey string
	base    *Runtime
}

var _ runtimes.Runtime = (*Runtime)(nil)

// New compiles python.wasm, starts CPython once and snapshots it.
func New(ctx context.Context, cfg Config) (*Runtime, error) {
	cache := openCache(cfg)
	a, err := loadArtifact(cfg, cache) // start.go: from the cache when it can
	if err != nil {
		return nil, err
	}
	pkgs, err := openLayer(cfg)
	if err != nil {
		return nil, err
	}
	kept := false // the layer goes with the Runtime, or now
	defer func() {
		if !kept {
			pkgs.close()
		}
	}()
	key, baseKey, bin, data, stdlib, pre := a.key, a.key, a.bin, a.data, a.stdlib, a.pre
	if pkgs != nil {
		key = templateKey([]byte(key), pkgs.key)
	}
	compiled, err := wasm.CompileModule(ctx, cfg.Engine, wasm.Config{CacheDir: cfg.CacheDir, KeyFile: cfg.KeyFile, ModuleDigest: a.digest}, bin, "wasmeval", hostFuncs())
	if err != nil {
		return nil, fmt.Errorf("python: %w", err)
	}
	r := &Runtime{
		pkgs:     pkgs,
		rt:       compiled,
		compiled: compiled,
		data:     data,
		files:    map[string][]byte{stdlibPath: stdlib, preludePath: pre},
		cache:    cache,
		baseKey:  baseKey,
	}
	if r.loadTemplate(cache, key) {
		kept = true
		return r, nil
	}
	if err := r.makeTemplate(ctx); err != nil {
		compiled.Close(ctx)
		return nil, err
	}
	r.saveTemplate(cache, key)
	kept = true
	return r, nil
}

// hostFuncs are the host module "wasmeval" the shim imports: every value
// the guest passes to it is checked (a pointer or length out of its memory
// is refused, never followed).
func hostFuncs() []wasm.HostFunc {
	i32 := api.ValueTypeI32
	return []wasm.HostFunc{
		{Name: "emit", Params: []api.ValueType{i32, i32, i32}, Fn: hostEmit},
		{Name: "fuel", Fn: hostFuel},
		{Name: "call_start", Params: []api.ValueType{i32, i32}, Results: []api.ValueType{i32}, Fn: hostCallStart},
		{Name: "call_wait", Results: []api.ValueType{i32}, Fn: hostCallWait},
		{Name: "call_result_len", Params: []api.ValueType{i32}, Results: []api.ValueType{i32}, Fn: hostCallResultLen},
		{Name: "call_result", Params: []api.ValueType{i32, i32}, Fn: hostCallResult},
	}
}

// hostModule is hostFuncs in a wazero runtime (tests call it directly).
func hostModule(rt wazero.Runtime) wazero.HostModuleBuilder {
	return wasm.HostModuleBuilder(rt, "wasmeval", hostFuncs())
}

// fuelOptions are the fuel pass's options for CPython; fuelVersion names
// them (change it with them) and the pass's code (fuel.Version) in the
// cache, so a changed pass never gets the module an older one made.
var fuelOptions = fuel.Options{SkipLeafEntries: true, ChargeOnlyAtEntry: true, LocalHook: true}

var fuelVersion = "fuel v2 skip-leaf charge-at-entry local-hook " + fuel.Version()

// templateEpoch is the wall clock the template's boot reads (makeTemplate).
var templateEpoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// makeTemplate starts CPython in a throwaway instance and snapshots it.
func (r *Runtime) makeTemplate(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "wasmeval-template-")
	if err != nil {
		return fmt.Errorf("python: %w", err)
	}
	defer os.RemoveAll(dir)
	// A fixed random source: CPython draws its hash secret at boot, so
	// every template (on every machine) orders sets and dicts of str the
	// same way, which deterministic sessions and replays need. It is the
	// guest's own secret; its hash flooding would slow only itself.
	//
	// Fixed clocks too: CPython keeps a clock reading from its boot in the
	// template, and the template's bytes name the states persisted over it
	// (StateKey), so a template built on another machine, or rebuilt after
	// its cache entry went, must come out the same for a stored session to
	// load there. The monotonic clock ticks a microsecond a read.
	var tick int64
	opts := runtimes.InstanceOptions{Root: dir, Rand: mrand.NewChaCha8([32]byte([]byte("wasmeval python template hashes."))),
		Now:      func() time.Time { return templateEpoch },
		Nanotime: func() int64 { tick += 1000; return tick }}

	// Boot: the module is compiled without its data segments (so that
	// session instances map the snapshot untouched); write them here, then
	// run the reactor's _initialize and CPython's init.
	inst := &Instance{r: r, opts: opts}
	if err := r.instantiate(ctx, inst, wasm.MemoryOptions{}); err != nil {
		return err
	}
	defer inst.close(ctx)
	var log strings.Builder
	inst.sink = &logSink{&log}
	if err := wasm.ApplyData(inst.mod.Memory(), r.data); err != nil {
		return fmt.Errorf("python: %w", err)
	}
	if _, err := inst.mod.ExportedFunction("_initialize").Call(inst.callCtx(ctx)); err != nil {
		return fmt.Errorf("python: _initialize: %w: %s", err, log.String())
	}
	res, err := inst.mod.ExportedFunction("wasmeval_init").Call(inst.callCtx(ctx))
	if err != nil {
		return fmt.Errorf("python: init: %w: %s", err, log.String())
	}
	if rc := int32(res[0]); rc != 0 {
		return fmt.Errorf("python: init failed (%d): %s", rc, log.String())
	}
	// The addresses of the interrupt flags, written by the shim into
	// scratch memory of its own.
	p, err := inst.alloc(ctx, 16)
	if err != nil {
		return err
	}
	if _, err := inst.mod.ExportedFunction("wasmeval_interrupt_flags").Call(ctx, uint64(p)); err != nil {
		return fmt.Errorf("python: interrupt flags: %w", err)
	}
	b, _ := inst.mod.Memory().Read(p, 16)
	for i := range r.flags {
		r.flags[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	inst.free(ctx, p)
	if r.pkgs != nil {
		if err := r.pkgs.install(ctx, inst, &log); err != nil {
			return err
		}
	}
	r.template, err = wasm.TakeSnapshot(inst.mod.Memory())
	return err
}

// Language implements runtimes.Runtime.
func (r *Runtime) Language() string { return "py" }

// Close implements runtimes.Runtime.
func (r *Runtime) Close(ctx context.Context) error {
	var err error
	if r.base == nil { // a layer's Runtime shares its base's module
		err = r.rt.Close(ctx)
	}
	r.pkgs.close()
	if r.template != nil {
		r.template.Close()
	}
	return err
}

// TemplateSize is the template snapshot's memory size in bytes, for
// benchmarks.
func (r *Runtime) TemplateSize() uint32 { return r.template.Size() }

// NewInstance implements runtimes.Runtime: a fresh module instance with the
// template restored, then set up for the session (env, cwd).
func (r *Runtime) NewInstance(ctx context.Context, opts runtimes.InstanceOptions) (runtimes.Instance, error) {
	inst := &Instance{r: r, opts: opts}
	if err := r.start(ctx, inst); err != nil {
		return nil, err
	}
	return inst, nil
}

// start gives inst a new module instance with the template restored, set
// up for the session.
func (r *Runtime) start(ctx context.Context, inst *Instance) error {
	if err := r.startFrom(ctx, inst, r.template); err != nil {
		return err
	}
	inst.afterCell()
	return nil
}

// startFrom is start from any snapshot of this runtime's module.
func (r *Runtime) startFrom(ctx context.Context, inst *Instance, snap *wasm.Snapshot) error {
	if err := r.fitsLimit(inst.opts, snap); err != nil {
		return err
	}
	if err := r.instantiate(ctx, inst, wasm.MemoryOptions{Image: snap.Image()}); err != nil {
		return err
	}
	if err := snap.Restore(inst.mod.Memory()); err != nil {
		inst.close(ctx)
		return err
	}
	return r.setup(ctx, inst)
}

// setup sets a restored instance up for its session (env, cwd, random).
func (r *Runtime) setup(ctx context.Context, inst *Instance) error {
	opts := inst.opts
	env := opts.Env
	if env == nil {
		env = map[string]string{}
	}
	memLimit := opts.MemoryLimitBytes
	if memLimit <= 0 {
		memLimit = DefaultMemoryLimit
	}
	// memory_limit caps sys.setrecursionlimit (_wasmeval_recursion.py).
	msg, _ := json.Marshal(map[string]any{"op": "setup", "env": env, "cwd": opts.Root, "memory_limit": memLimit})
	var log strings.Builder
	inst.sink = &logSink{&log}
	// The setup runs the prelude in the instance's state, which after a
	// fork is the source's, patched as its guest liked: it gets a deadline
	// (KeyboardInterrupt, then a hard stop), and no fuel budget of a cell.
	sctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	budget, out := inst.fuelBudget, inst.fuelOut
	inst.runCtx, inst.fuelBudget, inst.fuelOut = sctx, 0, false
	inst.interrupted.Store(false)
	inst.trippedAt, inst.firstTrip = time.Time{}, time.Time{}
	rc, err := inst.call(sctx, inst.fnControl, msg)
	if inst.calls != nil {
		inst.calls.close()
		inst.calls = nil
	}
	inst.runCtx, inst.fuelBudget, inst.fuelOut = nil, budget, out
	inst.sink = nil
	if err != nil || rc != 0 {
		inst.close(ctx)
		var exit *sys.ExitError
		switch {
		case sctx.Err() != nil && ctx.Err() == nil:
			return fmt.Errorf("python: session setup did not finish within %v (the guest's state patched what it runs): %s", setupTimeout, log.String())
		case errors.As(err, &exit):
			return fmt.Errorf("python: session setup failed: the interpreter exited with status %d", exit.ExitCode())
		case err != nil:
			return fmt.Errorf("python: session setup failed: %s: %s", trapText(err), log.String())
		}
		return fmt.Errorf("python: session setup failed (rc %d): %s", rc, log.String())
	}
	return nil
}

// setupTimeout bounds setting an instance up for its session (normally
// well under a millisecond).
const setupTimeout = 5 * time.Second

// instantiate makes a module instance whose filesystem is the session root
// plus the read-only stdlib and prelude.
// instantiate makes a module instance on the memory mo describes, without
// running anything in it.
func (r *Runtime) instantiate(ctx context.Context, inst *Instance, mo wasm.MemoryOptions) error {
	opts := inst.opts
	var quota wasm.DiskQuota // a nil *hostcalls.DiskQuota must stay a nil interface
	if opts.DiskQuota != nil {
		quota = opts.DiskQuota
	}
	gfs, err := wasm.NewGuestFS(opts.Root, r.files, quota)
	if err != nil {
		return fmt.Errorf("python: %w", err)
	}
	rnd := opts.Rand
	if rnd == nil {
		rnd = crand.Reader
	}
	out := stdioWriter{inst}
	fsc := wazero.NewFSConfig().(sysfs.FSConfig).WithSysFSMount(gfs, "/")
	if r.pkgs != nil {
		fsc = fsc.(sysfs.FSConfig).WithSysFSMount(r.pkgs.fs, PackagesPath)
	}
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithFSConfig(fsc).
		WithNanosleep(inst.nanosleep).
		WithRandSource(rnd).
		WithStdout(out).
		WithStderr(out)
	if opts.Now != nil {
		now := opts.Now
		cfg = cfg.WithWalltime(func() (int64, int32) {
			t := now()
			return t.Unix(), int32(t.Nanosecond())
		}, 1)
	} else {
		cfg = cfg.WithSysWalltime()
	}
	if opts.Nanotime != nil {
		cfg = cfg.WithNanotime(opts.Nanotime, 1)
	} else {
		cfg = cfg.WithSysNanotime()
	}
	mo.Limit = uint64(DefaultMemoryLimit)
	if opts.MemoryLimitBytes > 0 {
		mo.Limit = uint64(opts.MemoryLimitBytes)
	}
	inst.mem = &wasm.MemoryHandle{}
	mo.Handle = inst.mem
	mod, err := r.compiled.Instantiate(inst.callCtx(ctx), cfg, mo)
	if err != nil {
		inst.mem.Release()
		gfs.Close()
		return fmt.Errorf("python: instantiate: %w", err)
	}
	inst.mod, inst.fs = mod, gfs
	inst.fnRun = mod.ExportedFunction("wasmeval_run")
	inst.fnControl = mod.ExportedFunction("wasmeval_control")
	inst.fnAlloc = mod.ExportedFunction("wasmeval_alloc")
	inst.fnFree = mod.ExportedFunction("wasmeval_free")
	if g := mod.ExportedGlobal(fuel.DefaultGlobalExport); g != nil {
		inst.fuel = g
		// What _initialize burnt (template boot only) goes uncounted;
		// from here every unit is.
		g.Set(uint64(fuelSlice))
		inst.given = fuelSlice
	}
	return nil
}

// Instance is one session's Python interpreter.
type Instance struct {
	r    *Runtime
	opts runtimes.InstanceOptions
	fs   *wasm.GuestFS
	mod  wasm.Module
	mem  *wasm.MemoryHandle // the module's memory, mapped from the template

	// Exported functions, looked up once: each lookup builds a call
	// engine with its own stack.
	fnRun, fnControl, fnAlloc, fnFree wasm.Function

	fuel wasm.Global // nil without fuel metering

	// ckpt is the state before the running cell (the pages its guest had
	// written since the template), for rolling back a cell stopped hard.
	// Trim drops it (stale): the next cell takes it again before it runs.
	ckpt      checkpoint
	ckptStale bool
	// after is the work between cells (giving freed pages back, taking
	// the checkpoint): aftercell.go.
	after afterWork
	// given is all the fuel handed to the guest so far (initial value and
	// refills); used fuel is given minus the global's value.
	given int64
	// The running cell's fuel accounting: usage when it started, and its
	// budget (0: none).
	fuelStart, fuelBudget int64
	// interruptAt is the running cell's replayed interrupt
	// (runtimes.WithInterruptAt), tripAt where its interrupt came
	// (Outcome.Interrupt), checks the fuel checks it has reached, sleeps
	// and waits the sleeps and host-call waits it has begun.
	interruptAt, tripAt   runtimes.InterruptPoint
	checks, sleeps, waits int64
	fuelOut               bool      // the budget ran out
	yielded               time.Time // when the fuel hook last yielded (hostFuel)

	sink        runtimes.Sink
	runCtx      context.Context // the running cell's context
	calls       *calls          // the running cell's host calls
	interrupted atomic.Bool
	trippedAt   time.Time // when the running cell was last interrupted
	firstTrip   time.Time
	reentry     reentry // nested cells (calls.go)
}

// errHardStop ends a guest that did not stop within the grace period.
var errHardStop = errors.New("python: the cell did not stop after its KeyboardInterrupt")

var (
	_ runtimes.Instance = (*Instance)(nil)
	_ runtimes.Sizer    = (*Instance)(nil)
)

type instKey struct{}

func (in *Instance) callCtx(ctx context.Context) context.Context {
	// Cancellation is ours to handle (soft interrupt); wazero never sees it.
	return context.WithValue(context.WithoutCancel(ctx), instKey{}, in)
}

// live reports whether the instance has a module it may call into. A
// module closes itself when the guest exits (WASI proc_exit: os._exit): its
// code must not run again, and its memory is only kept mapped (see
// wasm.MemoryHandle.Release) so that stray reads find something.
func (in *Instance) live() bool {
	return in.mod != nil && !in.mod.IsClosed()
}

// errExited is returned for a call into a module that has exited.
var errExited = errors.New("python: the interpreter has exited")

// alloc and free take the context of the call (callCtx) that the memory
// is for.
func (in *Instance) alloc(cctx context.Context, n int) (uint32, error) {
	if !in.live() {
		return 0, errExited
	}
	res, err := in.fnAlloc.Call(cctx, uint64(n))
	if err != nil {
		return 0, fmt.Errorf("python: alloc: %w", err)
	}
	if res[0] == 0 {
		return 0, errors.New("python: alloc: guest out of memory")
	}
	return uint32(res[0]), nil
}

func (in *Instance) free(cctx context.Context, p uint32) {
	if in.live() {
		_, _ = in.fnFree.Call(cctx, uint64(p))
	}
}

// call passes data to the export fn as (ptr, len) and returns its result.
// After an error (a trap, or the guest exited) nothing more runs in the
// module: the caller replaces it.
func (in *Instance) call(ctx context.Context, fn wasm.Function, data []byte) (int32, error) {
	cctx := in.callCtx(ctx) // one for the three calls: two allocations each
	p, err := in.alloc(cctx, len(data))
	if err != nil {
		return 0, err
	}
	if !in.mod.Memory().Write(p, data) {
		in.free(cctx, p)
		return 0, fmt.Errorf("python: write %d bytes at %#x out of range", len(data), p)
	}
	res, err := fn.Call(cctx, uint64(p), uint64(len(data)))
	if err == nil && in.mod.IsClosed() {
		// wazero reports proc_exit(0) as an ExitError, but be sure.
		err = sys.NewExitError(0)
	}
	if err != nil {
		return 0, err
	}
	in.free(cctx, p)
	return int32(res[0]), nil
}

// Run implements runtimes.Instance.
//
// Stopping a cell: the fuel hook (and a sleeping guest) notice that ctx is
// done and trip SIGINT, so the cell gets a KeyboardInterrupt and the session
// keeps its state. A guest that has not stopped within the grace period
// (it catches the interrupt and goes on) is stopped hard: the instance is
// discarded and Python starts afresh, which the cell's output says.
//
// A guest that ends its interpreter (WASI proc_exit: os._exit) or traps
// (os.abort, a fatal signal, the C stack exhausted) ends the same way: the
// module it closed or broke is replaced, from the checkpoint taken before
// the cell when there is one; nothing else of the host is touched.
func (in *Instance) Run(ctx context.Context, code string, sink runtimes.Sink) (runtimes.Outcome, error) {
	if ctx.Err() != nil {
		return runtimes.Outcome{Failed: true, Interrupted: true}, nil
	}
	in.waitCheckpoint()
	if !in.live() {
		// A restart after the last cell failed; try again.
		if err := in.Reset(ctx); err != nil {
			return runtimes.Outcome{Failed: true}, fmt.Errorf("python: restart: %w", err)
		}
	}
	if in.ckptStale {
		in.takeCheckpoint(nil, false) // dropped by Trim while idle
	}
	in.reentry.begin()
	defer in.reentry.end()
	in.sink, in.runCtx = sink, ctx
	in.interrupted.Store(false)
	in.trippedAt, in.firstTrip = time.Time{}, time.Time{}
	in.fuelOut = false
	in.fuelBudget, _ = runtimes.FuelBudget(ctx)
	in.interruptAt, _ = runtimes.InterruptAt(ctx)
	in.tripAt, in.checks, in.sleeps, in.waits = runtimes.InterruptPoint{}, 0, 0, 0
	if in.fuel != nil {
		// A whole slice (or the budget, when smaller): the cell's fuel
		// checks then fall at the same points of its work whatever ran
		// before it (a replayed timeout comes at the recorded check).
		n := int64(fuelSlice)
		if in.fuelBudget > 0 {
			n = min(fuelSlice, in.fuelBudget)
		}
		in.fuelStart = in.refill(n)
	}
	defer func() {
		if in.calls != nil {
			in.calls.close()
		}
		in.sink, in.runCtx, in.calls = nil, nil, nil
	}()

	// Without fuel (benchmarks only) a watcher goroutine trips the
	// interrupt; with fuel the hook does, on the guest's own goroutine.
	var stopWatch func() bool
	if in.fuel == nil {
		stopWatch = context.AfterFunc(ctx, in.interrupt)
	}
	// The code's bytes are only copied into the guest's memory: no copy
	// of them on the Go heap first.
	rc, err := in.call(ctx, in.fnRun, unsafe.Slice(unsafe.StringData(code), len(code)))
	if stopWatch != nil {
		stopWatch()
	}
	interrupted := in.interrupted.Load()
	if interrupted && err == nil {
		in.clearInterrupt()
	}
	var used int64
	if in.fuel != nil {
		used = in.fuelUsed() - in.fuelStart
	}
	if err != nil {
		var what string
		var exit *sys.ExitError
		switch {
		case errors.Is(err, errHardStop):
			what = fmt.Sprintf("the cell ignored its KeyboardInterrupt for %v and was stopped", grace)
		case errors.Is(err, errNestedCrash):
			what = "a cell that ran inside this one while it waited for a host call stopped the interpreter"
		case errors.As(err, &exit):
			// WASI proc_exit: os._exit(), or CPython ending itself on a
			// fatal error. It ends this interpreter only.
			what = fmt.Sprintf("the Python interpreter exited with status %d (os._exit or a fatal error)", exit.ExitCode())
		default:
			// A trap (unreachable, out of bounds, stack exhausted): the
			// interpreter's state cannot be trusted.
			what = fmt.Sprintf("the Python runtime crashed (%v)", trapText(err))
		}
		in.runCtx = nil // the restart is not part of the stopped cell
		if rerr := in.rollback(ctx); rerr == nil {
			sink.Stderr(fmt.Sprintf("\n%s; the session's Python state was rolled back to before this cell (files are as the cell left them)\n", what))
		} else {
			if rerr := in.Reset(ctx); rerr != nil {
				return runtimes.Outcome{Failed: true}, fmt.Errorf("python: restart: %w", rerr)
			}
			sink.Stderr(fmt.Sprintf("\n%s; Python was restarted and the session's Python state was lost (files are kept)\n", what))
		}
		return runtimes.Outcome{Failed: true, Interrupted: interrupted && !in.fuelOut, FuelExhausted: in.fuelOut, FuelUsed: used, Interrupt: in.tripAt}, nil
	}
	stopped := interrupted && rc != 0
	in.afterCell()
	return runtimes.Outcome{
		Failed:        rc != 0,
		Interrupted:   stopped && !in.fuelOut,
		FuelExhausted: stopped && in.fuelOut,
		FuelUsed:      used,
		Interrupt:     in.tripAt,
	}, nil
}

// trapText is the first line of a wazero error: its message without the
// wasm stack trace that follows.
func trapText(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}

// fuelUsed is the fuel the guest has burnt since the instance started.
func (in *Instance) fuelUsed() int64 { return in.given - int64(in.fuel.Get()) }

// refill sets the fuel left before the next hook call to n (the global
// counts down; the hook runs when it goes below zero) and returns the fuel
// used until then (fuelUsed, from the same read of the global: a cgo call
// each on wasmtime).
func (in *Instance) refill(n int64) (used int64) {
	cur := int64(in.fuel.Get())
	in.fuel.Set(uint64(n))
	used = in.given - cur
	in.given += n - cur
	return used
}

// hostFuel is the import wasmeval.fuel, called by the injected fuel checks
// when a slice of fuel is spent.
func hostFuel(ctx context.Context, m api.Module, _ []uint64) {
	in, _ := ctx.Value(instKey{}).(*Instance)
	if in == nil || in.fuel == nil {
		// Instantiation (_initialize), before the instance knows its
		// global: keep the guest going, uncounted.
		if g := fuelGlobal(ctx, m); g != nil {
			g.Set(uint64(int64(g.Get()) + fuelSlice))
		}
		return
	}
	slice := int64(fuelSlice)
	if in.fuelBudget > 0 && in.runCtx != nil && !in.fuelOut {
		if left := in.fuelBudget - (in.fuelUsed() - in.fuelStart); left <= 0 {
			in.fuelOut = true
		} else {
			slice = min(slice, left)
		}
	}
	// A replayed timeout: the same slices as when recorded reach the same
	// checks, so the recorded interrupt comes at the same one.
	atInterrupt := false
	if in.runCtx != nil {
		in.checks++
		atInterrupt = in.interruptAt.Checks > 0 && in.checks >= in.interruptAt.Checks
	}
	// Add to the counter rather than set it: it is negative by what the
	// last check overshot.
	in.fuel.Set(uint64(int64(in.fuel.Get()) + slice))
	in.given += slice
	if in.runCtx != nil && (in.fuelOut || atInterrupt || in.runCtx.Err() != nil) {
		now := time.Now()
		switch {
		case in.firstTrip.IsZero():
			in.firstTrip = now
			in.tripAt = runtimes.InterruptPoint{Checks: in.checks, Fuel: in.fuelUsed() - in.fuelStart}
			in.trip(now)
		case now.Sub(in.firstTrip) > grace:
			panic(errHardStop)
		case now.Sub(in.trippedAt) > retrip:
			in.trip(now)
		}
	}
	// A spinning guest on wazero reaches no Go safe point by itself; this
	// call is one, and the yield lets the other goroutines run at once.
	// On wasmtime the guest runs in a cgo call and a yield costs thread
	// switches, so it comes only every few ms, which keeps sysmon from
	// retaking the P after each hook (wasm.Compiled.YieldEvery;
	// TestSpinningCellLetsGoRun, BenchmarkFuelHook).
	if every := in.r.compiled.YieldEvery(); every == 0 {
		runtime.Gosched()
	} else if now := time.Now(); now.Sub(in.yielded) >= every {
		in.yielded = now
		runtime.Gosched()
	}
}

// fuelGlobal returns the fuel global of the calling module, looked up on it:
// during instantiation the instance does not know its module yet.
func fuelGlobal(ctx context.Context, m api.Module) api.MutableGlobal {
	g, _ := m.ExportedGlobal(fuel.DefaultGlobalExport).(api.MutableGlobal)
	return g
}

func (in *Instance) trip(now time.Time) {
	in.trippedAt = now
	in.interrupt()
}

// interrupt does what CPython's trip_signal(SIGINT) does: the eval loop
// raises KeyboardInterrupt at its next check.
func (in *Instance) interrupt() {
	in.interrupted.Store(true)
	if !in.live() {
		return
	}
	mem := in.mod.Memory()
	for _, addr := range in.r.flags {
		mem.WriteUint32Le(addr, 1)
	}
}

// clearInterrupt drops an interrupt the guest did not consume, so it cannot
// fire in the next cell. The eval-breaker flags may stay set: CPython then
// finds no tripped signal and clears them itself.
func (in *Instance) clearInterrupt() {
	if !in.live() {
		return
	}
	mem := in.mod.Memory()
	mem.WriteUint32Le(in.r.flags[0], 0)
	mem.WriteUint32Le(in.r.flags[1], 0)
}

// nanosleep backs the guest's sleeps. When the running cell's context is
// done it interrupts the guest and returns early; the guest then raises
// KeyboardInterrupt.
func (in *Instance) nanosleep(ns int64) {
	ctx := in.runCtx
	if ctx == nil {
		time.Sleep(time.Duration(ns))
		return
	}
	in.sleeps++
	if at := in.interruptAt; at.Sleeps > 0 && in.sleeps >= at.Sleeps {
		// A replayed timeout that came during this sleep.
		if !in.interrupted.Load() {
			in.tripAt = at
			in.trip(time.Now())
			in.firstTrip = in.trippedAt
		}
		return
	}
	if in.opts.Sleep != nil && in.opts.Sleep(ns) {
		return // a virtual clock's sleep
	}
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		if !in.interrupted.Load() {
			in.trip(time.Now())
			if in.firstTrip.IsZero() {
				in.firstTrip = in.trippedAt
				if in.fuel != nil {
					in.tripAt = runtimes.InterruptPoint{Sleeps: in.sleeps, Fuel: in.fuelUsed() - in.fuelStart}
				}
			}
		}
	}
}

// beginWait counts a wait for host calls' answers (call_wait) and says
// whether a replayed interrupt comes in it: the recorded cell was stopped
// while it waited there, so the replay stops it there too, without taking
// an answer (which the tape gives at once), once the evals nested in the
// wait have run (stopTurn).
func (in *Instance) beginWait() bool {
	in.waits++
	at := in.interruptAt
	return at.Waits != 0 && in.waits >= at.Waits && !in.interrupted.Load()
}

// tripInWait delivers a replayed interrupt in the current wait.
func (in *Instance) tripInWait() {
	in.tripAt = in.interruptAt
	in.trip(time.Now())
	in.firstTrip = in.trippedAt
}

// waitStopped notes where a cell stopped while it waited for host calls
// came: in its current wait (Outcome.Interrupt), so that a recording
// can say so and its replay stop it in the same wait.
func (in *Instance) waitStopped() {
	if in.fuel != nil && in.tripAt.IsZero() {
		in.tripAt = runtimes.InterruptPoint{Waits: in.waits, Fuel: in.fuelUsed() - in.fuelStart}
	}
}

// Fork implements runtimes.Forker: a new instance set up for opts' session
// with this one's memory. Every instance's memory is the template mapped
// copy-on-write plus the pages its guest wrote, so the copy maps the
// template too and gets just those pages. Files the guest holds open are
// not carried over.
func (in *Instance) Fork(ctx context.Context, opts runtimes.InstanceOptions) (runtimes.Instance, error) {
	in.waitCheckpoint()
	if !in.live() {
		return nil, fmt.Errorf("python: fork: %w", errExited)
	}
	src := in.mod.Memory()
	size := src.Size()
	dirty, err := in.mem.DirtyPages(size)
	if err != nil {
		return nil, fmt.Errorf("python: fork: %w", err)
	}
	cp := &Instance{r: in.r, opts: opts}
	if err := in.r.instantiate(ctx, cp, wasm.MemoryOptions{Image: in.r.template.Image()}); err != nil {
		return nil, fmt.Errorf("python: fork: %w", err)
	}
	dst := cp.mod.Memory()
	if cur := dst.Size(); cur < size {
		if _, ok := dst.Grow((size - cur + 65535) / 65536); !ok {
			cp.close(ctx)
			return nil, fmt.Errorf("python: fork: cannot grow the copy's memory to %d bytes", size)
		}
	}
	all, _ := src.Read(0, size)
	for _, p := range dirty {
		off := p * 4096
		if !dst.Write(off, all[off:min(off+4096, size)]) {
			cp.close(ctx)
			return nil, fmt.Errorf("python: fork: page %d out of range", p)
		}
	}
	if err := in.r.setup(ctx, cp); err != nil {
		return nil, fmt.Errorf("python: fork: %w", err)
	}
	cp.afterCell()
	return cp, nil
}

// afterCellTrim is the smallest free run whose pages are given back after
// every cell; smaller ones stay, so that a cell's allocation churn does not
// fault its pages in again each time. Trim gives back every free page.
const afterCellTrim = 1 << 20

// instanceOverhead estimates the host memory of a module instance besides
// its linear memory: wazero's per-instance tables, globals and call stacks,
// and the guest filesystem's state (measured: about 370 KiB of Go heap per
// idle instance).
const instanceOverhead = 512 << 10

// ResidentBytes implements runtimes.Sizer: the guest pages the instance
// wrote (read from the kernel's page map; pages it shares with the template
// are not its own), its checkpoint's copy and an estimate of wazero's
// per-instance state. Like every Instance method it must not run while a
// cell does.
func (in *Instance) ResidentBytes() int64 {
	in.waitCheckpoint()
	n := int64(in.ckpt.bytes())
	if in.live() {
		if pages, err := in.mem.ResidentPages(in.mod.Memory().Size()); err == nil {
			n += int64(pages) * 4096
		}
		n += instanceOverhead
	}
	return n
}

// SizeBound is an upper bound of ResidentBytes, known without measuring
// (no page map read) and without doing the work between cells: the
// linear memory's size (ResidentBytes counts its written pages, none past
// it), the instance overhead, and the checkpoint's copies as they are
// or, while the work is pending, as its take may leave them. A take holds
// at most one copy per page of the memory, in a buffer grown by a quarter
// more than asked (wasm.HostPages.Grow) or kept from before, so its bytes
// stay below the larger of its bytes now and the memory's size plus a
// quarter and two pages. exact is always false: the bound counts every
// page, written or not. The sandbox charges a session this after each
// eval instead of measuring it (issue 15: the measurement after every
// eval was 27% of serve's CPU per trivial cell); it measures when the
// budget needs it. Like every Instance method it must not run while a
// cell does; it waits for the work between cells only if it is running.
func (in *Instance) SizeBound() (n int64, exact bool) {
	a := &in.after
	a.mu.Lock()
	defer a.mu.Unlock()
	ckpt := int64(in.ckpt.bytes())
	if in.live() {
		size := int64(in.mod.Memory().Size())
		n = size + instanceOverhead
		if a.pending && in.opts.Checkpoints {
			ckpt = max(ckpt, size+size/4+2*4096)
		}
	}
	return n + ckpt, false
}

// Trim implements runtimes.Sizer: it gives every page of the guest
// allocator's free chunks back to the OS, and the written pages that hold
// what the template (or zero) holds there, and drops the checkpoint, which
// the next cell takes again before it runs (about 0.1 ms per MiB).
func (in *Instance) Trim(ctx context.Context) int64 {
	in.waitCheckpoint()
	if in.live() {
		if in.opts.Checkpoints {
			in.writes() // the pages the guest owns, for the discards
		}
		in.trimHeap(1)
		_, _ = in.mem.DiscardClean(in.mod.Memory().Size())
	}
	if in.opts.Checkpoints {
		in.ckpt.drop()
		in.ckptStale = true
	}
	return in.ResidentBytes()
}

// Reset implements runtimes.Instance: a fresh interpreter from the template.
func (in *Instance) Reset(ctx context.Context) error {
	in.waitCheckpoint()
	in.close(ctx)
	in.mod, in.fs = nil, nil
	return in.r.start(ctx, in)
}

// Close implements runtimes.Instance.
func (in *Instance) Close(ctx context.Context) error {
	in.dropAfterWork() // no trim or checkpoint of what goes
	in.close(ctx)
	in.ckpt.drop()
	return nil
}

// close closes the module and unmaps its memory; the checkpoint stays.
func (in *Instance) close(ctx context.Context) {
	in.waitCheckpoint()
	if in.mod != nil {
		in.mod.Close(ctx)
		in.mod, in.fuel = nil, nil
	}
	if in.mem != nil {
		in.mem.Release()
		in.mem = nil
	}
	if in.fs != nil {
		in.fs.Close()
		in.fs = nil
	}
}

// Caps on what one emit may carry into the host. Text has none (it is
// passed on in pieces, and the sink keeps a bounded head and tail); a
// display bundle or status event is decoded whole, so past these it is
// dropped with a note instead of costing the host a multiple of its size.
const (
	maxBundle = 32 << 20 // room for the sandbox's 16 MiB image plus text
	maxStatus = 1 << 20
	piece     = 1 << 20 // text is handed to the sink this much at a time
)

// hostEmit is the import wasmeval.emit(kind, ptr, len).
func hostEmit(ctx context.Context, m api.Module, stack []uint64) {
	in, _ := ctx.Value(instKey{}).(*Instance)
	kind, ptr, n := int32(stack[0]), uint32(stack[1]), uint32(stack[2])
	if in == nil || in.sink == nil {
		return
	}
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		in.sink.Stderr(fmt.Sprintf("wasmeval: the guest emitted %d bytes at %#x, outside its %d bytes of memory; dropped\n", n, ptr, m.Memory().Size()))
		return
	}
	switch kind {
	case emitStdout:
		inPieces(b, in.sink.Stdout)
	case emitStderr:
		inPieces(b, in.sink.Stderr)
	case emitDisplay, emitResult:
		if len(b) > maxBundle {
			in.sink.Stderr(fmt.Sprintf("wasmeval: a display bundle of %d MiB was dropped: one display may carry %d MiB\n", len(b)>>20, maxBundle>>20))
			return
		}
		var bundle runtimes.Bundle
		if err := json.Unmarshal(b, &bundle); err != nil {
			in.sink.Stderr(fmt.Sprintf("wasmeval: bad display bundle from the guest: %v\n", err))
			return
		}
		in.sink.Display(bundle, kind == emitResult)
	case emitStatus:
		if len(b) > maxStatus {
			in.sink.Stderr(fmt.Sprintf("wasmeval: a status event of %d KiB was dropped: one event may carry %d KiB\n", len(b)>>10, maxStatus>>10))
			return
		}
		var ev struct{ Kind, Message string }
		if err := json.Unmarshal(b, &ev); err == nil {
			in.sink.Status(ev.Kind, ev.Message)
		}
	}
}

// inPieces passes b to out a piece at a time, so that one huge write (the
// guest may print hundreds of MiB at once) is not copied whole into host
// memory; UTF-8 sequences are kept whole.
func inPieces(b []byte, out func(string)) {
	for len(b) > piece {
		cut := piece
		for cut > piece-4 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		out(string(b[:cut]))
		b = b[cut:]
	}
	if len(b) > 0 {
		out(string(b))
	}
}

// stdioWriter receives what the guest writes to WASI fds 1 and 2: only
// CPython's own fatal messages, since sys.stdout goes through emit (and
// os.write(1, ...) of a cell).
type stdioWriter struct{ in *Instance }

func (w stdioWriter) Write(p []byte) (int, error) {
	if w.in.sink != nil {
		inPieces(p, w.in.sink.Stderr)
	}
	return len(p), nil
}

// logSink collects output during init and setup, for error messages.
type logSink struct{ b *strings.Builder }

func (s *logSink) Stdout(t string)               { s.b.WriteString(t) }
func (s *logSink) Stderr(t string)               { s.b.WriteString(t) }
func (s *logSink) Display(runtimes.Bundle, bool) {}
func (s *logSink) Status(string, string)         {}

var _ io.Writer = stdioWriter{}
