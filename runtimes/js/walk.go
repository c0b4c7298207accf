package js

import (
	"log/slog"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/wasmeval/wasmeval/internal/goja"
)

// A session's size.
//
// goja allocates on the Go heap that every session shares, and the Go
// runtime measures only the whole heap: one session's growth looks the same
// as another's. sizeOf measures one VM instead: it walks the Go values
// reachable from the VM (its global object, prototypes, stacks, scopes,
// compiled code, and the instance's modules and timers) with reflect, and
// adds up their sizes: each struct, array, slice backing array, map,
// interface box and string once, by address (overlapping substrings are
// merged), each as the allocator rounds it (allocSize), and a map by its
// tables (mapSize).
// What a walk needs for itself is small beside what it walks (a bitmap of
// the memory counted, a 64th of it; one element of a long array or map on
// its stack at a time; no copies of map entries): walks run when a session
// is at its limit, and must not take the process far past it.
// Functions are opaque to reflect: what only a Go closure holds is not
// counted (goja's bound functions keep their bound arguments so; the
// prelude keeps a visible copy). The result is within a few per cent of
// the live heap the VM's data takes (TestMeasureTracksTheHeap).
//
// A walk reads the VM's maps and slices, so it runs only where the VM
// cannot change meanwhile: on the goroutine running the cell (in a host
// function, at a safe point) or while the cell waits for a timer or a host
// call with the instance's vmMu held.

// walkBudgetObjects bounds a walk's work: past it the walk stops and
// reports what it found, which is then a lower bound.
const walkBudgetObjects = 20_000_000

// sizeOf returns the bytes reachable from roots, stopping once the count
// passes budget (then over is true).
func sizeOf(budget int64, roots ...any) (size int64, over, failed bool) {
	w := walker{budget: budget}
	for _, r := range roots {
		w.push(reflect.ValueOf(r))
	}
	w.run()
	return w.total(), w.over, w.failed
}

type span struct{ start, end uintptr }

type walker struct {
	budget int64
	bytes  int64
	visits int
	over   bool
	// failed is set when the walk panicked (see run).
	failed bool
	// seen has the memory of the structs, arrays and maps counted, by
	// address (marks.go).
	seen  marks
	stack []reflect.Value
	// lists are the slices and maps whose elements are still to be walked,
	// handed to the stack one at a time: pushing a long array's elements
	// all at once took a stack as big as the array. A list's next element
	// goes on the stack when the stack is back down to the height it had
	// when the list was met, so a list is done before what was under it.
	// (Handed over only once the stack was empty, the lists met along a
	// Map's entries, which the stack walks one by one down their linked
	// list, piled up to the Map's end, each with an iterator and
	// variables: a walk of a big Map allocated thrice the Map.)
	lists   []list
	iters   []*mapIter
	vars    map[reflect.Type][]reflect.Value
	strings []span // strings and slices of bytes or uint16 of 1 KiB or more
	// spanBytes is the sum of the spans' lengths, overlaps counted twice.
	spanBytes    int64
	checkedSpans int
}

// bigLeaf is the size from which string-like data is merged by address:
// substrings share their string's bytes.
const bigLeaf = 1024

func (w *walker) push(v reflect.Value) {
	if v.IsValid() {
		w.stack = append(w.stack, v)
	}
}

func (w *walker) add(n int64) {
	w.bytes += n
	if w.budget > 0 && w.bytes > w.budget {
		w.over = true
	}
}

// total is the bytes counted, with the big strings' merged spans.
func (w *walker) total() int64 {
	slices.SortFunc(w.strings, func(a, b span) int {
		switch {
		case a.start < b.start:
			return -1
		case a.start > b.start:
			return 1
		}
		return 0
	})
	var sum int64
	var cur span
	for _, s := range w.strings {
		if s.start >= cur.end {
			sum += allocSize(int64(cur.end-cur.start), false)
			cur = s
		} else if s.end > cur.end {
			cur.end = s.end
		}
	}
	sum += allocSize(int64(cur.end-cur.start), false)
	return w.bytes + sum
}

