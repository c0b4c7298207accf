package js

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/wasmeval/wasmeval/internal/goja"
)

// goja bug: an uncatchable error (an interrupt or a stack overflow) that
// passes through a running generator or async function leaves that
// function's frame on the VM's call stack. The VM then believes, forever, that
// it is inside a call: it never again runs promise jobs at the end of a
// top-level call, so every later `await` or `.then` hangs. goja offers no way
// to unwind it, and a timeout in an async cell is exactly this case.
//
// After such an error, the instance checks the VM with a probe (a promise
// job must run when a top-level call returns) and, when it fails, puts the
// VM's execution state back as goja's vm.init leaves it: empty stacks, the
// global scope. Globals, objects and everything else of the session are
// untouched. The fields are reached with reflect and unsafe because they are
// unexported; if goja's layout ever changes, resetVM fails, and the caller
// starts a fresh VM instead (the session loses its state, and says so).

// probeSrc returns a function that queues a promise job calling cb.
const probeSrc = `(function (cb) { Promise.resolve().then(cb) })`

var probeProgram = goja.MustCompile(preludeName+"probe.js", probeSrc, true)

// vmRunsJobs reports whether a top-level call still runs promise jobs.
func (in *instance) vmRunsJobs() bool {
	v, err := in.vm.RunProgram(probeProgram)
	if err != nil {
		return false
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return false
	}
	ran := false
	cb := in.vm.ToValue(func(goja.FunctionCall) goja.Value {
		ran = true
		return goja.Undefined()
	})
	if _, err := fn(goja.Undefined(), cb); err != nil {
		return false
	}
	return ran
}

// field returns a settable view of an unexported struct field.
func field(v reflect.Value, name string) (reflect.Value, error) {
	f := v.FieldByName(name)
	if !f.IsValid() {
		return reflect.Value{}, fmt.Errorf("js: goja has no field %s", name)
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem(), nil
}

// resetVM returns goja's VM to the top level; see above.
func resetVM(r *goja.Runtime) (err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("js: cannot reset goja's VM: %v", x)
		}
	}()
	rt := reflect.ValueOf(r).Elem()
	vmPtr, err := field(rt, "vm")
	if err != nil {
		return err
	}
	vm := vmPtr.Elem()
	global, err := field(rt, "global")
	if err != nil {
		return err
	}
	globalStash, err := field(global, "stash")
	if err != nil {
		return err
	}
	for _, name := range []string{"callStack", "iterStack", "refStack", "tryStack"} {
		f, err := field(vm, name)
		if err != nil {
			return err
		}
		f.SetLen(0)
	}
	sets := []struct {
		name string
		v    reflect.Value
	}{
		{"stash", globalStash.Addr()},
		{"sb", reflect.ValueOf(-1)},
		{"sp", reflect.ValueOf(0)},
		{"pc", reflect.ValueOf(0)},
		{"args", reflect.ValueOf(0)},
	}
	for _, s := range sets {
		f, err := field(vm, s.name)
		if err != nil {
			return err
		}
		f.Set(s.v)
	}
	for _, name := range []string{"prg", "stack", "privEnv", "newTarget", "result", "curAsyncRunner"} {
		f, err := field(vm, name)
		if err != nil {
			return err
		}
		f.Set(reflect.Zero(f.Type()))
	}
	jobs, err := field(rt, "jobQueue")
	if err != nil {
		return err
	}
	jobs.Set(reflect.Zero(jobs.Type()))
	r.ClearInterrupt()
	return nil
}
