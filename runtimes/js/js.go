package js

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	mathrand "math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/wasmeval/wasmeval/internal/goja"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/prelude"
	"github.com/wasmeval/wasmeval/runtimes"
)

const (
	// DefaultMemoryLimit is the heap growth a cell may cause when
	// InstanceOptions.MemoryLimitBytes is zero.
	DefaultMemoryLimit = 256 << 20
	// maxCallStackSize is the deepest JavaScript call stack, a tenth of
	// Node's and Python's default: an overflow through native code (a
	// getter, a Proxy trap, a callback of Array.prototype.map, toString)
	// unwinds in time quadratic in the depth, in nested Go panics (goja
	// recovers and panics again at each native frame) that no interrupt
	// can stop. At 2500 that took 0.3-0.5 s on an idle machine and 1-3 s
	// on a busy one; at 1000 it is 6 times less.
	maxCallStackSize = 1000
	// v8MaxStringLength is V8's limit on string length, which the guards
	// apply too (or less, under a small memory limit).
	v8MaxStringLength = 1<<29 - 24
	// stackTraceLimit is the number of frames shown for a stack overflow or
	// an interruption, as Node's Error.stackTraceLimit.
	stackTraceLimit = 10
	preludeName     = "wasmeval:prelude/"
)

// preludeFiles are the prelude's files in the order they run.
var preludeFiles = []string{primordialsFile, "inspect.js", "console.js", "timers.js", "process.js", "guards.js", "web.js", "node.js", "modules.js", "helpers.js"}

var (
	preludeOnce     sync.Once
	preludePrograms []*goja.Program
	preludeErr      error
)

// compilePrelude compiles the prelude once per process; goja programs can
// run in any number of VMs.
func compilePrelude() ([]*goja.Program, error) {
	preludeOnce.Do(func() {
		for _, name := range preludeFiles {
			src, err := prelude.JS.ReadFile("js/" + name)
			if name == primordialsFile { // generated (primordials.go)
				var s string
				s, err = primordialsSource()
				src = []byte(s)
			}
			if err != nil {
				preludeErr = fmt.Errorf("js: prelude: %w", err)
				return
			}
			prg, err := goja.Compile(preludeName+name, string(src), true)
			if err != nil {
				preludeErr = fmt.Errorf("js: prelude %s: %w", name, err)
				return
			}
			preludePrograms = append(preludePrograms, prg)
		}
	})
	return preludePrograms, preludeErr
}

// Runtime is the JavaScript runtime: goja, one VM per session. Its zero
// value is not usable; call New.
type Runtime struct{}

var _ runtimes.Runtime = (*Runtime)(nil)

// New returns the JavaScript runtime.
func New() *Runtime {
	return &Runtime{}
}

// Language returns "js".
func (r *Runtime) Language() string { return "js" }

// Close frees nothing: the compiled prelude is shared by the process.
func (r *Runtime) Close(ctx context.Context) error { return nil }

// NewInstance starts a session's VM and runs the prelude in it.
func (r *Runtime) NewInstance(ctx context.Context, opts runtimes.InstanceOptions) (runtimes.Instance, error) {
	if _, err := compilePrelude(); err != nil {
		return nil, err
	}
	// The size of a fresh VM, which measurements subtract, is taken once
	// per process: ahead of the first measurement, which may be in a hurry.
	go freshSize()
	in := &instance{opts: opts, memLimit: opts.MemoryLimitBytes}
	if in.memLimit <= 0 {
		in.memLimit = DefaultMemoryLimit
	}
	if in.opts.Now == nil {
		in.opts.Now = time.Now
	}
	if in.opts.Rand == nil {
		in.opts.Rand = rand.Reader
	}
	if opts.Root != "" {
		if !filepath.IsAbs(opts.Root) {
			return nil, fmt.Errorf("js: session root %q is not an absolute path", opts.Root)
		}
		root, err := os.OpenRoot(opts.Root)
		if err != nil {
			return nil, fmt.Errorf("js: session root: %w", err)
		}
		in.root = root
		in.rootPath = filepath.Clean(opts.Root)
	}
	if err := in.start(); err != nil {
		in.Close(ctx)
		return nil, err
	}
	return in, nil
}

// hooks are the prelude's functions that the host calls.
type hooks struct {
	inspect        goja.Callable
	formatUncaught goja.Callable
	exitCode       goja.Callable
	helpers        goja.Callable
	resetGuards    goja.Callable
	afterCell      goja.Callable
	releaseGlobals goja.Callable
	jsonParse      goja.Callable
	// domException is the prelude's DOMException constructor, taken
	// before any cell runs: a cell may replace the global.
	domException goja.Constructor
}

