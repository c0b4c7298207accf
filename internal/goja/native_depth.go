package goja

// wasmeval: recursion in native code ends in a catchable RangeError.
//
// Upstream throws an uncatchable *StackOverflowError when the call stack
// passes SetMaxCallStackSize, and does not count at all the recursion that
// built-ins make in Go without a call frame of their own: JSON.stringify
// and JSON.parse into a nested value, JSON.parse's reviver, and
// Array.prototype.flat. A deep nesting (`let a = []; for (...) a = [a]`)
// then either stopped the whole script where V8 lets a try/catch see a
// RangeError (String(a), a.join(), through the frames of toString and
// join), or grew Go's stack by a frame or more a level, without bound: a
// Go stack overflow is a fatal error that no recover stops, and ends every
// VM of the process.
//
// Here both count against the one limit: a call frame (len(callStack)) and
// a level of native recursion (nativeDepth) each take one place of
// maxCallStackSize, and passing it throws "RangeError: Maximum call stack
// size exceeded", which a try/catch can catch (and after which the VM is
// fine: the throw happens before any state changes). Native recursion has a
// ceiling of its own, maxNativeDepth, for a runtime whose call stack is not
// limited (upstream's default): the Go stack it takes stays bounded.

// maxNativeDepth bounds the levels of native recursion whatever the call
// stack's limit: at a few hundred bytes of Go stack a level, a few MiB.
// (JSON.stringify's cycle check takes time quadratic in the depth, where no
// interrupt lands: 10000 levels take a fraction of a second.)
const maxNativeDepth = 10_000

// enterNative counts one level of native recursion, or throws the stack
// overflow's RangeError when there is no room for it. Each call must be
// paired with a deferred leaveNative.
func (vm *vm) enterNative() {
	if vm.nativeDepth >= maxNativeDepth || len(vm.callStack)+vm.nativeDepth > vm.maxCallStackSize {
		vm.throwStackOverflow()
	}
	vm.nativeDepth++
}

// leaveNative ends a level that enterNative counted.
func (vm *vm) leaveNative() {
	vm.nativeDepth--
}

// throwStackOverflow throws V8's RangeError for a call stack or a native
// recursion past its limit. The error is made by the intrinsic RangeError
// constructor in Go, with no call of its own: it runs none of the script's
// code and needs no room on the call stack.
func (vm *vm) throwStackOverflow() {
	panic(vm.r.newError(vm.r.getRangeError(), "Maximum call stack size exceeded"))
}

// flattenNested is flattenIntoArray into a nested array, counted as a
// level of native recursion.
func (r *Runtime) flattenNested(target, source *Object, sourceLen, start, depth int64) int64 {
	r.vm.enterNative()
	defer r.vm.leaveNative()
	return r.flattenIntoArray(target, source, sourceLen, start, depth, nil, nil)
}

// callFromGo calls c, the function fn, from a built-in's Go code. A native
// function called so has no call frame of its own, unlike a JavaScript
// one (__call pushes it): its call counts as a level of native recursion.
// String(a) of nested arrays recursed so through toString, join and
// ToPrimitive without a bound; toLocaleString through itself.
func (vm *vm) callFromGo(fn *Object, c func(FunctionCall) Value, call FunctionCall) Value {
	if _, native := fn.self.(*nativeFuncObject); native {
		vm.enterNative()
		defer vm.leaveNative()
	}
	return c(call)
}
