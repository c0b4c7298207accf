package js

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/wasmeval/wasmeval/internal/goja"
)

// BigInt elements that come through goja's other doors.
//
// bigstore.go guards the methods whose only job is to store a BigInt. A
// long text also reaches goja's ToBigInt (quadratic in its length, in
// native code, with no interrupt: a million digits take 3 s, ten million
// 5 min) through the BigInt arrays' constructors (a list or an iterable of
// texts), %TypedArray%.from and of, with and map, and through the generic
// functions that store into any object: Object.assign, Object.defineProperty
// and defineProperties, Reflect.set and defineProperty, and Array.prototype's
// fill, push, unshift and splice called on a BigInt array. Each of these
// is wrapped here: when the array that receives the values is a BigInt
// array (or a Proxy of one, or a constructor that may make one), each value
// is turned into a primitive once (as ToBigInt would) and a text longer
// than maxBigIntTextChars is refused with the RangeError of BigInt(text).
//
// # Not covered (issue 9)
//
// Syntax stores convert in goja's own VM code, out of every wrapper's
// sight: `ta[i] = text` (and `ta[i] += text`, destructuring into ta[i],
// `for (ta[i] of ...)`, a store through a Proxy whose target is a BigInt
// array), and a species constructor that is a BigInt array's, which goja's
// Array.prototype.map/filter/slice/splice/concat/flat and a typed array's
// map fill natively. Closing them needs goja's toBigInt to refuse a long
// text (or a rewrite of every computed member store, which would slow
// every `a[i] = v` in every cell).