type instance struct {
	opts     runtimes.InstanceOptions
	memLimit int64
	root     *os.Root
	rootPath string

	vm      *goja.Runtime
	hooks   hooks
	loop    *loop
	modules map[string]*moduleRecord
	start0  time.Time // the guest clock at start, for performance.now
	rand    *mathrand.PCG
	sink    runtimes.Sink
	// calls are the running cell's host calls; nil between cells.
	calls *hostCalls
	// rejections are promises rejected with no handler yet, in order.
	rejections []*goja.Promise
	// reentry takes cells nested in the running one (nested.go).
	reentry reentry
	// node is the state of the Node and Web APIs (node.go).
	node nodeState
	// owner is the session's RootOwner: who the fs module's new files
	// are given to (owner.go); nil when the sandbox gave none.
	owner *hostcalls.RootOwner
	// cellNo counts the cells run since the VM started: stacks name a
	// cell <cell-N>, as Python's tracebacks do.
	cellNo int

	// vmMu is held by the goroutine that runs the VM, all through a cell
	// except while the cell waits for a timer or a host call: the memory
	// monitor measures a waiting cell's VM under it (memory.go).
	vmMu sync.Mutex
	// guard is the running cell's; nil between cells.
	guard *guard
	// size is the session's size as last measured (walk.go), sizeMark the
	// heap then.
	size     int64
	sizeMark heapMark
	sizeAt   time.Time
	// unsure is how much the session grew in measurements across a
	// collection since collection number unsureCycle ended (the live heap
	// may lack any part of it: settleUnsure).
	unsure      int64
	unsureCycle uint64
	// shares are the guest's globals' own sizes at the last measurement
	// between cells, sharesBefore as the running cell started (release.go).
	shares, sharesBefore map[string]int64
	// bound is an upper bound of size known without walking (sizebound.go).
	bound sizeBound
}

// discardSink is the sink outside of Run: the prelude prints nothing.
type discardSink struct{}

func (discardSink) Stdout(string)                 {}
func (discardSink) Stderr(string)                 {}
func (discardSink) Display(runtimes.Bundle, bool) {}
func (discardSink) Status(kind, message string)   {}

// now is the guest's clock (Date.now, new Date()), and a safe point.
func (in *instance) now() time.Time {
	in.safePoint()
	return in.opts.Now()
}

// monotonicNanos is the guest clock's time since the session started, for
// performance.now and process.hrtime: deterministic under a fake clock.
func (in *instance) monotonicNanos() float64 {
	return float64(in.opts.Now().Sub(in.start0).Nanoseconds())
}

func (in *instance) throwRange(msg string) { panic(in.rangeError(msg)) }

// rangeError makes a RangeError with the realm's own constructor: a cell
// may have replaced the global one.
func (in *instance) rangeError(msg string) *goja.Object { return in.vm.NewError("RangeError", msg) }

// random is Math.random: 53 bits from InstanceOptions.Rand, then, should
// the reader fail (a finite seed runs out), from a generator with a fixed
// seed, so that a session stays deterministic.
func (in *instance) random() float64 {
	in.safePoint()
	if in.rand == nil {
		var b [8]byte
		if _, err := io.ReadFull(in.opts.Rand, b[:]); err == nil {
			return float64(binary.LittleEndian.Uint64(b[:])>>11) / (1 << 53)
		}
		in.rand = mathrand.NewPCG(0, 0)
	}
	return float64(in.rand.Uint64()>>11) / (1 << 53)
}