// leaf counts string-like data of n bytes at p. Big ones are merged by
// address at the end; the budget sees them unmerged.
func (w *walker) leaf(p uintptr, n int64) {
	if n <= 0 {
		return
	}
	if n < bigLeaf {
		// By address too: an object's property names are the same
		// strings as its keys, and a class's instances share theirs.
		if fresh := w.counted(p, n); fresh == n {
			w.add(allocSize(n, false))
		} else {
			w.add(fresh)
		}
		return
	}
	w.strings = append(w.strings, span{p, p + uintptr(n)})
	w.spanBytes += n
}

// list is a slice (next is the index of the element to walk next) or a
// map (it, and the variables its keys and values are copied to, invalid
// for those not walked).
type list struct {
	v        reflect.Value
	next     int
	it       *mapIter
	key, val reflect.Value
	// depth is the stack's height when the list was met.
	depth int
}

// addList adds l to the lists, at the stack's height.
func (w *walker) addList(l list) {
	l.depth = len(w.stack)
	w.lists = append(w.lists, l)
}

// mapIter iterates a map through a copy of its pointer (see exported).
// The walk keeps those it is done with, and their variables, for the next
// maps: a goja object is a map, and a new iterator for each took as much
// memory as the session's data.
type mapIter struct {
	it *reflect.MapIter
	m  *unsafe.Pointer
}

// iterate returns an iterator of map v.
func (w *walker) iterate(v reflect.Value) *mapIter {
	var it *mapIter
	if n := len(w.iters); n > 0 {
		it = w.iters[n-1]
		w.iters = w.iters[:n-1]
	} else {
		it = &mapIter{it: new(reflect.MapIter), m: new(unsafe.Pointer)}
	}
	// A map variable is one pointer: a copy of it is a map of the same
	// type, which reflect lets SetIterKey read from, as it does not one
	// reached through unexported fields (goja's).
	*it.m = v.UnsafePointer()
	it.it.Reset(reflect.NewAt(v.Type(), unsafe.Pointer(it.m)).Elem())
	return it
}

// variable returns a variable of type t for a map's keys or values.
func (w *walker) variable(t reflect.Type) reflect.Value {
	if vs := w.vars[t]; len(vs) > 0 {
		w.vars[t] = vs[:len(vs)-1]
		return vs[len(vs)-1]
	}
	return reflect.New(t).Elem()
}

// done keeps l's iterator and variables for reuse.
func (w *walker) done(l *list) {
	if l.it == nil {
		return
	}
	l.it.it.Reset(reflect.Value{})
	*l.it.m = nil
	w.iters = append(w.iters, l.it)
	if w.vars == nil {
		w.vars = make(map[reflect.Type][]reflect.Value)
	}
	for _, v := range []reflect.Value{l.key, l.val} {
		if v.IsValid() {
			v.SetZero()
			w.vars[v.Type()] = append(w.vars[v.Type()], v)
		}
	}
}

// refill moves the next element of the innermost list to the stack, if
// the stack is down to the list's height, and reports whether it did.
func (w *walker) refill() bool {
	for len(w.lists) > 0 {
		l := &w.lists[len(w.lists)-1]
		if len(w.stack) > l.depth {
			return false
		}
		if l.it == nil {
			if l.next < l.v.Len() {
				w.push(l.v.Index(l.next))
				l.next++
				return true
			}
		} else if l.it.it.Next() {
			// Copied into the same variables each time (Key and Value
			// allocate a copy each): the stack is down to the list's
			// height, so nothing walked refers to the last entry's any
			// more.
			if l.key.IsValid() {
				l.key.SetIterKey(l.it.it)
				w.push(l.key)
			}
			if l.val.IsValid() {
				l.val.SetIterValue(l.it.it)
				w.push(l.val)
			}
			return true
		}
		w.done(l)
		w.lists = w.lists[:len(w.lists)-1]
	}
	return false
}

// counted marks the n bytes at p as counted and returns how many of them
// were not before, n itself if none were.
func (w *walker) counted(p uintptr, n int64) int64 {
	fresh := w.seen.mark(p, uintptr(n))
	if fresh == words(p, uintptr(n)) {
		return n
	}
	return int64(fresh) * 8
}

