package js

import (
	"fmt"
	"reflect"

	"github.com/wasmeval/wasmeval/internal/goja"
)

// BigInt stores.
//
// A text stored as a BigInt (DataView's setBigInt64 and setBigUint64, a
// BigInt64Array's or BigUint64Array's fill and set) is parsed by goja in
// native code, in time quadratic in its length: a million digits took
// seconds, and no interrupt lands meanwhile. These methods are wrapped so
// that a text longer than BigInt(text) parses (guards.js, 100,000
// characters) is refused with the same RangeError first. An object is
// turned into a primitive once, by the wrapper, as the method would
// (valueOf may return a long text).
//
// The other doors a text comes through (constructors, from, of, with,
// map, Object.assign, Reflect.set, Array.prototype's methods called on a
// BigInt array) are guarded in bigguard.go, which also says what stays
// open.

// maxBigIntTextChars is the longest text a BigInt is parsed from: as many
// characters as guards.js's BigInt(text) takes.
const maxBigIntTextChars = maxBigIntLiteralDigits

// guardBigIntStores wraps the methods above.
func (in *instance) guardBigIntStores() error {
	dv, ok := in.vm.Get("DataView").(*goja.Object)
	if !ok {
		return fmt.Errorf("js: no DataView")
	}
	dvProto := dv.Get("prototype").(*goja.Object)
	for _, name := range []string{"setBigInt64", "setBigUint64"} {
		if err := in.wrapMethod(dvProto, name, func(call *goja.FunctionCall) {
			if len(call.Arguments) > 1 {
				call.Arguments[1] = in.bigIntOperand(call.Arguments[1])
			}
		}); err != nil {
			return err
		}
	}
	ab, _ := in.vm.Get("ArrayBuffer").(*goja.Object)
	if ab == nil {
		return fmt.Errorf("js: no ArrayBuffer")
	}
	isView, ok := goja.AssertFunction(ab.Get("isView"))
	if !ok {
		return fmt.Errorf("js: no ArrayBuffer.isView")
	}
	in.isView = func(obj *goja.Object) bool {
		r, err := isView(goja.Undefined(), obj)
		return err == nil && r.ToBoolean()
	}
	ta, ok := in.vm.Get("Int8Array").(*goja.Object)
	if !ok {
		return fmt.Errorf("js: no Int8Array")
	}
	taProto, ok := ta.Prototype().Get("prototype").(*goja.Object) // %TypedArray%.prototype
	if !ok {
		return fmt.Errorf("js: no %%TypedArray%%.prototype")
	}
	if err := in.wrapMethod(taProto, "fill", func(call *goja.FunctionCall) {
		if isBigIntArray(call.This) && len(call.Arguments) > 0 {
			call.Arguments[0] = in.bigIntOperand(call.Arguments[0])
		}
	}); err != nil {
		return err
	}
	if err := in.wrapMethod(taProto, "with", func(call *goja.FunctionCall) {
		if isBigIntArray(call.This) && len(call.Arguments) > 1 {
			call.Arguments[1] = in.bigIntOperand(call.Arguments[1])
		}
	}); err != nil {
		return err
	}
	// Array.prototype.fill called on a BigInt array (or a Proxy of one).
	// (push, unshift and splice store natively too, but push is too hot
	// to wrap; bigguard.go lists them with what stays open.)
	arrayProto := in.vm.Get("Array").(*goja.Object).Get("prototype").(*goja.Object)
	if err := in.wrapMethod(arrayProto, "fill", func(call *goja.FunctionCall) {
		if isBigIntTarget(call.This) && len(call.Arguments) > 0 {
			call.Arguments[0] = in.bigIntOperand(call.Arguments[0])
		}
	}); err != nil {
		return err
	}
	if err := in.guardBigIntDoors(); err != nil { // bigguard.go
		return err
	}
	return in.wrapMethod(taProto, "set", func(call *goja.FunctionCall) {
		if !isBigIntArray(call.This) || len(call.Arguments) == 0 {
			return
		}
		src, ok := call.Arguments[0].(*goja.Object)
		if !ok || in.isView(src) {
			return // a typed array holds no texts; a primitive is an empty list
		}
		// The elements as primitives, in a list of the host's: read and
		// converted once each, in order.
		n := src.Get("length").ToInteger()
		if n <= 0 {
			return
		}
		if n > maxBigIntElements {
			return // past any BigInt array's length: set throws a RangeError
		}
		list := make([]any, n)
		for i := range n {
			list[i] = in.bigIntOperand(src.Get(fmt.Sprint(i)))
		}
		call.Arguments[0] = in.vm.NewArray(list...)
	})
}