// start makes a fresh VM and runs the prelude in it.
func (in *instance) start() error {
	progs, err := compilePrelude()
	if err != nil {
		return err
	}
	vm := goja.New()
	vm.SetMaxCallStackSize(maxCallStackSize)
	// goja's own BigInt(text) refuses, as guards.js's operators do, a result past the session's limit (internal/goja/bigint_text.go).
	vm.SetMaxBigIntBits(int(bigIntBitsFor(in.memLimit)))
	vm.SetTimeSource(in.now)
	vm.SetRandSource(in.random)
	vm.SetPromiseRejectionTracker(in.trackRejection)
	in.vm = vm
	in.loop = newLoop(in.opts.Nanotime)
	in.modules = make(map[string]*moduleRecord)
	in.sink = discardSink{}
	in.start0 = in.opts.Now()
	in.rand = nil
	in.rejections = nil
	in.cellNo = 0
	in.setSize(0, markNow())

	host := vm.NewObject()
	set := func(name string, v any) {
		if err == nil {
			err = host.Set(name, v)
		}
	}
	set("stdout", func(call goja.FunctionCall) goja.Value {
		in.safePoint()
		in.sink.Stdout(call.Argument(0).String())
		return goja.Undefined()
	})
	set("stderr", func(call goja.FunctionCall) goja.Value {
		in.safePoint()
		in.sink.Stderr(call.Argument(0).String())
		return goja.Undefined()
	})
	set("reserve", func(n float64) { in.reserve(int64(n)) })
	set("stringBytes", stringBytes)
	set("countOf", countOf)
	set("joinBytes", joinBytes)
	set("checkpoint", in.safePoint)
	set("display", in.display)
	set("promiseState", in.promiseState)
	set("setTimer", func(call goja.FunctionCall) goja.Value {
		cb, ok := goja.AssertFunction(call.Argument(0))
		if !ok {
			panic(vm.NewTypeError("setTimer: callback is not a function"))
		}
		in.safePoint()
		delay := time.Duration(call.Argument(1).ToFloat() * float64(time.Millisecond))
		return vm.ToValue(in.loop.add(cb, call.Argument(0), delay, call.Argument(2).ToBoolean()))
	})
	set("clearTimer", func(id int64) { in.loop.remove(id) })
	set("refTimer", func(id int64, ref bool) { in.loop.setRef(id, ref) })
	set("hasRefTimer", func(id int64) bool { return in.loop.hasRef(id) })
	set("refreshTimer", func(id int64) { in.loop.refresh(id) })
	set("monotonicNanos", in.monotonicNanos)
	set("call", in.hostCall)
	set("status", func(kind, message string) {
		in.safePoint()
		in.sink.Status(kind, message)
	})
	env := vm.NewObject()
	for k, v := range in.opts.Env {
		if err == nil {
			err = env.Set(k, v)
		}
	}
	set("env", env)
	cwd := in.rootPath
	if cwd == "" {
		cwd = "/"
	}
	set("cwd", cwd)
	set("bigIntBits", bigIntBitLen)
	set("compareBigIntText", compareBigIntText)
	set("maxBigIntBits", bigIntBitsFor(in.memLimit))
	set("compileFunction", in.compileFunction)
	set("evalScript", in.evalScript)
	in.setNodeHost(set)
	set("maxStringLength", min(int64(v8MaxStringLength), in.memLimit/2))
	set("memoryLimitBytes", in.memLimit)
	internal := vm.NewObject()
	if err != nil {
		return fmt.Errorf("js: prelude: %w", err)
	}
	for i, prg := range progs {
		v, err := vm.RunProgram(prg)
		if err != nil {
			return fmt.Errorf("js: prelude %s: %w", preludeFiles[i], err)
		}
		fn, ok := goja.AssertFunction(v)
		if !ok {
			return fmt.Errorf("js: prelude %s is not a function expression", preludeFiles[i])
		}
		if _, err := fn(goja.Undefined(), host, internal); err != nil {
			return fmt.Errorf("js: prelude %s: %w", preludeFiles[i], err)
		}
	}
	fn := func(name string) goja.Callable {
		f, ok := goja.AssertFunction(internal.Get(name))
		if !ok && err == nil {
			err = fmt.Errorf("js: prelude defines no %s", name)
		}
		return f
	}
	in.hooks = hooks{
		inspect:        fn("inspect"),
		formatUncaught: fn("formatUncaught"),
		exitCode:       fn("exitCode"),
		helpers:        fn("helpers"),
		resetGuards:    fn("resetGuards"),
		afterCell:      fn("afterCell"),
		releaseGlobals: fn("releaseGlobals"),
	}
	if c, ok := goja.AssertConstructor(vm.Get("DOMException")); ok {
		in.hooks.domException = c
	} else if err == nil {
		err = errors.New("js: prelude defines no DOMException")
	}
	if err == nil && !in.nodeHooks(internal) {
		err = errors.New("js: prelude defines no builtin")
	}
	if err != nil {
		return err
	}
	if err := in.guardJSONParse(); err != nil {
		return err
	}
	if err := in.guardRegExp(); err != nil {
		return err
	}
	// The cells' own require and import helpers, relative to the root.
	global := vm.GlobalObject()
	// The operator guards and the loops' safe point, under names no binding
	// can shadow (source.go).
	if err == nil {
		err = global.DefineDataProperty(opSafePoint, vm.ToValue(func(goja.FunctionCall) goja.Value {
			in.safePoint()
			return goja.Undefined()
		}), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
	}
	if ops, ok := internal.Get("operators").(*goja.Object); ok {
		for _, name := range []string{opPow, opShl, opSar, opMul, opAdd, opProto, opProtoClass, opAssign, opSpread} {
			if err == nil {
				err = global.DefineDataProperty(name, ops.Get(name), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
			}
		}
	} else if err == nil {
		err = errors.New("js: prelude defines no operators")
	}
	if err == nil {
		err = in.defineFastGuards(global) // compare.go, templates.go
	}
	define := func(name string, v goja.Value) {
		if err == nil {
			err = global.DefineDataProperty(name, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		}
	}
	define("require", in.requireFunc(cwd))
	define("__wasmeval", in.helpersFor(cwd, vm.NewObject()))
	module := vm.NewObject()
	_ = module.Set("exports", vm.NewObject())
	define("module", module)
	define("exports", module.Get("exports"))
	define("__filename", vm.ToValue(path.Join(cwd, "<cell>")))
	define("__dirname", vm.ToValue(cwd))
	return err
}

// guardJSONParse wraps JSON.parse with an estimate of the memory its result
// needs: the parse runs in native code, where no interrupt can stop it.
func (in *instance) guardJSONParse() error {
	jsonObj := in.vm.Intrinsic("JSON")
	parse, ok := goja.AssertFunction(jsonObj.Get("parse"))
	if !ok {
		return errors.New("js: JSON.parse is not a function")
	}
	in.hooks.jsonParse = parse
	guarded := in.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		// Only a long text is worth the scan (and its conversion to Go).
		if js, ok := call.Argument(0).(goja.String); ok && int64(js.Length()) > in.memLimit/1024 {
			s := js.String()
			need, depth := jsonParseEstimate(s)
			if depth > maxJSONParseDepth {
				// goja parses recursively, in Go: a deep nesting would
				// overflow the goroutine's stack and end the process.
				in.throwRange("Maximum call stack size exceeded")
			}
			if need > in.memLimit {
				in.throwRange(fmt.Sprintf("JSON.parse: the %d-byte input would need about %d MiB, more than the memory limit of %d MiB",
					len(s), need>>20, in.memLimit>>20))
			}
			in.reserve(need)
		}
		v, err := parse(call.This, call.Arguments...)
		if err != nil {
			in.rethrow(err)
		}
		return v
	}).(*goja.Object)
	_ = guarded.DefineDataProperty("name", in.vm.ToValue("parse"), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	_ = guarded.DefineDataProperty("length", in.vm.ToValue(2), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	return jsonObj.DefineDataProperty("parse", guarded, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// maxJSONParseDepth is the deepest nesting JSON.parse accepts in a long
// text.
const maxJSONParseDepth = 10000

// jsonParseEstimate returns the heap that goja needs for JSON.parse(s),
// measured: about 600 bytes for each object or array, 24 for each other
// value, and the text of its strings; and the deepest nesting in s.
func jsonParseEstimate(s string) (need int64, depth int) {
	var containers, values int64
	nesting := 0
	inString := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			containers++
			nesting++
			depth = max(depth, nesting)
		case ']', '}':
			nesting--
		case ',', ':':
			values++
		}
	}
	return containers*600 + values*24 + int64(len(s)), depth
}

func (in *instance) display(call goja.FunctionCall) goja.Value {
	in.safePoint()
	obj, ok := call.Argument(0).(*goja.Object)
	if !ok {
		return goja.Undefined()
	}
	b := runtimes.Bundle{}
	for _, k := range obj.Keys() {
		b[k] = obj.Get(k).String()
	}
	in.sink.Display(b, false)
	return goja.Undefined()
}

// promiseState returns [state, result] for a promise and undefined for
// anything else.
func (in *instance) promiseState(v goja.Value) goja.Value {
	obj, ok := v.(*goja.Object)
	// Export converts a plain object deeply (and calls its getters): only a
	// promise is worth it.
	if !ok || obj.ExportType() != promiseType {
		return goja.Undefined()
	}
	p, ok := obj.Export().(*goja.Promise)
	if !ok {
		return goja.Undefined()
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
		return in.vm.NewArray("fulfilled", p.Result())
	case goja.PromiseStateRejected:
		return in.vm.NewArray("rejected", p.Result())
	}
	return in.vm.NewArray("pending")
}

func (in *instance) trackRejection(p *goja.Promise, op goja.PromiseRejectionOperation) {
	switch op {
	case goja.PromiseRejectionReject:
		in.rejections = append(in.rejections, p)
	case goja.PromiseRejectionHandle:
		for i, q := range in.rejections {
			if q == p {
				in.rejections = append(in.rejections[:i], in.rejections[i+1:]...)
				break
			}
		}
	}
}

// Reset discards the VM and starts a fresh one with the prelude. Modules
// are loaded again from their files.
func (in *instance) Reset(ctx context.Context) error {
	if in.vm == nil {
		return errors.New("js: instance closed")
	}
	in.loop.clear()
	return in.start()
}

// Close frees the VM and the root.
func (in *instance) Close(ctx context.Context) error {
	if in.loop != nil {
		in.loop.clear()
	}
	in.vm = nil
	in.modules = nil
	in.closeNode()
	in.setSize(0, heapMark{})
	if in.root != nil {
		err := in.root.Close()
		in.root = nil
		if err != nil && !errors.Is(err, fs.ErrClosed) {
			return fmt.Errorf("js: close root: %w", err)
		}
	}
	return nil
}

// Run runs one cell; see the package documentation.
func (in *instance) Run(ctx context.Context, code string, sink runtimes.Sink) (runtimes.Outcome, error) {
	if in.vm == nil {
		return runtimes.Outcome{}, errors.New("js: instance closed")
	}
	if sink == nil {
		sink = discardSink{}
	}
	in.sink = sink
	defer func() { in.sink = discardSink{} }()
	start := time.Now()
	if ctx.Err() != nil {
		sink.Stderr(interruptMessage(ctx, start) + "\n")
		return runtimes.Outcome{Failed: true, Interrupted: true}, nil
	}
	cell, cerr := in.compileRun(ctx, code)
	if cerr != nil {
		sink.Stderr(cerr.render())
		return runtimes.Outcome{Failed: true}, nil
	}
	in.vmMu.Lock()
	defer in.vmMu.Unlock()
	in.bound.cellStarted()
	defer in.bound.cellEnded()
	in.reentry.begin()
	defer in.reentry.end()
	in.calls = newHostCalls(ctx)
	defer func() { in.calls.close(); in.calls = nil }()
	globals := globalCount(in.vm)
	startSize := in.size
	c := &cellRun{in: in, ctx: ctx, start: start}
	out := c.runGuarded(cell)
	defer c.guard.settled()
	// Nothing of a cell outlives it: not its timers (unref()ed ones
	// included), not a rejection it left unhandled.
	in.loop.clear()
	in.rejections = in.rejections[:0]
	if c.uncatchable {
		if !in.vmRunsJobs() {
			if err := resetVM(in.vm); err != nil || !in.vmRunsJobs() {
				// Last resort: a VM that cannot run promise jobs is of no use.
				sink.Stderr("The JavaScript session was restarted: the interrupted code left the VM unusable, and its state is lost.\n")
				if err := in.start(); err != nil {
					return out, err
				}
				return out, nil
			}
		}
		// The interrupt skipped the prelude's finally blocks.
		if _, err := in.hooks.resetGuards(goja.Undefined()); err != nil {
			return out, fmt.Errorf("js: reset guards: %w", err)
		}
	}
	if _, err := in.hooks.afterCell(goja.Undefined()); err != nil {
		return out, fmt.Errorf("js: after the cell: %w", err)
	}
	// A session over its limit after the cell: the cell fails, and what it
	// made global is let go. A cell stopped for its memory is not measured
	// here: releaseGlobals measures the session once the cell's garbage is
	// collected, and a walk now would cost a second one of all it grew.
	var over *memoryLimitError
	if !c.memoryFailed {
		over = in.checkSize(max(in.memLimit, startSize))
	}
	if over != nil || c.memoryFailed {
		if over != nil && !c.memoryFailed {
			sink.Stderr("Uncaught RangeError: " + over.Error() + "\n")
			out = runtimes.Outcome{Failed: true}
		}
		if err := in.releaseGlobals(globals, sink); err != nil {
			return out, err
		}
	}
	in.settleUnsure()
	return out, nil
}

// checkSize measures the session at the end of a cell, when what it may
// have grown by since its last walk (sizebound.go: the bytes allocated
// while its cells ran) could take it over its limit, or put the memory
// monitor's account of it far off, and reports whether it is over. The
// live heap's growth, which it went by before, is no bound: a collection
// in the middle of the cell hid what the cell kept when others let go of
// more; and a walk costs milliseconds even for a small VM.
func (in *instance) checkSize(limit int64) *memoryLimitError {
	if g := in.bound.grown(); g <= max(minWalkGrowth, in.memLimit/8) && in.bound.base+g <= limit {
		return nil
	}
	now := markNow()
	size := in.measureBetweenCells()
	in.setSize(size, now)
	if size > limit {
		return &memoryLimitError{limit: in.memLimit, size: size}
	}
	return nil
}

// setSize records a measurement of the session between cells.
func (in *instance) setSize(size int64, mark heapMark) {
	in.measured(size-in.size, in.sizeMark, mark)
	in.size, in.sizeMark, in.sizeAt = size, mark, time.Now()
	in.bound.walked(size)
}

// measured tells the monitor that the session changed by delta between
// its measurements at prev and now, and keeps what it left out.
func (in *instance) measured(delta int64, prev, now heapMark) {
	crossed, cycles := monitor.measured(delta, prev, now)
	if !crossed || delta <= 0 {
		return
	}
	if cycles != in.unsureCycle {
		in.unsure, in.unsureCycle = 0, cycles
	}
	in.unsure += delta
}

// settleUnsure runs after a cell. Growth measured across a collection is
// in the session's size, but the live heap, as of the last collection,
// lacks whatever part of it came after that collection ended, and how
// much that is cannot be known (heapMonitor.measured leaves it out). The
// next cell's live-heap baseline misses it too, and once another
// collection ends during that cell the memory monitor counts it as the
// cell's growth on top of the size that already holds it: a cell of a
// session near its limit was stopped for a size it never had
// (TestGrowthAcrossACollectionNotCountedTwice). So when counting all of
// it twice would bring the session within a quarter of its limit, and no
// collection has ended since, collect now, between cells, after the cell
// that grew: the live heap then holds the session as measured. Farther
// from the limit a cell would have to grow by a quarter of the limit
// itself to be misjudged, and a collection forced after every big cell
// would cost a server of many sessions a walk of all their heaps each
// time. (Other sessions' unsure growth can still count against a cell;
// the monitor does not track it per cell.)
func (in *instance) settleUnsure() {
	if in.unsure <= 0 {
		return
	}
	if _, _, cycles := heapState(); cycles != in.unsureCycle {
		in.unsure = 0 // a collection ended since: the live heap holds it all
		return
	}
	// Kept from cell to cell until then: a later cell's growth can bring
	// the session near its limit.
	if in.memLimit > 0 && in.size+in.unsure > in.memLimit-in.memLimit/4 {
		runtime.GC()
		in.sizeMark = markNow()
		in.unsure = 0
	}
}

// globalNames returns the global object's property names in the order
// they were made, from goja's unexported list (reading it runs no
// JavaScript, unlike Keys, and costs nothing). nil if goja's layout changed.
func globalNames(vm *goja.Runtime) (names []string) {
	defer func() {
		if recover() != nil {
			names = nil
		}
	}()
	self := reflect.ValueOf(vm.GlobalObject()).Elem().FieldByName("self").Elem().Elem()
	base := self.FieldByName("baseObject")
	if !base.IsValid() {
		base = self
	}
	list := base.FieldByName("propNames")
	for i := range list.Len() {
		names = append(names, list.Index(i).String())
	}
	return names
}

// globalCount is how many properties the global object has had made.
func globalCount(vm *goja.Runtime) int {
	defer func() { _ = recover() }()
	self := reflect.ValueOf(vm.GlobalObject()).Elem().FieldByName("self").Elem().Elem()
	base := self.FieldByName("baseObject")
	if !base.IsValid() {
		base = self
	}
	return base.FieldByName("propNames").Len()
}

// releaseGlobals lets go of the global bindings made after the first
// before (a cell that deleted older globals may keep a few of its own), and
// says what the session holds now.
func (in *instance) releaseGlobals(before int, sink runtimes.Sink) error {
	var fresh []string
	if names := globalNames(in.vm); before < len(names) {
		fresh = names[before:]
	}
	var b strings.Builder
	if len(fresh) > 0 {
		names := make([]any, len(fresh))
		for i, k := range fresh {
			names[i] = k
		}
		if _, err := in.hooks.releaseGlobals(goja.Undefined(), in.vm.NewArray(names...)); err != nil {
			return fmt.Errorf("js: release globals: %w", err)
		}
		shown := fresh[:min(len(fresh), 8)]
		fmt.Fprintf(&b, "The cell's new globals were released: %s", strings.Join(shown, ", "))
		if len(fresh) > len(shown) {
			fmt.Fprintf(&b, " and %d more", len(fresh)-len(shown))
		}
		b.WriteString(". ")
	}
	// Collect what was let go before saying what is left: until then the
	// memory monitor would count it against other sessions.
	runtime.GC()
	mark := markNow()
	size := in.measureBetweenCells()
	in.setSize(size, mark)
	if size > releaseAbove(in.memLimit) {
		var err error
		if size, err = in.releaseGrown(before, size, &b); err != nil {
			return err
		}
	}
	if size > in.memLimit {
		fmt.Fprintf(&b, "The session still holds %d MiB, more than its limit of %d MiB: free some (set large values to null) or reset the session; until then a cell may not make it grow.\n",
			size>>20, in.memLimit>>20)
	} else {
		fmt.Fprintf(&b, "The session now holds %d MiB of its limit of %d MiB.\n", size>>20, in.memLimit>>20)
	}
	sink.Stderr(b.String())
	return nil
}

// interruptMessage names the stop in the cell's own output; the sandbox
// adds why (timed out after N seconds, cancelled), as for Python's
// KeyboardInterrupt.
func interruptMessage(ctx context.Context, start time.Time) string {
	return "Interrupted: the cell was stopped"
}

// cellRun is one run of a cell.
type cellRun struct {
	in    *instance
	ctx   context.Context
	guard *guard
	start time.Time
	main  *goja.Promise // the async cell's promise
	shown bool          // the result was displayed (or there is none)
	// uncatchable is set when an interrupt or a stack overflow stopped the
	// cell (see vmfix.go).
	uncatchable bool
	// memoryFailed is set when the cell was stopped for its session's
	// memory.
	memoryFailed bool
	// wakes keeps the order of a wall-clock loop's wakes (order.go);
	// wantCall is the call a replayed wake expects.
	wakes    *WakeOrder
	wantCall int
	// taken is the recorded wake replayedWake took last, and kept says
	// it is taken again at the next wait: an eval nested in the cell
	// woke that wait instead (order.go's keepWake).
	taken Wake
	kept  bool
	// waits counts the loop's waits (record.go's waiting).
	waits int
}

// runGuarded runs the cell under its guard, which it always stops, so that
// nothing interrupts the VM after the cell. A Go panic out of goja or the
// sink fails the cell instead of ending the host, and the VM is checked as
// after an interrupt.
func (c *cellRun) runGuarded(cell *compiledCell) (out runtimes.Outcome) {
	// The cell's JavaScript runs on this goroutine, locked to its thread so
	// that the memory monitor can tell the thread's page faults (memory.go).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c.guard = c.in.startGuard(c.ctx)
	defer c.guard.stop()
	defer func() {
		if p := recover(); p != nil {
			// The panic's text stays on the host: it may name host details.
			fmt.Fprintf(os.Stderr, "js: a cell panicked: %v\n%s", p, debug.Stack())
			c.uncatchable = true
			out = runtimes.Outcome{Failed: true}
			c.in.sink.Stderr("Internal error: the JavaScript runtime failed and the cell was stopped; the session is kept\n")
		}
	}()
	return c.run(cell)
}

func (c *cellRun) run(cell *compiledCell) runtimes.Outcome {
	in := c.in
	in.rejections = in.rejections[:0]
	c.wakes = wakeOrderOf(c.ctx) // order.go
	val, err := in.vm.RunProgram(cell.prg)
	if err == nil && cell.async {
		fn, _ := goja.AssertFunction(val)
		val, err = fn(in.vm.GlobalObject())
		if err == nil {
			c.main, _ = val.Export().(*goja.Promise)
		}
	}
	if err != nil {
		return c.fail(err)
	}
	if c.main == nil {
		if out, done := c.showResult(val); done {
			return out
		}
	}
	var wait *time.Timer
	defer func() {
		if wait != nil {
			wait.Stop()
		}
	}()
	for {
		if out, done := c.settle(); done {
			return out
		}
		if in.loop.refs == 0 && in.calls.pending == 0 {
			if !c.shown {
				in.sink.Stderr("Error: the cell's top-level await never settles: no timer or other work is left that could settle it\n")
				return runtimes.Outcome{Failed: true}
			}
			return runtimes.Outcome{}
		}
		// Fire the first timer if it is due; else wait for it or a host
		// call. Only ref'd timers keep the cell alive, but an unref'd one
		// fires while calls are pending. On the session's clock (loop.go)
		// a host call takes no time, and a wait may be virtual.
		t := in.loop.next()
		var now int64
		if t != nil {
			if now = in.loop.now(); t.due <= now {
				t = in.loop.pop(now)
				if _, err := t.callback(goja.Undefined()); err != nil {
					return c.fail(err)
				}
				continue
			}
		}
		{
			var timerC <-chan time.Time
			replayed := 0 // what the record says woke the loop here (order.go)
			switch {
			case c.wakes != nil && c.wakes.Next != nil:
				if replayed = c.replayedWake(t); replayed == 0 {
					return runtimes.Outcome{Failed: true}
				}
			case t == nil:
			case c.wakes == nil && in.opts.Nanotime != nil && in.calls.pending > 0:
				// The timers wait for the calls in flight (on the wall
				// clock, under c.wakes, they do not).
			case c.wakes == nil && in.opts.Nanotime != nil && in.opts.Sleep != nil && c.ctx.Err() == nil && in.opts.Sleep(t.due-now):
				continue // the session's clock moved on by the wait
			default:
				if wait == nil {
					wait = time.NewTimer(time.Duration(t.due - now))
				} else {
					wait.Reset(time.Duration(t.due - now))
				}
				timerC = wait.C
			}
			c.waits++
			in.calls.waiting(c.waits) // record.go: an eval nested in the cell may enter
			// The memory monitor may measure the VM while it waits.
			c.guard.unlockThread()
			in.vmMu.Unlock()
			var nested *nestedRun
			var d callDone
			woken := 0
			if replayed == 1 {
				if c.ctx.Err() == nil {
					woken = 1 // the record says a timer fired here
				}
			} else {
				// A replayed answer held for its turn, taken as if it came now.
				d, woken = in.calls.heldTurn(c.ctx, c.waits) // record.go
			}
			if woken == 0 && replayed != 1 {
			wait:
				select {
				case <-c.guard.stopped:
				case <-c.ctx.Done():
				case <-timerC:
					woken = 1
				case d = <-in.calls.done:
					woken = 2
					if !in.calls.inTurn(c.ctx, &d, c.waits) { // record.go
						woken = 0
						goto wait // a replayed answer before its turn: held
					}
				case <-in.calls.ranked(): // record.go: a held answer's turn may have come
					if d, woken = in.calls.heldTurn(c.ctx, c.waits); woken == 0 {
						goto wait
					}
				case nested = <-in.reentry.ch:
					woken = 3
					if replayed != 0 {
						c.keepWake() // order.go: not a wake the record holds
					}
				}
			}
			in.vmMu.Lock()
			c.guard.lockThread()
			in.calls.left()
			if woken == 2 && c.ctx.Err() != nil {
				woken = 0 // stopped meanwhile: the stop comes first
			}
			switch woken {
			case 0:
				c.uncatchable = true // the interrupt flag is set
				if ml, ok := c.guard.firedFor().(*memoryLimitError); ok {
					c.memoryFailed = true
					in.sink.Stderr("Uncaught RangeError: " + ml.Error() + "\n")
					return runtimes.Outcome{Failed: true}
				}
				in.sink.Stderr(interruptMessage(c.ctx, c.start) + "\n")
				return runtimes.Outcome{Failed: true, Interrupted: true}
			case 1:
				c.firedTimer(t) // order.go
			case 2:
				if c.wakes != nil && !c.tookCall(d) { // order.go
					return runtimes.Outcome{Failed: true}
				}
				in.calls.pending--
				if err := d.resolve(d.resp); err != nil {
					return c.fail(err)
				}
				if wait != nil {
					wait.Stop()
				}
				continue
			case 3:
				// An eval of the session while this cell waits: it runs
				// here, between this cell's jobs, in this wait.
				entered(nested, c.waits) // record.go
				c.runNested(nested)
				continue
			}
		}
		// Woken by the timer: the next turn reads the clock and fires it.
	}
}

// settle checks, after a turn of the loop, for a settled cell promise and
// for rejections nobody handled.
func (c *cellRun) settle() (runtimes.Outcome, bool) {
	in := c.in
	if c.main != nil && !c.shown {
		switch c.main.State() {
		case goja.PromiseStateFulfilled:
			v := c.main.Result()
			// Only the cell's own wrapper is unwrapped; what the cell
			// returned itself (a Proxy, say) is shown as it is.
			if obj, ok := v.(*goja.Object); ok && className(obj) == "Object" {
				var inner goja.Value
				err := in.safely(func() {
					if keys := obj.Keys(); len(keys) == 1 && keys[0] == resultKey {
						inner = obj.Get(resultKey)
					}
				})
				if err != nil {
					return c.fail(err), true
				}
				if inner != nil {
					v = inner
				}
			}
			if out, done := c.showResult(v); done {
				return out, true
			}
		case goja.PromiseStateRejected:
			return c.uncaught(c.main.Result(), nil), true
		}
	}
	for _, p := range in.rejections {
		if p != c.main {
			return c.uncaught(p.Result(), nil), true
		}
	}
	return runtimes.Outcome{}, false
}

// showResult displays the cell's result, unless it is undefined.
func (c *cellRun) showResult(v goja.Value) (runtimes.Outcome, bool) {
	c.shown = true
	if v == nil || goja.IsUndefined(v) {
		return runtimes.Outcome{}, false
	}
	s, err := c.in.hooks.inspect(goja.Undefined(), v)
	if err != nil {
		return c.fail(err), true
	}
	c.in.sink.Display(runtimes.Bundle{"text/plain": s.String()}, true)
	return runtimes.Outcome{}, false
}

// fail reports an error that ended the cell.
func (c *cellRun) fail(err error) runtimes.Outcome {
	in := c.in
	ex, ie, so := gojaError(err)
	switch {
	case ie != nil:
		c.uncatchable = true
		if ml, ok := ie.Value().(*memoryLimitError); ok {
			c.memoryFailed = true
			in.sink.Stderr("Uncaught RangeError: " + ml.Error() + "\n" + formatFrames(ie.Stack()))
			return runtimes.Outcome{Failed: true}
		}
		in.sink.Stderr(interruptMessage(c.ctx, c.start) + "\n" + formatFrames(ie.Stack()))
		return runtimes.Outcome{Failed: true, Interrupted: true}
	case so != nil:
		c.uncatchable = true
		in.sink.Stderr("Uncaught RangeError: Maximum call stack size exceeded\n" + formatFrames(so.Stack()))
		return runtimes.Outcome{Failed: true}
	case ex != nil:
		return c.uncaught(ex.Value(), ex.Stack())
	}
	in.sink.Stderr("Uncaught " + err.Error() + "\n")
	return runtimes.Outcome{Failed: true}
}

// uncaught reports a thrown value or rejection reason. frames are where it
// was thrown, shown for values that carry no stack of their own.
func (c *cellRun) uncaught(v goja.Value, frames []goja.StackFrame) runtimes.Outcome {
	in := c.in
	code, err := in.hooks.exitCode(goja.Undefined(), v)
	if err != nil && isUncatchable(err) {
		return c.fail(err)
	}
	if err == nil && !goja.IsUndefined(code) {
		if code.ToInteger() == 0 {
			return runtimes.Outcome{}
		}
		in.sink.Stderr(fmt.Sprintf("process.exit(%d) called\n", code.ToInteger()))
		return runtimes.Outcome{Failed: true}
	}
	s, err := in.hooks.formatUncaught(goja.Undefined(), v)
	if err != nil {
		if isUncatchable(err) {
			return c.fail(err)
		}
		// The value defeats inspection (a Proxy whose traps throw, a
		// getter that throws): say what it is without calling it again.
		in.sink.Stderr("Uncaught " + describeValue(v) + "\n" + formatFrames(frames))
		return runtimes.Outcome{Failed: true}
	}
	text := s.String()
	if !strings.Contains(text, "\n    at ") {
		text = strings.TrimSuffix(text, "\n") + "\n" + formatFrames(frames)
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	in.sink.Stderr(text)
	return runtimes.Outcome{Failed: true}
}

// isUncatchable reports whether err is an interrupt or a stack overflow,
// which JavaScript cannot catch.
func isUncatchable(err error) bool {
	_, ie, so := gojaError(err)
	return ie != nil || so != nil
}

// gojaError finds goja's error in err's chain. It never calls a
// *goja.Exception's Unwrap or Error, as errors.As and errors.Is would: both
// run JavaScript on the thrown value (instanceof, a getter, a Proxy trap,
// toString), outside any try, where what that code throws would be a Go
// panic.
func gojaError(err error) (ex *goja.Exception, ie *goja.InterruptedError, so *goja.StackOverflowError) {
	for err != nil {
		switch e := err.(type) {
		case *goja.Exception:
			return e, nil, nil
		case *goja.InterruptedError:
			return nil, e, nil
		case *goja.StackOverflowError:
			return nil, nil, e
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return nil, nil, nil
		}
		err = u.Unwrap()
	}
	return nil, nil, nil
}

// describeValue names a value without running any of its code: no
// toString, getter or Proxy trap.
func describeValue(v goja.Value) string {
	obj, ok := v.(*goja.Object)
	if !ok {
		if v == nil {
			return "undefined"
		}
		return v.String() // a primitive converts without calling anything
	}
	return "[" + className(obj) + " that cannot be inspected]"
}

var (
	proxyType   = reflect.TypeOf(goja.Proxy{})
	promiseType = reflect.TypeOf((*goja.Promise)(nil))
)

// className returns obj's class without running JavaScript, and "Proxy"
// for a proxy (whose class would ask its target, or throw once revoked).
func className(obj *goja.Object) string {
	if obj.ExportType() == proxyType {
		return "Proxy"
	}
	return obj.ClassName()
}

// safely runs f, which touches JavaScript values from Go (a conversion or a
// property read can call a getter, a Proxy trap or toString), the way a
// host function called by JavaScript runs: what it throws, an interrupt and
// a stack overflow come back as err instead of a panic.
func (in *instance) safely(f func()) error {
	fn, _ := goja.AssertFunction(in.vm.ToValue(func(goja.FunctionCall) goja.Value {
		f()
		return goja.Undefined()
	}))
	_, err := fn(goja.Undefined())
	return err
}

// formatFrames formats stack frames as Node does, without the prelude's and
// at most stackTraceLimit of them.
func formatFrames(frames []goja.StackFrame) string {
	var b strings.Builder
	n := 0
	for _, f := range frames {
		if n == stackTraceLimit {
			break
		}
		src := f.SrcName()
		name := f.FuncName()
		if strings.HasPrefix(src, preludeName) || (src == "<native>" && strings.HasPrefix(name, "github.com/wasmeval/")) {
			continue
		}
		b.WriteString("    at ")
		if src == "<native>" {
			fmt.Fprintf(&b, "%s (native)\n", name)
		} else {
			p := f.Position()
			if name != "<anonymous>" && name != "" {
				fmt.Fprintf(&b, "%s (%s:%d:%d)\n", name, p.Filename, p.Line, p.Column)
			} else {
				fmt.Fprintf(&b, "%s:%d:%d\n", p.Filename, p.Line, p.Column)
			}
		}
		n++
	}
	return b.String()
}

// setOwn gives a host-made error obj an own data property, as Node's
// errors have: [[Set]] would call a setter a cell put on Error.prototype.
func setOwn(obj *goja.Object, name string, v goja.Value) {
	_ = obj.DefineDataProperty(name, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
}
