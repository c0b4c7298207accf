package js

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dlclark/regexp2/v2"
	"github.com/wasmeval/wasmeval/internal/goja"
)

// Regular expressions.
//
// goja matches a pattern with Go's regexp (RE2, linear time) when it can,
// and with regexp2, a backtracking engine, when the pattern needs
// lookaround or backreferences, or a search starts past the beginning
// (lastIndex of a global or sticky RegExp). A backtracking match can take
// exponential time in native code, where no interrupt lands: one pattern
// ran for minutes past its cell's timeout. regexp2 stops a match after its
// MatchTimeout (regexpMatchTimeout here), and stops one whose backtracking
// stack passes its limit, with an error; but goja drops that error and
// answers "no match", a silently wrong result.
//
// So every regexp2 pattern a guest can match gets our own matching step
// (regexp2's per-pattern hooks, set through its unexported fields): it
// runs regexp2's own interpreter and, when that reports a stopped match,
// throws a RangeError into the cell from right there, the way goja's own
// built-ins throw. Every method sees it the same (exec, test, match,
// matchAll, replace, replaceAll, search, split, and subclasses' own
// exec), and the guest can catch it. The error is thrown into the VM of
// the running cell whose thread (goroutine, off Linux) is matching
// (memory.go's guards know them); a match outside any cell keeps goja's
// behaviour.
//
// Patterns get the hook where they are made or first matched:
//
//   - the prelude's literals once, when the prelude is compiled;
//   - patterns that the RegExp constructor makes (new RegExp, and the
//     copies that split and matchAll make through it);
//   - the receiver of every RegExp.prototype method that matches (a
//     cell's literals, RegExp.prototype.compile's new pattern), before the
//     method runs. goja makes a regexp2 pattern lazily for a pattern it
//     matches with RE2 from the start, when a search starts later: for a
//     global, sticky or unicode RegExp the hooked regexp2 pattern is made
//     up front (cached by source and flags).
//
// The methods are wrapped in place (their Go function is swapped), so
// that RegExp.prototype keeps its own properties and goja its fast paths.
//
// regexp2.DefaultMatchTimeout is process-wide and read when a pattern is
// compiled: it applies to every regexp2 pattern of the process, which only
// goja uses.

const (
	// regexpMatchTimeout is the longest a regexp2 match may run.
	regexpMatchTimeout = time.Second
	// regexpMaxBacktrack is the most slots (8 bytes each) a regexp2
	// match's backtracking stack may hold: regexp2's default, 100 000,
	// fails ordinary matches over a few ten thousand characters.
	regexpMaxBacktrack = 1 << 21
)

func init() {
	regexp2.DefaultMatchTimeout = regexpMatchTimeout
	regexp2.DefaultOptimizationOptions.MaxBacktrackingStackSize = regexpMaxBacktrack
}

// regexp2's interpreter, which a pattern runs when it has no hooks of its
// own.
//
//go:linkname regexp2Execute github.com/dlclark/regexp2/v2.executeDefault
func regexp2Execute(r *regexp2.Runner) error

//go:linkname regexp2FindFirstChar github.com/dlclark/regexp2/v2.findFirstCharDefault
func regexp2FindFirstChar(r *regexp2.Runner) bool

// guardedExecute is a pattern's matching step at one start position.
func guardedExecute(r *regexp2.Runner) error {
	if err := regexp2Execute(r); err != nil {
		return regexpStopped(r, err)
	}
	// The time may have run out just after this position: regexp2 would
	// then stop at its next one, outside this hook.
	if err := r.CheckTimeout(); err != nil {
		return regexpStopped(r, err)
	}
	return nil
}

// guardedFindFirstChar finds the next start position.
func guardedFindFirstChar(r *regexp2.Runner) bool {
	found := regexp2FindFirstChar(r)
	if found {
		if err := r.CheckTimeout(); err != nil {
			_ = regexpStopped(r, err) // regexp2 returns err next
		}
	}
	return found
}

// regexpStopped throws a RangeError into the running cell for a match
// regexp2 stopped; with no cell running on this thread it returns err.
func regexpStopped(r *regexp2.Runner, err error) error {
	in := runningInstance()
	if in == nil {
		return err
	}
	src := "?"
	if re := runnerRegexp(r); re != nil {
		src = re.String()
	}
	if len(src) > 60 {
		src = src[:57] + "..."
	}
	if errors.Is(err, regexp2.ErrBacktrackingStackLimit) {
		in.throwRange(fmt.Sprintf("regular expression /%s/ needs more backtracking than the sandbox allows; simplify it", src))
	}
	in.throwRange(fmt.Sprintf("regular expression /%s/ took longer than %v to match and was stopped; simplify it", src, regexpMatchTimeout))
	return err
}

