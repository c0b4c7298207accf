//go:build cgo

package wasm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unsafe"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"
	"golang.org/x/sys/unix"
)

// The wasmtime engine runs the guest's code compiled by Cranelift; what the
// guest reaches of the host is the same Go code as on wazero:
//
//   - the host module's functions (HostFunc) are called with a stack of
//     uint64 as wazero calls them;
//   - WASI preview1 is wazero's own implementation, run in a "shadow"
//     module: a tiny wazero module that imports wazero's
//     wasi_snapshot_preview1 (InstantiateWASI, so the disk quota's ENOSPC
//     and the fd cap's EMFILE too) and exports a trampoline for each WASI
//     function the guest imports. Its linear memory is the wasmtime
//     instance's memory (a wazero memory allocator that hands wazero the
//     very same bytes), and its WASI context is the ModuleConfig the
//     runtime gives (GuestFS mounted at "/", clocks, random, sleep,
//     stdio). So the guest filesystem's guarantees (symlinks, "..", the
//     read-only stdlib, quotas) are those of the one GuestFS on both
//     engines, by construction. wasmtime's own WASI (cap-std preopens)
//     cannot show a session root at its host path next to in-memory files
//     under one "/" mount, which the template snapshot's preopen table
//     needs.
//
// A snapshot's image is mapped copy-on-write (MAP_FIXED, MAP_PRIVATE) over
// the first pages of the wasmtime memory, which wasmtime reserves whole up
// front (a static memory: it never moves), so sessions share the
// template's pages and MemoryHandle's dirty page tracking works unchanged.

// DefaultEngine is wasmtime where it is compiled in: faster than wazero on
// what users feel (cells, fib and loops, process start, session start and
// fork) by the figures of README.md, "Engines".
const DefaultEngine = EngineWasmtime

// wasmtimeStack is the native stack wasm code may use (wasmtime's default
// is 512 KiB). CPython's own C stack is in linear memory; this bounds the
// native frames of deep C recursion, which traps (a crash the host rolls
// back) instead of overflowing the thread's stack.
const wasmtimeStack = 4 << 20

// wasiModule is the module name of WASI preview1 imports.
const wasiModule = "wasi_snapshot_preview1"

type wasmtimeCompiled struct {
	engine *wasmtime.Engine
	module *wasmtime.Module
	linker *wasmtime.Linker

	shadowRT wazero.Runtime
	shadow   wazero.CompiledModule
	wasi     []string // the WASI functions the guest imports, by trampoline index
}

