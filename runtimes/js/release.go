package js

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wasmeval/wasmeval/internal/goja"
)

// Releasing what a failed cell grew.
//
// A cell that takes its session past its memory limit has the globals it
// made released (js.go, releaseGlobals). A cell that grew a global an
// earlier cell made (`a.push(...)` in a loop, on an `a` of its own) leaves
// its session over the limit with that alone: every later cell that grows
// it fails too. So every full walk of a session between cells also
// measures what each of the guest's globals holds on its own (a global's
// share: what is reachable from its value and not from the rest of the
// VM), and when a session still holds more than seven eighths of its
// limit after a cell that failed for memory (releaseAbove), the older
// globals that grew since the last such walk are released, most growth
// first, until it holds no more than that. Globals that did not grow are
// kept, whatever their size. Seven eighths, not the limit: the cell is
// stopped at some point past the limit, and what it grew can then measure
// just under it (127 of 128 MiB, seen), which left the session full: every
// later cell that grew it failed.

// releaseAbove is what a session may hold after a cell that failed for
// memory before the older globals that grew are released: seven eighths of
// its limit.
func releaseAbove(limit int64) int64 { return limit - limit/8 }

// globalShares measures the session as measure(0) does, and what each of
// the guest's globals holds on its own. The caller owns the VM (walk.go).
func (in *instance) globalShares() (size int64, shares map[string]int64) {
	base := freshSize()
	var w walker
	type held struct {
		name string
		p, n uintptr // the memory of the value the global points to
		v    reflect.Value
	}
	var pointers []held
	shares = make(map[string]int64)
	for name, v := range userGlobals(in.vm) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() {
				continue
			}
			// Left out of the walk of the VM, and walked last.
			p, n := v.Pointer(), max(v.Type().Elem().Size(), 1)
			w.seen.mark(p, n)
			pointers = append(pointers, held{name, p, n, v})
		case reflect.String:
			shares[name] = int64(v.Len())
		case reflect.Slice:
			shares[name] = int64(v.Len()) * int64(v.Type().Elem().Size())
		}
	}
	for _, r := range in.vmRoots() {
		w.push(reflect.ValueOf(r))
	}
	w.run()
	if w.failed {
		size, _ = in.failedWalkSize(0)
		return size, nil
	}
	// In the order of their names, so that data two globals share goes to
	// the same one every time.
	slices.SortFunc(pointers, func(a, b held) int { return strings.Compare(a.name, b.name) })
	walked := make(map[uintptr]bool, len(pointers))
	for _, h := range pointers {
		if walked[h.p] {
			shares[h.name] = 0 // two names of one value: walked once
			continue
		}
		walked[h.p] = true
		before := w.bytes + w.spanBytes
		w.seen.clear(h.p, h.n)
		w.push(h.v)
		w.run()
		shares[h.name] = w.bytes + w.spanBytes - before
	}
	if w.failed {
		size, _ = in.failedWalkSize(0)
		return size, nil
	}
	return max(w.total()-base, 0), shares
}

// userGlobals returns the values of the global object's data properties
// that the guest made (not the prelude's), read from goja's unexported
// property map without running any JavaScript: a reflect.Value of goja's
// value for each. Accessors are left out. Empty if goja's layout changed.
func userGlobals(vm *goja.Runtime) (globals map[string]reflect.Value) {
	globals = make(map[string]reflect.Value)
	defer func() {
		if recover() != nil {
			clear(globals)
		}
	}()
	self := reflect.ValueOf(vm.GlobalObject()).Elem().FieldByName("self").Elem().Elem()
	base := self.FieldByName("baseObject")
	if !base.IsValid() {
		base = self
	}
	values := base.FieldByName("values")
	prelude := preludeGlobals()
	it := values.MapRange()
	for it.Next() {
		name := it.Key().String()
		if _, ok := prelude[name]; ok {
			continue
		}
		v := it.Value() // an interface: goja.Value
		if v.IsNil() {
			continue
		}
		v = v.Elem()
		if v.Kind() == reflect.Pointer && !v.IsNil() && v.Type().Elem().Name() == "valueProperty" {
			p := v.Elem()
			if p.FieldByName("accessor").Bool() {
				continue
			}
			if v = p.FieldByName("value"); v.IsNil() {
				continue
			}
			v = v.Elem()
		}
		globals[name] = v
	}
	return globals
}

// preludeGlobals are the names of a fresh VM's globals.
var preludeGlobals = sync.OnceValue(func() map[string]struct{} {
	names := make(map[string]struct{})
	probe := &instance{memLimit: DefaultMemoryLimit}
	probe.opts.Now = time.Now
	probe.opts.Rand = zeroReader{}
	if err := probe.start(); err == nil {
		for _, n := range globalNames(probe.vm) {
			names[n] = struct{}{}
		}
	}
	return names
})

// measureBetweenCells measures the idle session and keeps each global's
// share for releaseGrown.
func (in *instance) measureBetweenCells() int64 {
	size, shares := in.globalShares()
	in.shares = shares
	return size
}

// releaseGrown is called after a cell that failed for memory with the
// session holding more than releaseAbove of its limit, once the globals
// the cell made are released and the session measured
// (measureBetweenCells): it releases the older globals that grew since the
// last measurement between cells before the cell started, most growth
// first, until the session holds no more than releaseAbove, and returns
// the session's size then. before is the number of globals when the cell
// started; only globals made before it are looked at. It writes what it
// released to b.
func (in *instance) releaseGrown(before int, size int64, b *strings.Builder) (int64, error) {
	names := globalNames(in.vm)
	older := make(map[string]struct{}, before)
	for _, n := range names[:min(before, len(names))] {
		older[n] = struct{}{}
	}
	prev, now := in.sharesBefore, in.shares
	type growth struct {
		name  string
		grown int64
	}
	var grown []growth
	for name, n := range now {
		if _, ok := older[name]; !ok {
			continue
		}
		if d := n - prev[name]; d >= minReleaseGrowth {
			grown = append(grown, growth{name, d})
		}
	}
	slices.SortFunc(grown, func(a, b growth) int {
		switch {
		case a.grown > b.grown:
			return -1
		case a.grown < b.grown:
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	var release []any
	var shown []string
	left := size
	for _, g := range grown {
		if left <= releaseAbove(in.memLimit) {
			break
		}
		release = append(release, g.name)
		shown = append(shown, fmt.Sprintf("%s (%d MiB)", g.name, max(now[g.name]>>20, 1)))
		left -= now[g.name]
	}
	if len(release) == 0 {
		return size, nil
	}
	if _, err := in.hooks.releaseGlobals(goja.Undefined(), in.vm.NewArray(release...)); err != nil {
		return size, fmt.Errorf("js: release globals: %w", err)
	}
	fmt.Fprintf(b, "Older globals that grew were released too: %s. ", strings.Join(shown, ", "))
	runtime.GC()
	mark := markNow()
	size = in.measureBetweenCells()
	in.setSize(size, mark)
	return size, nil
}

// minReleaseGrowth is the least growth of a global that releaseGrown
// counts: smaller changes are noise of the walk.
const minReleaseGrowth = 1 << 20