// bigIntGuardsJS wraps the doors above. It runs once, after the prelude,
// with the host's checks; it captures every built-in it uses, so that a
// cell that replaces them later changes nothing here.
const bigIntGuardsJS = `(function (isBig, plain, check, isIndex) {
  'use strict';
  const checkAt = (k, v) => (typeof k === 'string' && isIndex(k) ? check(v) : v);
  const apply = Reflect.apply, construct = Reflect.construct, ownKeys = Reflect.ownKeys;
  const getOwn = Reflect.getOwnPropertyDescriptor, define = Reflect.defineProperty;
  const getProto = Reflect.getPrototypeOf, setProto = Reflect.setPrototypeOf, reflectGet = Reflect.get;
  const create = Object.create, iteratorKey = Symbol.iterator;
  const NativeProxy = Proxy, NativeTypeError = TypeError;
  const isObject = (v) => (typeof v === 'object' && v !== null) || typeof v === 'function';
  function replace(obj, name, f) {
    const original = obj[name];
    define(f, 'name', { value: name, configurable: true });
    define(f, 'length', { value: original.length, configurable: true });
    define(obj, name, { value: f, writable: true, configurable: true, enumerable: false });
    return original;
  }

  // A view of a list or iterable whose elements come out checked: the
  // BigInt arrays' constructors read it as they would the original.
  function checkedItems(items) {
    return new NativeProxy(items, {
      get(t, k) {
        const v = reflectGet(t, k);
        if (k === iteratorKey) {
          if (v === undefined || v === null) return v;
          return function () {
            const it = apply(v, t, []);
            if (!isObject(it)) throw new NativeTypeError('Result of the Symbol.iterator method is not an object');
            const next = it.next;
            return {
              next() {
                const r = apply(next, it, []);
                if (!isObject(r)) throw new NativeTypeError('Iterator result ' + typeof r + ' is not an object');
                return r.done ? r : { done: false, value: check(r.value) };
              },
              return(x) {
                const f = it.return;
                return f === undefined || f === null ? { done: true, value: x } : apply(f, it, [x]);
              },
            };
          };
        }
        return k === 'length' ? v : check(v);
      },
    });
  }
  const numeric = [];
  for (const name of ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array',
    'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array']) {
    if (typeof globalThis[name] === 'function') numeric[numeric.length] = globalThis[name];
  }
  // isNumeric: C makes arrays of numbers (a constructor of unknown kind
  // may make a BigInt array).
  const isNumeric = (C) => {
    for (let i = 0; i < numeric.length; i++) if (numeric[i] === C) return true;
    return false;
  };
  for (const name of ['BigInt64Array', 'BigUint64Array']) {
    const C = globalThis[name];
    if (typeof C !== 'function') continue;
    const W = {
      [name]: function (...args) {
        if (new.target === undefined) throw new NativeTypeError('Constructor ' + name + " requires 'new'");
        if (plain(args[0])) args[0] = checkedItems(args[0]);
        return construct(C, args, new.target === W ? C : new.target);
      },
    }[name];
    setProto(W, getProto(C));
    const keys = ownKeys(C);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      if (k === 'prototype' || k === 'name' || k === 'length') {
        define(W, k, { value: C[k], writable: false, enumerable: false, configurable: k !== 'prototype' });
      } else {
        define(W, k, getOwn(C, k));
      }
    }
    define(C.prototype, 'constructor', { value: W, writable: true, configurable: true, enumerable: false });
    define(globalThis, name, { value: W, writable: true, configurable: true, enumerable: false });
  }

  const TypedArray = getProto(Int8Array);
  const from = TypedArray.from, of = TypedArray.of;
  replace(TypedArray, 'from', function (items, mapFn, thisArg) {
    if (isNumeric(this)) return apply(from, this, arguments);
    if (mapFn !== undefined && typeof mapFn !== 'function') throw new NativeTypeError('The mapping function is not a function');
    return apply(from, this, [items, function (v, i) {
      return check(mapFn === undefined ? v : apply(mapFn, thisArg, [v, i]));
    }]);
  });
  replace(TypedArray, 'of', function () {
    if (!isNumeric(this)) for (let i = 0; i < arguments.length; i++) arguments[i] = check(arguments[i]);
    return apply(of, this, arguments);
  });
  const map = TypedArray.prototype.map;
  replace(TypedArray.prototype, 'map', function (fn, thisArg) {
    if (!isBig(this) || typeof fn !== 'function') return apply(map, this, arguments);
    return apply(map, this, [function (v, i, a) { return check(apply(fn, thisArg, [v, i, a])); }]);
  });

  // A descriptor's fields read once, in ToPropertyDescriptor's order, with
  // its value checked.
  const fields = ['enumerable', 'configurable', 'value', 'writable', 'get', 'set'];
  function checkedDescriptor(desc) {
    if (!isObject(desc)) return desc;
    const d = create(null);
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i];
      if (f in desc) d[f] = f === 'value' ? check(desc[f]) : desc[f];
    }
    return d;
  }
  // The helpers of the Go wrappers (guardBigIntStorers): each source of
  // Object.assign, and Object.defineProperties's descriptors, read once
  // into an object of their own with the elements' values checked.
  function snapshot(s) {
    if (!isObject(s)) return s; // a text's elements are its characters
    const snap = create(null);
    const keys = ownKeys(s);
    for (let i = 0; i < keys.length; i++) {
      const d = getOwn(s, keys[i]);
      if (d === undefined || !d.enumerable) continue;
      define(snap, keys[i], { value: checkAt(keys[i], s[keys[i]]), writable: true, enumerable: true, configurable: true });
    }
    return snap;
  }
  function snapshotDescriptors(props) {
    if (!isObject(props)) return props;
    const snap = create(null);
    const keys = ownKeys(props);
    for (let i = 0; i < keys.length; i++) {
      const d = getOwn(props, keys[i]);
      if (d === undefined || !d.enumerable) continue;
      const desc = props[keys[i]];
      define(snap, keys[i], { value: typeof keys[i] === 'string' && isIndex(keys[i]) ? checkedDescriptor(desc) : desc, enumerable: true, configurable: true });
    }
    return snap;
  }
  return { snapshot, snapshotDescriptors, checkedDescriptor };
})`

// bigIntGuardsProgram is bigIntGuardsJS compiled, once per process; its
// frames are the prelude's, which stack traces leave out.
var bigIntGuardsProgram = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile(preludeName+"bigguard.js", bigIntGuardsJS, true)
})

// guardBigIntDoors runs bigIntGuardsJS.
func (in *instance) guardBigIntDoors() error {
	prg, err := bigIntGuardsProgram()
	if err != nil {
		return fmt.Errorf("js: BigInt guards: %w", err)
	}
	v, err := in.vm.RunProgram(prg)
	if err != nil {
		return fmt.Errorf("js: BigInt guards: %w", err)
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return fmt.Errorf("js: BigInt guards: not a function")
	}
	vm := in.vm
	isBig := func(call goja.FunctionCall) goja.Value { return vm.ToValue(isBigIntTarget(call.Argument(0))) }
	plain := func(call goja.FunctionCall) goja.Value {
		obj, ok := call.Argument(0).(*goja.Object)
		return vm.ToValue(ok && obj.ExportType() != arrayBufferType && !in.isView(obj))
	}
	check := func(call goja.FunctionCall) goja.Value { return in.bigIntOperand(call.Argument(0)) }
	isIndex := func(call goja.FunctionCall) goja.Value { return vm.ToValue(isNumericKey(call.Argument(0))) }
	r, err := fn(goja.Undefined(), vm.ToValue(isBig), vm.ToValue(plain), vm.ToValue(check), vm.ToValue(isIndex))
	if err != nil {
		return fmt.Errorf("js: BigInt guards: %w", err)
	}
	helpers := r.(*goja.Object)
	helper := func(name string) func(goja.Value) goja.Value {
		f, _ := goja.AssertFunction(helpers.Get(name))
		return func(v goja.Value) goja.Value {
			r, err := f(goja.Undefined(), v)
			if err != nil {
				in.rethrow(err)
			}
			return r
		}
	}
	return in.guardBigIntStorers(helper("snapshot"), helper("snapshotDescriptors"), helper("checkedDescriptor"))
}