func compileWasmtime(ctx context.Context, cfg Config, bin []byte, hostName string, host []HostFunc) (Compiled, error) {
	settings := wasmtimeEngineSettings // every engine setting goes in it: the cache names its files by them
	engine := wasmtime.NewEngineWithConfig(settings.config())
	module, err := wasmtimeModule(engine, settings, cfg, bin)
	if err != nil {
		return nil, fmt.Errorf("wasm: wasmtime: %w", err)
	}
	c := &wasmtimeCompiled{engine: engine, module: module, linker: wasmtime.NewLinker(engine)}
	ok := false
	defer func() {
		if !ok {
			c.Close(ctx)
		}
	}()
	byName := map[string]HostFunc{}
	for _, f := range host {
		byName[f.Name] = f
	}
	var wat strings.Builder
	wat.WriteString("(module\n")
	var trampolines strings.Builder
	defined := map[string]bool{}
	for _, imp := range module.Imports() {
		name, from := "", imp.Module()
		if n := imp.Name(); n != nil {
			name = *n
		}
		ft := imp.Type().FuncType()
		if ft == nil {
			return nil, fmt.Errorf("wasm: wasmtime: import %s.%s is not a function", from, name)
		}
		if defined[from+"\x00"+name] {
			continue // imported twice
		}
		defined[from+"\x00"+name] = true
		switch from {
		case hostName:
			f, found := byName[name]
			if !found {
				return nil, fmt.Errorf("wasm: wasmtime: the module imports %s.%s, which the host does not define", hostName, name)
			}
			fn := f.Fn
			h := rawHost{nres: len(f.Results), fn: func(m *wtModule, ctx context.Context, stack []uint64) { fn(ctx, m.shadow, stack) }}
			if err := defineRaw(c.linker, hostName, name, wasmtimeFuncType(f.Params, f.Results), h); err != nil {
				return nil, fmt.Errorf("wasm: wasmtime: %w", err)
			}
		case wasiModule:
			i := len(c.wasi)
			c.wasi = append(c.wasi, name)
			sig := watSignature(ft)
			fmt.Fprintf(&wat, "  (import %q %q (func $i%d %s))\n", wasiModule, name, i, sig)
			fmt.Fprintf(&trampolines, "  (func (export %q) %s", name, sig)
			for j := range ft.Params() {
				fmt.Fprintf(&trampolines, " local.get %d", j)
			}
			fmt.Fprintf(&trampolines, " call $i%d)\n", i)
			h := rawHost{nres: len(ft.Results()), fn: func(m *wtModule, ctx context.Context, stack []uint64) {
				if err := m.wasi[i].CallWithStack(ctx, stack); err != nil {
					panic(err) // host turns it into the guest's stop
				}
			}}
			if err := defineRaw(c.linker, wasiModule, name, ft, h); err != nil {
				return nil, fmt.Errorf("wasm: wasmtime: %w", err)
			}
		default:
			return nil, fmt.Errorf("wasm: wasmtime: import %s.%s: the host defines only %s and %s", from, name, hostName, wasiModule)
		}
	}
	wat.WriteString("  (memory (export \"memory\") 0 65536)\n")
	wat.WriteString(trampolines.String())
	wat.WriteString(")\n")
	shadowBin, err := wasmtime.Wat2Wasm(wat.String())
	if err != nil {
		return nil, fmt.Errorf("wasm: wasmtime: shadow module: %w", err)
	}
	c.shadowRT = wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	if err := InstantiateWASI(ctx, c.shadowRT); err != nil {
		return nil, fmt.Errorf("wasm: wasmtime: %w", err)
	}
	if c.shadow, err = c.shadowRT.CompileModule(ctx, shadowBin); err != nil {
		return nil, fmt.Errorf("wasm: wasmtime: shadow module: %w", err)
	}
	ok = true
	return c, nil
}

// wasmtimeModule compiles bin with engine, made with settings, or loads it
// from the cache: native code, so a cached file is used only with a valid
// MAC under the cache key (see CacheKey), and one wasmtime refuses (another
// version) is compiled again.
func wasmtimeModule(engine *wasmtime.Engine, settings wasmtimeSettings, cfg Config, bin []byte) (*wasmtime.Module, error) {
	var key *CacheKey
	var path, label string
	if cfg.CacheDir != "" {
		keyFile := cfg.KeyFile
		if keyFile == "" {
			keyFile = DefaultKeyFile(cfg.CacheDir)
		}
		if k, err := LoadCacheKey(keyFile); err == nil {
			key = k
			name := settings.cacheName(moduleDigest(cfg, bin))
			path, label = filepath.Join(cfg.CacheDir, "wasmtime", name), "wasmtime/"+name
			if m, err := loadCwasm(engine, key, path, label); err == nil {
				touchInUse(path) // in use: not pruned
				return m, nil
			} else if data, err := key.ReadFile(path, label); err == nil {
				// No memory file or no /proc (loadCwasm's way): read it.
				if m, err := wasmtime.NewModuleDeserialize(engine, data); err == nil {
					touchInUse(path)
					return m, nil
				}
			}
		}
	}
	m, err := wasmtime.NewModule(engine, bin)
	if err != nil {
		return nil, err
	}
	if key != nil {
		if data, err := m.Serialize(); err == nil {
			if os.MkdirAll(filepath.Dir(path), 0o700) == nil {
				_ = key.SaveFile(path, label, data) // a cache that cannot be written costs time only
				pruneWasmtimeCache(filepath.Dir(path))
			}
		}
	}
	return m, nil
}