// maxBigIntElements bounds the list set makes: a BigInt64Array of a
// session holds fewer elements than its memory allows.
const maxBigIntElements = 1 << 28

// wrapMethod replaces obj[name], a native method, by one that lets check
// see (and change) a call's arguments first. The wrapper keeps the
// method's name and length.
func (in *instance) wrapMethod(obj *goja.Object, name string, check func(call *goja.FunctionCall)) error {
	orig, ok := goja.AssertFunction(obj.Get(name))
	if !ok {
		return fmt.Errorf("js: %s is not a function", name)
	}
	length := obj.Get(name).(*goja.Object).Get("length")
	wrapper := in.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		args := append([]goja.Value(nil), call.Arguments...)
		call.Arguments = args
		check(&call)
		v, err := orig(call.This, call.Arguments...)
		if err != nil {
			in.rethrow(err)
		}
		return v
	}).(*goja.Object)
	_ = wrapper.DefineDataProperty("name", in.vm.ToValue(name), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	_ = wrapper.DefineDataProperty("length", length, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	return obj.DefineDataProperty(name, wrapper, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// bigIntOperand returns v as ToBigInt would see it: a primitive (an
// object's ToPrimitive with hint number), refusing a text longer than
// maxBigIntTextChars with a RangeError.
func (in *instance) bigIntOperand(v goja.Value) goja.Value {
	if obj, ok := v.(*goja.Object); ok {
		v = in.toPrimitiveNumber(obj)
	}
	if s, ok := v.(goja.String); ok && s.Length() > maxBigIntTextChars {
		in.throwRange(fmt.Sprintf("BigInt: the text has %d characters, more than the %d the sandbox parses", s.Length(), maxBigIntTextChars))
	}
	return v
}

// toPrimitiveNumber is ToPrimitive(obj, number): Symbol.toPrimitive, or
// valueOf and then toString.
func (in *instance) toPrimitiveNumber(obj *goja.Object) goja.Value {
	return in.toPrimitive(obj, "number")
}

// toPrimitiveString is ToPrimitive(obj, string): Symbol.toPrimitive, or
// toString and then valueOf.
func (in *instance) toPrimitiveString(obj *goja.Object) goja.Value {
	return in.toPrimitive(obj, "string")
}

func (in *instance) toPrimitive(obj *goja.Object, hint string) goja.Value {
	call := func(f goja.Value, args ...goja.Value) (goja.Value, bool) {
		fn, ok := goja.AssertFunction(f)
		if !ok {
			return nil, false
		}
		r, err := fn(obj, args...)
		if err != nil {
			in.rethrow(err)
		}
		return r, true
	}
	if exotic := obj.GetSymbol(goja.SymToPrimitive); exotic != nil && !goja.IsUndefined(exotic) && !goja.IsNull(exotic) {
		r, ok := call(exotic, in.vm.ToValue(hint))
		if !ok {
			panic(in.vm.NewTypeError("Symbol.toPrimitive is not a function"))
		}
		if _, isObj := r.(*goja.Object); isObj {
			panic(in.vm.NewTypeError("Cannot convert object to primitive value"))
		}
		return r
	}
	order := []string{"valueOf", "toString"}
	if hint == "string" {
		order[0], order[1] = order[1], order[0]
	}
	for _, name := range order {
		if r, ok := call(obj.Get(name)); ok {
			if _, isObj := r.(*goja.Object); !isObj {
				return r
			}
		}
	}
	panic(in.vm.NewTypeError("Cannot convert object to primitive value"))
}

var (
	int64sType  = reflect.TypeFor[[]int64]()
	uint64sType = reflect.TypeFor[[]uint64]()
)

// isBigIntArray reports whether v is a BigInt64Array or BigUint64Array:
// goja exports those, and only those, as lists of int64 or uint64.
func isBigIntArray(v goja.Value) bool {
	obj, ok := v.(*goja.Object)
	if !ok {
		return false
	}
	t := obj.ExportType()
	return t == int64sType || t == uint64sType
}
