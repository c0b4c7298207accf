package js

import (
	"fmt"
	"reflect"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
)

// Regular expressions.
//
// goja matches a pattern with Go's regexp (RE2, linear time) when it can,
// and with regexp2, a backtracking engine, when the pattern needs
// lookaround or backreferences, or a search starts past the beginning
// (lastIndex of a global or sticky RegExp). A backtracking match can take
// exponential time in native code, where no interrupt lands: one pattern
// ran for minutes past its cell's timeout. regexp2 stops a match after its
// MatchTimeout; goja does not see the error and takes the stopped match as
// no match. So each regexp2 match here stops after regexpMatchTimeout:
//
//   - when the cell's own time is up, the VM's interrupt ends the cell as
//     soon as the match returns: at most regexpMatchTimeout late;
//   - otherwise RegExp.prototype.test, [Symbol.match] and [Symbol.search]
//     (so also String.prototype.match and search) see a regexp2 match that
//     found nothing after that long, which only a stopped match does, and
//     throw a RangeError instead of answering no match. exec,
//     [Symbol.replace], [Symbol.split] and [Symbol.matchAll] cannot tell
//     (their time includes the callbacks they call): a stopped match there
//     counts as no match. exec is not wrapped because goja keeps its fast
//     paths only while RegExp.prototype.exec is its own.
//
// regexp2.DefaultMatchTimeout is process-wide and read when a pattern is
// compiled: it applies to every regexp2 pattern of the process, which only
// goja uses.

// regexpMatchTimeout is the longest a regexp2 match may run.
const regexpMatchTimeout = time.Second

func init() {
	regexp2.DefaultMatchTimeout = regexpMatchTimeout
}

// guardRegExp wraps the RegExp methods that can report a stopped match.
func (in *instance) guardRegExp() error {
	ctor, ok := in.vm.Get("RegExp").(*goja.Object)
	if !ok {
		return fmt.Errorf("js: RegExp is not an object")
	}
	proto, ok := ctor.Get("prototype").(*goja.Object)
	if !ok {
		return fmt.Errorf("js: RegExp.prototype is not an object")
	}
	type method struct {
		name    string
		sym     *goja.Symbol
		noMatch func(goja.Value) bool
	}
	isFalse := func(v goja.Value) bool { return !v.ToBoolean() }
	isNull := func(v goja.Value) bool { return goja.IsNull(v) }
	isMinusOne := func(v goja.Value) bool { return v.ToInteger() == -1 }
	for _, m := range []method{
		{"test", nil, isFalse},
		{"[Symbol.match]", goja.SymMatch, isNull},
		{"[Symbol.search]", goja.SymSearch, isMinusOne},
	} {
		var orig goja.Value
		if m.sym != nil {
			orig = proto.GetSymbol(m.sym)
		} else {
			orig = proto.Get(m.name)
		}
		call, ok := goja.AssertFunction(orig)
		if !ok {
			return fmt.Errorf("js: RegExp.prototype.%s is not a function", m.name)
		}
		noMatch := m.noMatch
		wrapped := in.vm.ToValue(func(fc goja.FunctionCall) goja.Value {
			start := time.Now()
			v, err := call(fc.This, fc.Arguments...)
			if err != nil {
				in.rethrow(err)
			}
			if time.Since(start) >= regexpMatchTimeout && noMatch(v) && usesRegexp2(fc.This) {
				in.throwRange(fmt.Sprintf("regular expression %s took more than %v to match and was stopped (catastrophic backtracking?)",
					describeRegExp(fc.This), regexpMatchTimeout))
			}
			return v
		}).(*goja.Object)
		length := orig.(*goja.Object).Get("length")
		_ = wrapped.DefineDataProperty("name", in.vm.ToValue(m.name), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		_ = wrapped.DefineDataProperty("length", length, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		var err error
		if m.sym != nil {
			err = proto.DefineDataPropertySymbol(m.sym, wrapped, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		} else {
			err = proto.DefineDataProperty(m.name, wrapped, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		}
		if err != nil {
			return fmt.Errorf("js: wrap RegExp.prototype.%s: %w", m.name, err)
		}
	}
	return nil
}

// usesRegexp2 reports whether v is a RegExp that goja has matched with
// regexp2. It reads goja's unexported fields (Object.self, a
// *regexpObject, its pattern's regexp2Wrapper); should goja's layout
// change, it answers false and a stopped match counts as no match.
func usesRegexp2(v goja.Value) (uses bool) {
	defer func() {
		if recover() != nil {
			uses = false
		}
	}()
	obj, ok := v.(*goja.Object)
	if !ok {
		return false
	}
	self := reflect.ValueOf(obj).Elem().FieldByName("self")
	if !self.IsValid() || self.IsNil() {
		return false
	}
	rx := self.Elem()
	if rx.Kind() != reflect.Pointer || rx.Elem().Type().Name() != "regexpObject" {
		return false
	}
	pattern := rx.Elem().FieldByName("pattern")
	if !pattern.IsValid() || pattern.IsNil() {
		return false
	}
	w := pattern.Elem().FieldByName("regexp2Wrapper")
	return w.IsValid() && !w.IsNil()
}

// describeRegExp shows a RegExp as /source/flags, shortened, without
// running any of the guest's code.
func describeRegExp(v goja.Value) string {
	obj, ok := v.(*goja.Object)
	if !ok {
		return "?"
	}
	self := reflect.ValueOf(obj).Elem().FieldByName("self")
	if !self.IsValid() || self.IsNil() || self.Elem().Kind() != reflect.Pointer {
		return "?"
	}
	src := self.Elem().Elem().FieldByName("pattern")
	if !src.IsValid() || src.IsNil() {
		return "?"
	}
	s := src.Elem().FieldByName("src")
	if !s.IsValid() || s.Kind() != reflect.String {
		return "?"
	}
	text := s.String()
	if len(text) > 60 {
		text = text[:57] + "..."
	}
	return "/" + text + "/"
}