// runnerRegexp returns the pattern a runner matches, or nil.
func runnerRegexp(r *regexp2.Runner) (re *regexp2.Regexp) {
	defer func() {
		if recover() != nil {
			re = nil
		}
	}()
	f := reflect.ValueOf(r).Elem().FieldByName("re")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*regexp2.Regexp]() {
		return nil
	}
	return *(**regexp2.Regexp)(unsafe.Pointer(f.UnsafeAddr()))
}

// runningInstance returns the instance whose cell runs on the calling
// goroutine's thread, or nil.
func runningInstance() *instance {
	tid := int64(threadID())
	var goid int64
	if tid == 0 {
		goid = goroutineID()
	}
	monitor.mu.Lock()
	defer monitor.mu.Unlock()
	for g := range monitor.cells {
		if tid != 0 && g.tid.Load() == tid || tid == 0 && g.goid == goid {
			return g.in
		}
	}
	return nil
}

// rxLayout is where goja and regexp2 keep what hookPattern needs, found
// once by name; ok is false if their layout has changed, and then no
// pattern is hooked (matches stay as goja has them).
var rxLayout struct {
	once sync.Once
	ok   bool
	// goja.Object.self; regexpObject.pattern; regexpPattern's fields.
	self, pattern                               []int
	src, re2, wrapper2, global, sticky, unicode []int
	multiline, dotAll, ignoreCase               []int
	regexpObject, wrapper2Type                  reflect.Type
	wrapperRx                                   []int
	execute, findFirstChar                      []int
	executeType, findFirstCharType              reflect.Type
	executeHook, findFirstCharHook              reflect.Value
	executeHookPtr                              uintptr
}

func initRxLayout() {
	l := &rxLayout
	defer func() {
		if recover() != nil {
			l.ok = false
		}
	}()
	idx := func(t reflect.Type, name string) []int {
		f, ok := t.FieldByName(name)
		if !ok {
			panic("no field " + name)
		}
		return f.Index
	}
	objT := reflect.TypeFor[goja.Object]()
	l.self = idx(objT, "self")
	// A RegExp object's self, to learn regexpObject's type.
	vm := goja.New()
	rx := vm.Intrinsic("RegExp")
	obj, err := vm.New(rx, vm.ToValue("a"))
	if err != nil {
		return
	}
	self := reflect.ValueOf(obj).Elem().FieldByIndex(l.self).Elem()
	if self.Kind() != reflect.Pointer || self.Elem().Type().Name() != "regexpObject" {
		return
	}
	l.regexpObject = self.Type()
	l.pattern = idx(self.Elem().Type(), "pattern")
	patT := self.Elem().FieldByIndex(l.pattern).Type().Elem()
	l.src = idx(patT, "src")
	l.re2 = idx(patT, "regexpWrapper")
	l.wrapper2 = idx(patT, "regexp2Wrapper")
	l.global = idx(patT, "global")
	l.sticky = idx(patT, "sticky")
	l.unicode = idx(patT, "unicode")
	l.multiline = idx(patT, "multiline")
	l.dotAll = idx(patT, "dotAll")
	l.ignoreCase = idx(patT, "ignoreCase")
	l.wrapper2Type = patT.FieldByIndex(l.wrapper2).Type
	l.wrapperRx = idx(l.wrapper2Type.Elem(), "rx")
	if l.wrapper2Type.Elem().FieldByIndex(l.wrapperRx).Type != reflect.TypeFor[*regexp2.Regexp]() {
		return
	}
	reT := reflect.TypeFor[regexp2.Regexp]()
	l.execute = idx(reT, "execute")
	l.findFirstChar = idx(reT, "findFirstChar")
	l.executeHook = reflect.ValueOf(guardedExecute)
	l.findFirstCharHook = reflect.ValueOf(guardedFindFirstChar)
	if reT.FieldByIndex(l.execute).Type != l.executeHook.Type() ||
		reT.FieldByIndex(l.findFirstChar).Type != l.findFirstCharHook.Type() {
		return
	}
	l.ok = true
}

