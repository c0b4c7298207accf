//go:build cgo

package wasm

// wasmevalHostEntry is the C function wasmtime calls for every host
// function (defineRaw): it asks for the caller's context and the store's
// data in C, then calls the Go side (wasmevalHostCall) once, so that a
// host call crosses between C and Go once instead of three times (each
// crossing from Go into C costs tens of ns; the fuel hook and WASI calls
// are host calls; BenchmarkFuelHook). It lives in its own file: a file
// with //export may only declare C functions in its preamble, not define
// them.

/*
#include <stdint.h>
#include <stddef.h>

typedef struct wasmtime_context wasmtime_context_t;
typedef struct wasmtime_caller wasmtime_caller_t;
typedef struct wasm_trap_t wasm_trap_t;
typedef struct { uint64_t lo, hi; } wm_raw_t;

extern wasmtime_context_t *wasmtime_caller_context(wasmtime_caller_t *);
extern void *wasmtime_context_get_data(const wasmtime_context_t *);
extern wasm_trap_t *wasmevalHostCall(uintptr_t, wasmtime_context_t *, uintptr_t, wm_raw_t *, size_t);

wasm_trap_t *wasmevalHostEntry(uintptr_t env, wasmtime_caller_t *caller, wm_raw_t *args, size_t n) {
	wasmtime_context_t *cctx = wasmtime_caller_context(caller);
	return wasmevalHostCall(env, cctx, (uintptr_t)wasmtime_context_get_data(cctx), args, n);
}
*/
import "C"
