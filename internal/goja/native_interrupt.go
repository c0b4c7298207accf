package goja

import "sync/atomic"

// wasmeval: a loop of native code over an iterator stops at an interrupt.
//
// goja checks for an interrupt only before each instruction of script code
// (vm.run), and an iteration that runs none never looks: new Set(it), new
// Map(it), WeakSet, WeakMap, Promise.all/allSettled/any/race,
// Object.fromEntries and the spreads step a built-in iterator in Go. Over
// an array-like of length 2^53-1, `new Set(Array.prototype.values.call(o))`
// spun for ever past its cell's timeout, and `new Set(Array.prototype.keys
// .call(o))` grew the host to 24 GB on a 128 MiB session limit (the
// memory monitor's interrupt never landed; a Set's growth was not announced
// to the allocation guard then, as it is now). A global regexp2 search
// lists its matches in one call the same way (regexp.go): each match stops
// after regexp2's MatchTimeout, the list of them did not. And the Array
// built-ins that loop over an array-like's length, element or not (join,
// toLocaleString, indexOf, includes, lastIndexOf, reverse, copyWithin,
// fill, the callbacks' loops over holes, shift, unshift, splice, slice,
// flat, concat, the with and to* copies, Array.from), JSON.stringify's
// loop over an array, and the typed arrays' per-element loops (fill,
// includes, indexOf, lastIndexOf, join, toLocaleString, reverse, set from
// an array-like, slice across types) check at each step, the sorts at
// each comparison: on a 4 GiB session the guards let through a length of
// 2^28, and each ran on past its timeout.

// checkInterrupt throws the VM's interrupt, as vm.run throws it before its
// next instruction, when Interrupt has been called: the same uncatchable
// *InterruptedError, with the call stack where the loop is.
func (vm *vm) checkInterrupt() {
	if atomic.LoadUint32(&vm.interrupted) == 0 {
		return
	}
	vm.interruptLock.Lock()
	v := &InterruptedError{iface: vm.interruptVal}
	v.stack = vm.captureStack(nil, 0)
	vm.interruptLock.Unlock()
	panic(v)
}

// callChecked calls f's Go function for Go code (assertCallable: a
// built-in's callback, a then handler, a replacer), after checking for an
// interrupt. A built-in that calls a native callback in a loop runs no
// script code either: Array(n).fill(s).forEach(RegExp.prototype.test.bind(re))
// ran one slow regexp2 match after another, 0.2 s each, 8 s past a 2 s
// timeout for 40 of them. Calls from script code (vmCall) do not need it.
func (f *nativeFuncObject) callChecked(call FunctionCall) Value {
	f.val.runtime.vm.checkInterrupt()
	return f.f(call)
}
