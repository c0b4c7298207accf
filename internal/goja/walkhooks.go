package goja

import "reflect"

// Hooks for a walk of a Runtime's memory by reflect (wasmeval's
// runtimes/js measures a session's VM so). Such a walk reads the VM's
// maps and slices while the VM does not run; these are the structures
// that change even then.

// weakMapType is the type of a WeakMap's or WeakSet's entries.
var weakMapType = reflect.TypeFor[weakMap]()

// WeakMapValues returns a copy of the values of the weak map v, taken
// under the lock that the garbage collector's cleanups hold when they
// delete the entry of a key it freed (on the runtime's cleanup goroutine,
// whatever the VM is doing), and its length then; ok is false when v is
// not a WeakMap's or WeakSet's entries (or cannot be addressed). Iterating
// the map itself while a cleanup deletes from it is a fatal error of the
// Go runtime, which no recover stops.
func WeakMapValues(v reflect.Value) (values []Value, n int, ok bool) {
	if v.Type() != weakMapType || !v.CanAddr() {
		return nil, 0, false
	}
	wm := (*weakMap)(v.Addr().UnsafePointer())
	wm.Lock()
	defer wm.Unlock()
	values = make([]Value, 0, len(wm.m))
	for _, val := range wm.m {
		values = append(values, val)
	}
	return values, len(wm.m), true
}