// settable returns a settable view of v's field at index.
func settable(v reflect.Value, index []int) reflect.Value {
	f := v.FieldByIndex(index)
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// hookRegexp2 gives a regexp2 pattern our matching step, unless it has a
// step of its own (a generated engine).
func hookRegexp2(re *regexp2.Regexp) {
	l := &rxLayout
	v := reflect.ValueOf(re).Elem()
	exec := settable(v, l.execute)
	if !exec.IsNil() {
		return // hooked already
	}
	if ff := settable(v, l.findFirstChar); ff.IsNil() {
		ff.Set(l.findFirstCharHook)
	}
	exec.Set(l.executeHook)
}

// hookedPatterns are regexp2 patterns made up front (see above), by
// source and flags; regexp2 patterns are safe for concurrent use. The
// cache is the process's, kept for good and counted in no session's
// memory: it keeps short patterns only, up to a total (it kept every
// pattern up to 4096: 200 of 20 KB held 23 MiB after their session).
var hookedPatterns sync.Map

const (
	maxHookedPatterns = 4096
	// maxHookedSource is the longest pattern kept; maxHookedBytes is all
	// the kept patterns' bytes (a compiled pattern takes about 6 bytes a
	// byte of its source).
	maxHookedSource = 1 << 10
	maxHookedBytes  = 1 << 20
)

var hookedCount, hookedBytes atomic.Int64

type patternKey struct {
	src   string
	flags regexp2.RegexOptions
}

// hookValue hooks v's regexp2 pattern if v is a RegExp; eager makes one
// for a pattern matched with RE2 that could later need one, announcing
// what compiling it takes to charge first (the VM's allocation guard).
func hookValue(v goja.Value, eager bool, charge func(int64)) {
	obj, ok := v.(*goja.Object)
	if !ok || !rxLayout.ok {
		return
	}
	l := &rxLayout
	self := reflect.ValueOf(obj).Elem().FieldByIndex(l.self)
	if self.IsNil() {
		return
	}
	self = self.Elem()
	if self.Type() != l.regexpObject {
		return
	}
	pat := self.Elem().FieldByIndex(l.pattern)
	if pat.IsNil() {
		return
	}
	pat = pat.Elem()
	w2 := pat.FieldByIndex(l.wrapper2)
	if !w2.IsNil() {
		if rx := w2.Elem().FieldByIndex(l.wrapperRx); !rx.IsNil() {
			hookRegexp2(*(**regexp2.Regexp)(unsafe.Pointer(rx.UnsafeAddr())))
		}
		return
	}
	if !eager || pat.FieldByIndex(l.re2).IsNil() {
		return
	}
	unicode := pat.FieldByIndex(l.unicode).Bool()
	if !pat.FieldByIndex(l.global).Bool() && !pat.FieldByIndex(l.sticky).Bool() && !unicode {
		return
	}
	// As goja's compileRegexp2 compiles it.
	opts := regexp2.ECMAScript
	if pat.FieldByIndex(l.multiline).Bool() {
		opts |= regexp2.Multiline
	}
	if pat.FieldByIndex(l.dotAll).Bool() {
		opts |= regexp2.Singleline
	}
	if pat.FieldByIndex(l.ignoreCase).Bool() {
		opts |= regexp2.IgnoreCase
	}
	if unicode {
		opts |= regexp2.Unicode
	}
	key := patternKey{pat.FieldByIndex(l.src).String(), opts}
	var re *regexp2.Regexp
	if cached, ok := hookedPatterns.Load(key); ok {
		re = cached.(*regexp2.Regexp)
	} else {
		var err error
		charge(goja.RegExp2Cost(key.src, opts&regexp2.IgnoreCase != 0))
		if re, err = regexp2.Compile(key.src, opts); err != nil {
			return // goja would fail the same way, later
		}
		hookRegexp2(re)
		if len(key.src) <= maxHookedSource && hookedCount.Add(1) <= maxHookedPatterns &&
			hookedBytes.Add(int64(len(key.src))) <= maxHookedBytes {
			hookedPatterns.Store(key, re)
		}
	}
	w := reflect.New(l.wrapper2Type.Elem())
	settable(w.Elem(), l.wrapperRx).Set(reflect.ValueOf(re))
	settable(pat, l.wrapper2).Set(w)
}

// hookPrograms hooks the regexp2 patterns of the regular expression
// literals in programs that many VMs share (the prelude's), once, before
// any of them runs: a hook set later could race with a match elsewhere.
func hookPrograms(progs []*goja.Program) {
	seen := make(map[uintptr]bool)
	var walk func(v reflect.Value, depth int)
	walk = func(v reflect.Value, depth int) {
		if depth > 64 {
			return
		}
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			if v.Type() == reflect.TypeFor[*regexp2.Regexp]() {
				hookRegexp2((*regexp2.Regexp)(v.UnsafePointer()))
				return
			}
			walk(v.Elem(), depth+1)
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem(), depth+1)
			}
		case reflect.Struct:
			// Only goja's own structs hold programs and patterns.
			if v.Type().PkgPath() != "github.com/wasmeval/wasmeval/internal/goja" {
				return
			}
			for i := range v.NumField() {
				walk(v.Field(i), depth+1)
			}
		case reflect.Slice:
			if v.Type().Elem().Kind() == reflect.Interface || v.Type().Elem().Kind() == reflect.Pointer {
				for i := range v.Len() {
					walk(v.Index(i), depth+1)
				}
			}
		}
	}
	for _, p := range progs {
		walk(reflect.ValueOf(p), 0)
	}
}