// guardBigIntStorers wraps the generic functions that store into any
// object, in Go: they are called often, and a check in Go costs a call
// less than one in JavaScript. The values are checked only when the object
// that receives them is a BigInt array.
func (in *instance) guardBigIntStorers(snapshot, snapshotDescriptors, checkedDescriptor func(goja.Value) goja.Value) error {
	object := in.vm.Get("Object").(*goja.Object)
	reflectObj := in.vm.Get("Reflect").(*goja.Object)
	if err := in.wrapMethod(object, "assign", func(call *goja.FunctionCall) {
		if len(call.Arguments) > 1 && isBigIntTarget(call.Arguments[0]) {
			for i := 1; i < len(call.Arguments); i++ {
				call.Arguments[i] = snapshot(call.Arguments[i])
			}
		}
	}); err != nil {
		return err
	}
	if err := in.wrapMethod(object, "defineProperties", func(call *goja.FunctionCall) {
		if len(call.Arguments) > 1 && isBigIntTarget(call.Arguments[0]) {
			call.Arguments[1] = snapshotDescriptors(call.Arguments[1])
		}
	}); err != nil {
		return err
	}
	define := func(call *goja.FunctionCall) {
		if len(call.Arguments) > 2 && isBigIntTarget(call.Arguments[0]) {
			call.Arguments[1] = in.propertyKey(call.Arguments[1])
			if isNumericKey(call.Arguments[1]) {
				call.Arguments[2] = checkedDescriptor(call.Arguments[2])
			}
		}
	}
	if err := in.wrapMethod(object, "defineProperty", define); err != nil {
		return err
	}
	if err := in.wrapMethod(reflectObj, "defineProperty", define); err != nil {
		return err
	}
	return in.wrapMethod(reflectObj, "set", func(call *goja.FunctionCall) {
		if len(call.Arguments) > 2 && (isBigIntTarget(call.Arguments[0]) || len(call.Arguments) > 3 && isBigIntTarget(call.Arguments[3])) {
			call.Arguments[1] = in.propertyKey(call.Arguments[1])
			if isNumericKey(call.Arguments[1]) {
				call.Arguments[2] = in.bigIntOperand(call.Arguments[2])
			}
		}
	})
}

var arrayBufferType = reflect.TypeFor[goja.ArrayBuffer]()

// isBigIntTarget reports whether v is a BigInt array or a Proxy of one
// (a store into a Proxy without a set trap is a store into its target).
func isBigIntTarget(v goja.Value) bool {
	for range maxProxyHops {
		obj, ok := v.(*goja.Object)
		if !ok {
			return false
		}
		if obj.ExportType() != proxyType {
			return isBigIntArray(obj)
		}
		p, ok := obj.Export().(goja.Proxy)
		if !ok || p.Target() == nil {
			return false
		}
		v = p.Target()
	}
	return true // a chain longer than the prelude lets code make: refuse
}

// maxProxyHops bounds isBigIntTarget's walk; guards.js keeps Proxy chains
// to 10,000.
const maxProxyHops = 1 << 16

// isNumericKey reports whether key is a canonical numeric text, which a
// typed array takes as an element's index.
func isNumericKey(key goja.Value) bool {
	s, ok := key.(goja.String)
	if !ok {
		return false
	}
	t := s.String()
	return t == "-0" || key.ToNumber().String() == t
}

// propertyKey is ToPropertyKey(v): a symbol, or a text (an object's
// ToPrimitive with hint string, called once).
func (in *instance) propertyKey(v goja.Value) goja.Value {
	switch v.(type) {
	case *goja.Symbol, goja.String:
		return v
	case *goja.Object:
		v = in.toPrimitiveString(v.(*goja.Object))
		if _, ok := v.(*goja.Symbol); ok {
			return v
		}
	}
	return in.vm.ToValue(v.String())
}