// run walks what is on the stack and in the lists. A walk reads goja's
// unexported structures by reflect: one that panics
// (a layout it does not expect, data that changed under it) must not take
// the host and every other session down. It stops, is marked failed and
// over, and is logged; its callers then go by the session's size bound
// (sizebound.go) instead.
func (w *walker) run() {
	defer func() {
		if r := recover(); r != nil {
			w.failed, w.over = true, true
			slog.Error("js: a walk of a session's memory failed; its size bound stands in for it", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	if walkFault != nil {
		walkFault()
	}
	for !w.over && (w.refill() || len(w.stack) > 0) {
		// Merging the spans costs a sort: only as their number doubles.
		if w.budget > 0 && len(w.strings) > 2*w.checkedSpans && w.bytes+w.spanBytes > w.budget {
			w.checkedSpans = len(w.strings)
			if w.total() > w.budget {
				w.over = true
				return
			}
		}
		if w.visits++; w.visits > walkBudgetObjects {
			w.over = true
			return
		}
		v := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		w.value(v)
	}
}

// value counts what v refers to; v's own bytes are its container's.
func (w *walker) value(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		w.pointer(v)
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		switch e.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Func, reflect.Chan, reflect.UnsafePointer:
			w.push(e)
		default:
			// A value stored in an interface lives in a box of its own,
			// which other interfaces may share (copies of the one
			// value), known by its address where the interface has one;
			// a struct or array of one pointer is stored as the pointer.
			t := e.Type()
			if skipType(t) {
				return
			}
			ptrs := hasPointers(t)
			if !directIface(t) {
				size := int64(t.Size())
				if v.CanAddr() {
					box := (*[2]unsafe.Pointer)(unsafe.Pointer(v.UnsafeAddr()))[1]
					if w.counted(uintptr(box), size) == 0 {
						return
					}
				}
				w.add(allocSize(size, ptrs))
			}
			if ptrs {
				w.push(e)
			}
		}
	case reflect.Struct:
		if vals, n, ok := goja.WeakMapValues(v); ok {
			w.weakMap(v.Field(0), vals, n)
			return
		}
		// Pointers are counted as they are met, and the other fields
		// pushed last to first: a linked list (goja's Map and Set keep
		// their entries so) is walked with a stack of constant height.
		// Pushed first to last, each entry's key and value and its
		// neighbour already counted stayed on the stack, under the next
		// entry, to the list's end.
		fields := pointerFields(v.Type())
		for j := len(fields) - 1; j >= 0; j-- {
			f := v.Field(fields[j])
			if f.Kind() == reflect.Pointer {
				w.visits++
				w.pointer(f)
			} else {
				w.push(f)
			}
		}
	case reflect.Array:
		if hasPointers(v.Type().Elem()) {
			for i := range v.Len() {
				w.push(v.Index(i))
			}
		}
	case reflect.Slice:
		if v.IsNil() || v.Cap() == 0 {
			return
		}
		et := v.Type().Elem()
		if skipType(et) {
			return
		}
		p := v.Pointer()
		if k := et.Kind(); (k == reflect.Uint8 || k == reflect.Uint16) && et.Size() <= 2 {
			w.leaf(p, int64(v.Len())*int64(et.Size()))
			return
		}
		if et.Size() == 0 {
			return
		}
		size := int64(v.Cap()) * int64(et.Size())
		n := w.counted(p, size)
		if n == 0 {
			return
		}
		ptrs := hasPointers(et)
		if n == size {
			n = allocSize(n, ptrs)
		}
		w.add(n)
		if ptrs && v.Len() > 0 {
			w.addList(list{v: v})
		}
	case reflect.String:
		if n := v.Len(); n > 0 {
			w.leaf(uintptr(unsafe.Pointer(unsafe.StringData(v.String()))), int64(n))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		// A map is known by its header's first word.
		if w.seen.mark(v.Pointer(), 1) == 0 {
			return
		}
		t := v.Type()
		n := int64(v.Len())
		if size, ok := mapSize(v); ok {
			w.add(size)
		} else {
			w.add(estimatedMapSize(t, n))
		}
		kp, ep := hasPointers(t.Key()), hasPointers(t.Elem())
		if !kp && !ep {
			return
		}
		if n > 0 {
			l := list{it: w.iterate(v)}
			if kp {
				l.key = w.variable(t.Key())
			}
			if ep {
				l.val = w.variable(t.Elem())
			}
			w.addList(l)
		}
	}
}

// weakEntryExtra is what an entry of a WeakMap or WeakSet has beside the
// map's slot (goja's weakMap.set): its key's weak handle and cleanup.
const weakEntryExtra = 16 + 16 + 24

// estimatedMapSize is the size of a Go map of type t with n entries, by
// its length alone: groups of eight slots with a control word, at a load
// of at most 7/8.
func estimatedMapSize(t reflect.Type, n int64) int64 {
	return 48 + (n*8/7+8)*(int64(t.Key().Size()+t.Elem().Size())+1)
}

// pointer counts what pointer v points to, and puts it on the stack if it
// was not counted before and holds pointers.
func (w *walker) pointer(v reflect.Value) {
	if v.IsNil() {
		return
	}
	t := v.Type().Elem()
	if skipType(t) || t.Size() == 0 {
		return
	}
	size := int64(t.Size())
	n := w.counted(v.Pointer(), size)
	if n == 0 {
		return
	}
	ptrs := hasPointers(t)
	if n == size {
		n = allocSize(n, ptrs)
	}
	w.add(n)
	if ptrs {
		w.push(v.Elem())
	}
}

// weakMap counts the entries of a WeakMap or WeakSet, m (its map), from
// vals, a copy of its n values taken under its lock (goja.WeakMapValues):
// the garbage collector's cleanups delete the entries of freed keys on a
// goroutine of their own while the VM does not run, and iterating a map
// as that happens is a fatal error of the Go runtime, not a panic: a
// cell that let go of its keys at the right time ended the process and
// every session in it. The keys are weak pointers, which hold nothing.
func (w *walker) weakMap(m reflect.Value, vals []goja.Value, n int) {
	if m.IsNil() || w.seen.mark(m.Pointer(), 1) == 0 {
		return
	}
	// Not read from the map (mapSize): the collector's cleanups delete
	// from it meanwhile. Its tables are taken as filled to three fifths,
	// about their average (7/16 to 7/8), and each entry's key has a weak
	// handle (16 bytes) and a cleanup (two closures, 16 and 24 bytes).
	t := m.Type()
	w.add(estimatedMapSize(t, int64(n)*35/24) + int64(n)*weakEntryExtra) // 3/5 = 7/8 * 24/35
	if len(vals) > 0 {
		w.addList(list{v: reflect.ValueOf(vals)})
	}
}

// skipType reports types a walk does not enter: shared, static or opaque
// data that no session allocates (collation and Unicode tables, reflection
// metadata, synchronisation).
func skipType(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pkg := t.PkgPath()
	return pkg == "reflect" || pkg == "sync" || pkg == "sync/atomic" || pkg == "unsafe" ||
		strings.HasPrefix(pkg, "golang.org/x/text/") || pkg == "hash/maphash" || pkg == "github.com/go-sourcemap/sourcemap"
}

var typeInfo sync.Map // reflect.Type -> *typeFacts

type typeFacts struct {
	hasPointers bool
	fields      []int // of a struct: the fields that may hold pointers
}

// factsOf returns t's facts, complete: walks on other goroutines (other
// sessions', the memory monitor's) read them as soon as they are stored,
// so they are stored only once made. A type refers to itself only through
// a pointer, slice or map, which hasPointers answers without recursing.
func factsOf(t reflect.Type) *typeFacts {
	if f, ok := typeInfo.Load(t); ok {
		return f.(*typeFacts)
	}
	f := &typeFacts{}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map, reflect.String:
		f.hasPointers = true
	case reflect.Array:
		f.hasPointers = t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			ft := t.Field(i).Type
			if hasPointers(ft) {
				f.fields = append(f.fields, i)
			}
		}
		f.hasPointers = len(f.fields) > 0
	}
	got, _ := typeInfo.LoadOrStore(t, f)
	return got.(*typeFacts)
}