// pruneWasmtimeCache removes the compiled modules of dir that no process
// has loaded for cacheMaxAge (each is about 20 MiB; a new artifact or
// wasmtime makes another).
func pruneWasmtimeCache(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.cwasm"))
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && time.Since(st.ModTime()) > cacheMaxAge {
			os.Remove(f)
			os.Remove(f + stampSuffix)
		}
	}
}

func (c *wasmtimeCompiled) Engine() string { return EngineWasmtime }

// YieldEvery is well under sysmon's 10 ms (forcePreemptNS in Go's
// runtime/proc.go); see Compiled.YieldEvery.
func (c *wasmtimeCompiled) YieldEvery() time.Duration { return 4 * time.Millisecond }

func (c *wasmtimeCompiled) Close(ctx context.Context) error {
	if c.shadowRT != nil {
		c.shadowRT.Close(ctx)
	}
	if c.linker != nil {
		c.linker.Close()
	}
	if c.module != nil {
		c.module.Close()
	}
	if c.engine != nil {
		c.engine.Close()
	}
	return nil
}

func (c *wasmtimeCompiled) Instantiate(ctx context.Context, cfg wazero.ModuleConfig, mo MemoryOptions) (Module, error) {
	m := &wtModule{c: c}
	m.store = wasmtime.NewStore(c.engine)
	m.register()
	limit := mo.Limit
	if limit == 0 || limit > 1<<32 {
		limit = 1 << 32
	}
	m.limit = limit
	m.store.Limiter(int64(limit), -1, -1, -1, -1)
	ok := false
	defer func() {
		if !ok {
			m.Close(ctx)
		}
	}()
	inst, err := c.linker.Instantiate(m.store, c.module)
	if err != nil {
		return nil, err
	}
	m.inst = inst
	ex := inst.GetExport(m.store, "memory")
	if ex == nil || ex.Memory() == nil {
		return nil, errors.New("wasm: wasmtime: the module exports no memory")
	}
	m.mem = ex.Memory()
	if im := mo.Image; im != nil && im.size > 0 {
		pages := (im.size + 65535) / 65536
		if cur := m.mem.Size(m.store); cur < pages {
			if _, err := m.mem.Grow(m.store, pages-cur); err != nil {
				return nil, fmt.Errorf("wasm: wasmtime: grow memory to the image's %d bytes: %w", im.size, err)
			}
		}
		m.base = m.mem.Data(m.store)
		n := uintptr((im.size + pageSize - 1) / pageSize * pageSize)
		if _, err := unix.MmapPtr(int(im.f.Fd()), 0, m.base, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_FIXED); err != nil {
			return nil, fmt.Errorf("wasm: wasmtime: map the image: %w", err)
		}
	}
	m.base = m.mem.Data(m.store)
	if mo.Handle != nil {
		mo.Handle.m = &mmapMemory{opts: mo, limit: limit, buf: unsafe.Slice((*byte)(m.base), limit)}
	}
	actx := experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(
		func(capacity, max uint64) experimental.LinearMemory { return wtLinear{m} }))
	shadow, err := c.shadowRT.InstantiateModule(actx, c.shadow, cfg)
	if err != nil {
		return nil, err
	}
	m.shadow = shadow
	m.wasi = make([]api.Function, len(c.wasi))
	for i, name := range c.wasi {
		m.wasi[i] = shadow.ExportedFunction(name)
	}
	m.syncMemory()
	ok = true
	return m, nil
}

