//go:build cgo

package wasm

// The hot paths of the wasmtime engine (calls into the guest, host
// functions, the fuel global) go to wasmtime's C API directly, unchecked:
// wasmtime-go's Func.Call asks for the function's type, and its host
// trampolines convert every value, on each call, which costs several
// microseconds a call (BenchmarkHostCall). The C declarations below are
// those of wasmtime v39's headers (wasmtime/func.h, global.h, linker.h,
// trap.h, error.h, store.h), spelled with local names for the structs
// whose layout matters; wasmtime-go's own library provides the symbols.
// wasmtime-go's Func, Global, Linker and FuncType hold their C handle as
// their first field, which is how the handles are reached (handle,
// firstPointer): go.mod pins the version this was written against. The
// env of a host function is an index (uintptr_t where the header says
// void *: the same ABI).

/*
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdlib.h>

typedef struct wasmtime_context wasmtime_context_t;
typedef struct wasmtime_caller wasmtime_caller_t;
typedef struct wasm_trap_t wasm_trap_t;
typedef struct wasmtime_error wasmtime_error_t;
typedef struct wasmtime_linker wasmtime_linker_t;
typedef struct wasm_functype_t wasm_functype_t;

typedef struct { uint64_t store_id; void *private_; } wm_func_t;
typedef struct { uint64_t store_id; uint32_t p1, p2, p3; } wm_global_t;
typedef struct { uint64_t store_id; uint32_t p1, p2; } wm_memory_t;
typedef struct { uint64_t lo, hi; } wm_raw_t;
typedef struct { uint8_t kind; int64_t i64; uint64_t rest[2]; } wm_val_t;
// The sizes of wasmtime_val_t (a kind, then a union as large as an anyref:
// 24 bytes) and wasmtime_val_raw_t: wasmtime writes whole values, so a
// smaller struct would let it write past the Go memory that holds one.
typedef char wm_val_size_check[sizeof(wm_val_t) == 32 ? 1 : -1];
typedef char wm_raw_size_check[sizeof(wm_raw_t) == 16 ? 1 : -1];
typedef char wm_global_size_check[sizeof(wm_global_t) == 24 ? 1 : -1];
typedef char wm_memory_size_check[sizeof(wm_memory_t) == 16 ? 1 : -1];
typedef struct { size_t size; char *data; } wm_bytes_t;
typedef wasm_trap_t *(*wm_cb_t)(uintptr_t, wasmtime_caller_t *, wm_raw_t *, size_t);

extern wasmtime_error_t *wasmtime_func_call_unchecked(wasmtime_context_t *, const wm_func_t *, wm_raw_t *, size_t, wasm_trap_t **);
extern wasmtime_error_t *wasmtime_linker_define_func_unchecked(wasmtime_linker_t *, const char *, size_t, const char *, size_t, const wasm_functype_t *, wm_cb_t, uintptr_t, void (*)(void *));
extern wasmtime_context_t *wasmtime_caller_context(wasmtime_caller_t *);
extern void *wasmtime_context_get_data(const wasmtime_context_t *);
extern size_t wasmtime_memory_data_size(const wasmtime_context_t *, const wm_memory_t *);
extern void wasmtime_global_get(wasmtime_context_t *, const wm_global_t *, wm_val_t *);
extern wasmtime_error_t *wasmtime_global_set(wasmtime_context_t *, const wm_global_t *, const wm_val_t *);
extern void wasm_trap_message(const wasm_trap_t *, wm_bytes_t *);
extern bool wasmtime_trap_code(const wasm_trap_t *, uint8_t *);
extern void wasm_trap_delete(wasm_trap_t *);
extern wasm_trap_t *wasmtime_trap_new(const char *, size_t);
extern void wasmtime_error_message(const wasmtime_error_t *, wm_bytes_t *);
extern void wasmtime_error_delete(wasmtime_error_t *);
extern void wasm_byte_vec_delete(wm_bytes_t *);

extern wasm_trap_t *wasmevalHostEntry(uintptr_t, wasmtime_caller_t *, wm_raw_t *, size_t); // wasmtime_entry.go
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"
)

// wasmtimeI64 is WASMTIME_I64, the kind of an i64 wasmtime_val_t.
const wasmtimeI64 = 1

// handle is the C handle wasmtime-go's object p holds as its first field.
func handle[T any](p *T) unsafe.Pointer { return unsafe.Pointer(p) }

// firstPointer is the pointer wasmtime-go's object p holds as its first field.
func firstPointer[T any](p *T) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(p)) }

// rawHost is a host function defined with defineRaw: fn gets the module,
// the context of the running Call and the stack (parameters in, results
// out).
type rawHost struct {
	nres int
	fn   func(m *wtModule, ctx context.Context, stack []uint64)
}

// rawHosts are all host functions defined, by their env (index); they
// live as long as the process (a few per compiled module).
var rawHosts struct {
	sync.RWMutex
	fns []rawHost
}

// wtStores finds the module of a store from its data (wasmtime-go's store
// index), which host functions get from their caller's context.
var wtStores sync.Map // uintptr -> *wtModule

// defineRaw defines module.name in l as a host function of type ft that
// runs fn, through wasmtime's unchecked host function API.
func defineRaw(l *wasmtime.Linker, module, name string, ft *wasmtime.FuncType, h rawHost) error {
	rawHosts.Lock()
	env := len(rawHosts.fns)
	rawHosts.fns = append(rawHosts.fns, h)
	rawHosts.Unlock()
	cm, cn := C.CString(module), C.CString(name)
	defer C.free(unsafe.Pointer(cm))
	defer C.free(unsafe.Pointer(cn))
	err := C.wasmtime_linker_define_func_unchecked((*C.wasmtime_linker_t)(firstPointer(l)), cm, C.size_t(len(module)), cn, C.size_t(len(name)),
		(*C.wasm_functype_t)(firstPointer(ft)), C.wm_cb_t(C.wasmevalHostEntry), C.uintptr_t(env), nil)
	runtime.KeepAlive(l)
	runtime.KeepAlive(ft)
	if err != nil {
		return errors.New(errorText(err))
	}
	return nil
}

// wasmevalHostCall runs host function env for wasmevalHostEntry, which
// gives the caller's context and its store's data.
//
//export wasmevalHostCall
func wasmevalHostCall(env C.uintptr_t, cctx *C.wasmtime_context_t, data C.uintptr_t, args *C.wm_raw_t, n C.size_t) *C.wasm_trap_t {
	v, _ := wtStores.Load(uintptr(data))
	m, _ := v.(*wtModule)
	rawHosts.RLock()
	h := rawHosts.fns[uintptr(env)]
	rawHosts.RUnlock()
	if m == nil {
		return newTrap("wasm: wasmtime: a host function called from a store wasmeval does not know")
	}
	raw := unsafe.Slice(args, int(n))
	stack := m.hostStack(len(raw))
	for i := range raw {
		stack[i] = uint64(raw[i].lo)
	}
	if err := m.host(unsafe.Pointer(cctx), h.fn, stack); err != nil {
		return newTrap(err.Error())
	}
	for i := 0; i < h.nres && i < len(raw); i++ {
		raw[i].lo, raw[i].hi = C.uint64_t(stack[i]), 0
	}
	return nil
}

func newTrap(msg string) *C.wasm_trap_t {
	cs := C.CString(msg)
	defer C.free(unsafe.Pointer(cs))
	return C.wasmtime_trap_new(cs, C.size_t(len(msg)))
}

// cur is the context to call wasmtime with now: inside a host function,
// its caller's; else the store's, kept by register (wasmtime's store.h: a
// store's context pointer is the same for its whole life), which spares a
// cgo call to ask for it on every call into the guest and every read of a
// global (Store.Context).
func (m *wtModule) cur() *C.wasmtime_context_t {
	if n := len(m.callers); n > 0 {
		return (*C.wasmtime_context_t)(m.callers[n-1])
	}
	if m.sctx == nil {
		panic("wasm: wasmtime: the module's store is closed") // as Store.Context would
	}
	return (*C.wasmtime_context_t)(m.sctx)
}

// register makes the module findable from its store's host calls, and
// keeps the store's context.
func (m *wtModule) register() {
	m.sctx = unsafe.Pointer(m.store.Context())
	m.storeKey = uintptr(C.wasmtime_context_get_data((*C.wasmtime_context_t)(m.sctx)))
	wtStores.Store(m.storeKey, m)
}

// dataSize is the memory's size in bytes: Memory.DataSize in one cgo call
// (it makes two, asking for the store's context first).
func (m *wtModule) dataSize() uint64 {
	n := uint64(C.wasmtime_memory_data_size(m.cur(), (*C.wm_memory_t)(handle(m.mem))))
	runtime.KeepAlive(m.mem)
	runtime.KeepAlive(m.store)
	return n
}

func (m *wtModule) unregister() {
	if m.storeKey != 0 || m.store != nil {
		wtStores.CompareAndDelete(m.storeKey, m)
	}
}

// callRaw calls f with params; results are how many it returns, i32s
// zero-extended as wazero gives them.
func (f *wtFunc) callRaw(params []uint64) ([]uint64, error) {
	m := f.m
	buf := m.rawBuf(max(len(params), len(f.results), 1))
	for i, p := range params {
		buf[i].lo = C.uint64_t(p)
	}
	var trap *C.wasm_trap_t
	err := C.wasmtime_func_call_unchecked(m.cur(), (*C.wm_func_t)(handle(f.fn)), &buf[0], C.size_t(len(buf)), &trap)
	runtime.KeepAlive(f.fn)
	runtime.KeepAlive(m.store)
	if trap != nil {
		return nil, trapErr(trap)
	}
	if err != nil {
		return nil, errors.New(errorText(err))
	}
	out := make([]uint64, len(f.results))
	for i, k := range f.results {
		out[i] = uint64(buf[i].lo)
		if k == wasmtime.KindI32 {
			out[i] = uint64(uint32(out[i]))
		}
	}
	return out, nil
}

// trapErr words a trap as wazero does ("wasm error: unreachable"), then
// wasmtime's message and backtrace; it frees the trap.
func trapErr(trap *C.wasm_trap_t) error {
	defer C.wasm_trap_delete(trap)
	var msg C.wm_bytes_t
	C.wasm_trap_message(trap, &msg)
	text := C.GoStringN(msg.data, C.int(msg.size))
	C.wasm_byte_vec_delete(&msg)
	var code C.uint8_t
	if C.wasmtime_trap_code(trap, &code) {
		if name, ok := trapNames[wasmtime.TrapCode(code)]; ok {
			return fmt.Errorf("wasm error: %s\n%s", name, text)
		}
	}
	return errors.New(text)
}

func errorText(err *C.wasmtime_error_t) string {
	defer C.wasmtime_error_delete(err)
	var msg C.wm_bytes_t
	C.wasmtime_error_message(err, &msg)
	text := C.GoStringN(msg.data, C.int(msg.size))
	C.wasm_byte_vec_delete(&msg)
	return text
}

// wtScratch is a module's memory for the values its calls to wasmtime
// pass: a value passed to C escapes, and allocating one for each call was
// most of a trivial cell's allocations.
type wtScratch struct {
	val C.wm_val_t
	// raws are the params and results of the Calls running, by their
	// depth (a host function may call into the guest again); stacks
	// those of the host functions running, by theirs.
	raws   [][]C.wm_raw_t
	stacks [][]uint64
}

// hostStack is n values for a host function about to run (len(m.callers)
// deep), the module's until it returns.
func (m *wtModule) hostStack(n int) []uint64 {
	s := m.scratch()
	d := len(m.callers)
	for len(s.stacks) <= d {
		s.stacks = append(s.stacks, nil)
	}
	if cap(s.stacks[d]) < n {
		s.stacks[d] = make([]uint64, max(n, 8))
	}
	return s.stacks[d][:n]
}

// scratch is the module's wtScratch.
func (m *wtModule) scratch() *wtScratch {
	if m.scr == nil {
		m.scr = new(wtScratch)
	}
	return m.scr
}

// rawBuf is n values for the innermost Call running (len(m.ctxs) deep),
// zeroed; the module's until that Call returns.
func (m *wtModule) rawBuf(n int) []C.wm_raw_t {
	s := m.scratch()
	d := max(len(m.ctxs), 1) - 1
	for len(s.raws) <= d {
		s.raws = append(s.raws, nil)
	}
	if cap(s.raws[d]) < n {
		s.raws[d] = make([]C.wm_raw_t, max(n, 4))
	}
	buf := s.raws[d][:n]
	clear(buf)
	return buf
}

func (g wtGlobal) Get() uint64 {
	v := &g.m.scratch().val
	C.wasmtime_global_get(g.m.cur(), (*C.wm_global_t)(handle(g.g)), v)
	runtime.KeepAlive(g.g)
	return uint64(v.i64)
}

func (g wtGlobal) Set(x uint64) {
	v := &g.m.scratch().val
	*v = C.wm_val_t{kind: wasmtimeI64, i64: C.int64_t(x)}
	if err := C.wasmtime_global_set(g.m.cur(), (*C.wm_global_t)(handle(g.g)), v); err != nil {
		C.wasmtime_error_delete(err) // the fuel global is a mutable i64: cannot fail
	}
	runtime.KeepAlive(g.g)
}