func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map, reflect.String:
		return true
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return false
	case reflect.Struct, reflect.Array:
		return factsOf(t).hasPointers
	}
	return false
}

func pointerFields(t reflect.Type) []int { return factsOf(t).fields }

// vmRoots are what a walk of the instance starts from.
func (in *instance) vmRoots() []any {
	roots := []any{in.vm, in.modules, in.rejections}
	if in.loop != nil {
		roots = append(roots, in.loop.timers)
	}
	return roots
}

// measure returns the session's size: the bytes its VM holds beyond a
// fresh one's. The caller owns the VM (see above).
func (in *instance) measure(budget int64) (size int64, over bool) {
	base := freshSize()
	if budget > 0 {
		budget += base
	}
	n, over, failed := sizeOf(budget, in.vmRoots()...)
	if failed {
		return in.failedWalkSize(budget)
	}
	return max(n-base, 0), over
}

var (
	freshOnce sync.Once
	freshN    int64
)

// walkFault, when set (by tests only), is called as each walk starts: a
// panic from it is a walk failing.
var walkFault func()

// failedWalkSize is what measure returns for a walk that failed: the
// session's size bound, an upper bound of what it holds, judged against
// budget as a walk would be (budget counts a fresh VM; the bound does not).
// over is true only when the bound itself passes the budget: a failed walk
// must not fail a cell that is within its limit.
func (in *instance) failedWalkSize(budget int64) (size int64, over bool) {
	size = in.bound.base + in.bound.grown()
	return size, budget > 0 && size+freshSize() > budget
}