// wtModule is a wasmtime instance (one store each) and its shadow module.
type wtModule struct {
	c      *wasmtimeCompiled
	store  *wasmtime.Store
	inst   *wasmtime.Instance
	mem    *wasmtime.Memory
	base   unsafe.Pointer // the memory's start: fixed (a static memory)
	limit  uint64
	shadow api.Module
	wasi   []api.Function // the shadow's trampolines
	synced uint64         // bytes of memory the shadow's view holds

	storeKey uintptr        // the store's data, which host calls find the module by
	sctx     unsafe.Pointer // the store's context (cur)
	scr      *wtScratch     // wasmtime_raw.go

	ctxs    []context.Context // contexts of the Calls running, innermost last
	callers []unsafe.Pointer  // contexts of the host functions running, innermost last
	pending error             // why a host function stopped the guest
	exit    *sys.ExitError    // the guest exited (proc_exit)
}

// syncMemory brings the shadow's view of the memory to the wasmtime
// memory's size (the guest grows it without telling the host).
func (m *wtModule) syncMemory() {
	if m.store == nil {
		return
	}
	size := m.dataSize()
	if size <= m.synced {
		return
	}
	mem := m.shadow.Memory()
	if cur := uint64(mem.Size()); size > cur {
		mem.Grow(uint32((size - cur) / 65536))
	}
	m.synced = uint64(mem.Size())
}

func (m *wtModule) Memory() api.Memory {
	m.syncMemory()
	return m.shadow.Memory()
}

func (m *wtModule) ExportedFunction(name string) Function {
	if m.store == nil {
		return nil
	}
	f := m.inst.GetFunc(m.store, name)
	if f == nil {
		return nil
	}
	ft := f.Type(m.store)
	wf := &wtFunc{m: m, fn: f}
	for _, p := range ft.Params() {
		wf.params = append(wf.params, p.Kind())
	}
	for _, r := range ft.Results() {
		wf.results = append(wf.results, r.Kind())
	}
	return wf
}

func (m *wtModule) ExportedGlobal(name string) Global {
	if m.store == nil {
		return nil
	}
	ex := m.inst.GetExport(m.store, name)
	if ex == nil || ex.Global() == nil {
		return nil
	}
	g := ex.Global()
	gt := g.Type(m.store)
	if !gt.Mutable() || gt.Content().Kind() != wasmtime.KindI64 {
		return nil
	}
	return wtGlobal{m, g}
}

func (m *wtModule) IsClosed() bool {
	return m.store == nil || m.exit != nil || m.shadow.IsClosed()
}

func (m *wtModule) Close(ctx context.Context) error {
	if m.shadow != nil {
		m.shadow.Close(ctx)
	}
	if m.store != nil {
		m.unregister()
		m.store.Close() // unmaps the memory, image mapping included
		m.store, m.sctx = nil, nil
	}
	return nil
}

type wtGlobal struct {
	m *wtModule
	g *wasmtime.Global
}

type wtFunc struct {
	m               *wtModule
	fn              *wasmtime.Func
	params, results []wasmtime.ValKind
}

func (f *wtFunc) Call(ctx context.Context, params ...uint64) ([]uint64, error) {
	m := f.m
	if m.exit != nil {
		return nil, m.exit
	}
	if m.store == nil {
		return nil, errors.New("wasm: wasmtime: module closed")
	}
	if len(params) != len(f.params) {
		return nil, fmt.Errorf("wasm: wasmtime: %d parameters for a function of %d", len(params), len(f.params))
	}
	m.ctxs = append(m.ctxs, ctx)
	res, err := f.callRaw(params)
	m.ctxs = m.ctxs[:len(m.ctxs)-1]
	if err != nil {
		if p := m.pending; p != nil {
			m.pending = nil
			return nil, p
		}
		return nil, err
	}
	return res, nil
}