var preludeHooked sync.Once

// guardRegExp hooks the RegExp constructor and the matching methods of
// RegExp.prototype; see above.
func (in *instance) guardRegExp() error {
	rxLayout.once.Do(initRxLayout)
	if !rxLayout.ok {
		return nil // goja changed: matches keep goja's behaviour
	}
	preludeHooked.Do(func() {
		progs, _ := compilePrelude()
		hookPrograms(progs)
	})
	ctor := in.vm.Intrinsic("RegExp")
	proto, ok := ctor.Get("prototype").(*goja.Object)
	if !ok {
		return fmt.Errorf("js: RegExp.prototype is not an object")
	}
	if err := swapNative(ctor, func(orig func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			v := orig(call)
			hookValue(v, false, nil)
			return v
		}
	}, func(orig func([]goja.Value, *goja.Object) *goja.Object) func([]goja.Value, *goja.Object) *goja.Object {
		return func(args []goja.Value, newTarget *goja.Object) *goja.Object {
			o := orig(args, newTarget)
			hookValue(o, false, nil)
			return o
		}
	}); err != nil {
		return err
	}
	before := func(orig func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			hookValue(call.This, true, in.vm.ChargeAlloc)
			return orig(call)
		}
	}
	after := func(orig func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			v := orig(call)
			hookValue(call.This, false, nil)
			return v
		}
	}
	methods := []struct {
		name string
		sym  *goja.Symbol
		wrap func(func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value
	}{
		{"exec", nil, before},
		{"test", nil, before},
		{"compile", nil, after},
		{"[Symbol.match]", goja.SymMatch, before},
		{"[Symbol.matchAll]", goja.SymMatchAll, before},
		{"[Symbol.replace]", goja.SymReplace, before},
		{"[Symbol.search]", goja.SymSearch, before},
		{"[Symbol.split]", goja.SymSplit, before},
	}
	for _, m := range methods {
		var fn goja.Value
		if m.sym != nil {
			fn = proto.GetSymbol(m.sym)
		} else {
			fn = proto.Get(m.name)
		}
		obj, ok := fn.(*goja.Object)
		if !ok {
			return fmt.Errorf("js: RegExp.prototype.%s is not a function", m.name)
		}
		if err := swapNative(obj, m.wrap, nil); err != nil {
			return fmt.Errorf("js: RegExp.prototype.%s: %w", m.name, err)
		}
	}
	return nil
}

// swapNative replaces, in place, the Go functions behind a goja native
// function object: its call, and its construction when construct is not
// nil. The object keeps its identity, name and length.
func swapNative(fn *goja.Object, call func(func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value,
	construct func(func([]goja.Value, *goja.Object) *goja.Object) func([]goja.Value, *goja.Object) *goja.Object) (err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("js: cannot wrap a native function: %v", x)
		}
	}()
	self := reflect.ValueOf(fn).Elem().FieldByIndex(rxLayout.self)
	if self.IsNil() || self.Elem().Kind() != reflect.Pointer || self.Elem().Elem().Type().Name() != "nativeFuncObject" {
		return fmt.Errorf("js: not a native function")
	}
	nf := self.Elem().Elem()
	f, err := field(nf, "f")
	if err != nil {
		return err
	}
	orig, ok := f.Interface().(func(goja.FunctionCall) goja.Value)
	if !ok || orig == nil {
		return fmt.Errorf("js: unexpected native function type %v", f.Type())
	}
	f.Set(reflect.ValueOf(call(orig)))
	if construct != nil {
		c, err := field(nf, "construct")
		if err != nil {
			return err
		}
		origC, ok := c.Interface().(func([]goja.Value, *goja.Object) *goja.Object)
		if !ok || origC == nil {
			return fmt.Errorf("js: unexpected native constructor type %v", c.Type())
		}
		c.Set(reflect.ValueOf(construct(origC)))
	}
	return nil
}