// freshSize is the size of a VM that has run the prelude and nothing else,
// measured once per process on a VM of its own.
func freshSize() int64 {
	freshOnce.Do(func() {
		probe := &instance{memLimit: DefaultMemoryLimit}
		probe.opts.Now = time.Now
		probe.opts.Rand = zeroReader{}
		if err := probe.start(); err == nil {
			freshN, _, _ = sizeOf(0, probe.vmRoots()...)
		}
	})
	return freshN
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// sizeClasses are the sizes the Go allocator rounds small objects up to
// (internal/runtime/gc.SizeClassToSize, Go 1.26).
var sizeClasses = [...]uint16{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// allocSize is the heap an object of n bytes takes: its size class, whole
// pages past the largest, and for one without pointers under 16 bytes a
// 16-byte block of the tiny allocator. Such a block holds several tiny
// objects, but is kept whole while any of them lives: a cell's values
// are made among its garbage, and an array of four million numbers took
// 16 bytes a number, not 8 (the walk counted three quarters of it).
func allocSize(n int64, pointers bool) int64 {
	switch {
	case n <= 0:
		return 0
	case !pointers && n < 16:
		return 16
	case n > int64(sizeClasses[len(sizeClasses)-1]):
		return (n + 8191) &^ 8191
	}
	if n <= 1024 {
		return int64(classBy8[(n+7)>>3])
	}
	return int64(classBy128[(n-1024+127)>>7])
}

// classBy8 and classBy128 are the size class of sizes up to 1024 bytes by
// eighths, and of those above by 128ths (as the runtime finds them).
var classBy8, classBy128 = func() (by8 [1024/8 + 1]uint16, by128 [(32768-1024)/128 + 1]uint16) {
	class := func(n int) uint16 {
		i, _ := slices.BinarySearch(sizeClasses[:], uint16(n))
		return sizeClasses[i]
	}
	for i := range by8 {
		by8[i] = class(i * 8)
	}
	for i := range by128 {
		by128[i] = class(1024 + i*128)
	}
	return
}()

// directIface reports whether an interface holds a value of type t as
// itself rather than a pointer to a box: t is a pointer, or a struct or
// array of one such value.
func directIface(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Struct:
		return t.NumField() == 1 && directIface(t.Field(0).Type)
	case reflect.Array:
		return t.Len() == 1 && directIface(t.Elem())
	}
	return false
}