// trapNames are wazero's words for the traps (its wasmruntime errors), so
// that messages read the same on both engines.
var trapNames = map[wasmtime.TrapCode]string{
	wasmtime.StackOverflow:          "stack overflow",
	wasmtime.MemoryOutOfBounds:      "out of bounds memory access",
	wasmtime.HeapMisaligned:         "unaligned atomic",
	wasmtime.TableOutOfBounds:       "invalid table access",
	wasmtime.IndirectCallToNull:     "invalid table access",
	wasmtime.BadSignature:           "indirect call type mismatch",
	wasmtime.IntegerOverflow:        "integer overflow",
	wasmtime.IntegerDivisionByZero:  "integer divide by zero",
	wasmtime.BadConversionToInteger: "invalid conversion to integer",
	wasmtime.UnreachableCodeReached: "unreachable",
}

// host runs fn as a host function called from the guest, on stack: with
// the running Call's context, the shadow's memory view in sync, and a
// panic turned into the error that stops the guest (the Call returns it).
func (m *wtModule) host(caller unsafe.Pointer, fn func(m *wtModule, ctx context.Context, stack []uint64), stack []uint64) (err error) {
	m.callers = append(m.callers, caller)
	defer func() {
		m.callers = m.callers[:len(m.callers)-1]
		if p := recover(); p != nil {
			if e, ok := p.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("wasm: host function panicked: %v", p)
			}
		}
		if err != nil {
			var exit *sys.ExitError
			if errors.As(err, &exit) {
				m.exit = exit
			}
			m.pending = err
		}
	}()
	m.syncMemory()
	ctx := context.Background()
	if n := len(m.ctxs); n > 0 {
		ctx = m.ctxs[n-1]
	}
	fn(m, ctx, stack)
	return nil
}

// wtLinear is the shadow's linear memory: the wasmtime instance's.
type wtLinear struct{ m *wtModule }

// Reallocate implements experimental.LinearMemory: growing the shadow's
// view grows the wasmtime memory first when it is smaller (Snapshot.Restore
// and forks grow the memory through the api.Memory).
func (l wtLinear) Reallocate(size uint64) []byte {
	m := l.m
	if size > m.limit || m.store == nil {
		return nil
	}
	if cur := uint64(m.mem.DataSize(m.store)); size > cur {
		if _, err := m.mem.Grow(m.store, (size-cur+65535)/65536); err != nil {
			return nil
		}
	}
	if m.mem.Data(m.store) != m.base {
		return nil // a moved memory: never with wasmtime's static memories
	}
	return unsafe.Slice((*byte)(m.base), size)
}

// Free implements experimental.LinearMemory: the store owns the memory.
func (wtLinear) Free() {}

func wasmtimeKind(t api.ValueType) wasmtime.ValKind {
	switch t {
	case api.ValueTypeI64:
		return wasmtime.KindI64
	case api.ValueTypeF32:
		return wasmtime.KindF32
	case api.ValueTypeF64:
		return wasmtime.KindF64
	}
	return wasmtime.KindI32
}

func wasmtimeFuncType(params, results []api.ValueType) *wasmtime.FuncType {
	conv := func(ts []api.ValueType) []*wasmtime.ValType {
		out := make([]*wasmtime.ValType, len(ts))
		for i, t := range ts {
			out[i] = wasmtime.NewValType(wasmtimeKind(t))
		}
		return out
	}
	return wasmtime.NewFuncType(conv(params), conv(results))
}

func watSignature(ft *wasmtime.FuncType) string {
	var b strings.Builder
	name := func(k wasmtime.ValKind) string {
		switch k {
		case wasmtime.KindI64:
			return "i64"
		case wasmtime.KindF32:
			return "f32"
		case wasmtime.KindF64:
			return "f64"
		}
		return "i32"
	}
	if ps := ft.Params(); len(ps) > 0 {
		b.WriteString("(param")
		for _, p := range ps {
			b.WriteString(" " + name(p.Kind()))
		}
		b.WriteString(")")
	}
	if rs := ft.Results(); len(rs) > 0 {
		b.WriteString(" (result")
		for _, r := range rs {
			b.WriteString(" " + name(r.Kind()))
		}
		b.WriteString(")")
	}
	return b.String()
}
