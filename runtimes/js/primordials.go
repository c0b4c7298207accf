package js

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wasmeval/wasmeval/internal/goja"
	"github.com/wasmeval/wasmeval/prelude"
)

// The prelude's primordials (P in prelude/js/inspect.js) are the built-ins
// it calls, taken before any cell runs. Taking every method of every
// built-in in each VM (a bound function each, twice) cost more than the
// rest of a session's start (issue 9): here, once per process, the
// prelude's sources are read for the names they use (P.ArrayPrototypePush,
// P.MapPrototypeGetSize, ...), a throwaway VM says where each is found
// (which built-in, which key, value or getter), and a program is written
// that takes just those. Each VM runs that program: a property read and,
// for a method, one bound function a name.

// primordialsFile is the generated program's name among the prelude's
// files: it runs first and leaves internal.takePrimordials for inspect.js.
const primordialsFile = "primordials.js"

// primordialUse matches a read of a primordial in the prelude's sources.
// The prelude reads P only by name (no P[expr]), so that this finds all it
// needs; names P gets from the prelude itself (P.SafeMap, P.isInstance,
// ...) are found too and left to it.
var primordialUse = regexp.MustCompile(`\bP\.([A-Za-z_$][A-Za-z0-9_$]*)`)

// primordialNamesUsed lists the P names the prelude's files read, sorted.
func primordialNamesUsed() ([]string, error) {
	seen := map[string]bool{}
	err := fs.WalkDir(prelude.JS, "js", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".js") {
			return err
		}
		src, err := prelude.JS.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range primordialUse.FindAllSubmatch(src, -1) {
			seen[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// primordialRecipe is where one primordial is found: in holder (an index
// into primordialHolders), under key (a text, or a well-known symbol's
// name after "@@"), as kind "value" (a static, bound to its holder unless
// the holder ignores this), "method" (a prototype's method, uncurried),
// "get"/"set" (an accessor's getter or setter, uncurried) or "global" (a
// global's own value).
type primordialRecipe struct {
	Name   string `json:"name"`
	Holder int    `json:"holder"`
	Key    string `json:"key"`
	Kind   string `json:"kind"`
}

// primordialHolders are the objects primordials are taken from: a P name
// is the holder's name followed by the key's, as Node's are (Array +
// Prototype + Push). Each is a JavaScript expression, evaluated before
// any cell runs.
var primordialHolders = func() [][2]string {
	var h [][2]string
	ctors := []string{"Array", "ArrayBuffer", "BigInt", "Boolean", "DataView", "Date", "Error", "EvalError",
		"Function", "Map", "Number", "Object", "Promise", "Proxy", "RangeError", "ReferenceError", "RegExp", "Set",
		"String", "Symbol", "SyntaxError", "TypeError", "URIError", "WeakMap", "WeakSet", "WeakRef", "AggregateError",
		"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array",
		"Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"}
	for _, c := range ctors {
		h = append(h, [2]string{c, "g." + c}, [2]string{c + "Prototype", "g." + c + ".prototype"})
	}
	h = append(h,
		[2]string{"TypedArray", "g.Object.getPrototypeOf(g.Uint8Array)"},
		[2]string{"TypedArrayPrototype", "g.Object.getPrototypeOf(g.Uint8Array).prototype"},
		[2]string{"ArrayIteratorPrototype", "g.Object.getPrototypeOf([][g.Symbol.iterator]())"},
		[2]string{"MapIteratorPrototype", "g.Object.getPrototypeOf(new g.Map()[g.Symbol.iterator]())"},
		[2]string{"SetIteratorPrototype", "g.Object.getPrototypeOf(new g.Set()[g.Symbol.iterator]())"},
		[2]string{"StringIteratorPrototype", "g.Object.getPrototypeOf(''[g.Symbol.iterator]())"},
		[2]string{"JSON", "g.JSON"}, [2]string{"Math", "g.Math"}, [2]string{"Reflect", "g.Reflect"},
		[2]string{"", "g"}, // globals: P.String, P.parseInt, P.globalThis
	)
	return h
}()

// primordialUnbound are the holders whose statics ignore this: theirs are
// taken as they are, not bound (a bound function each VM is the cost this
// file exists to cut). Array.from, Promise.resolve, the typed arrays'
// from and of use this, and are bound.
var primordialUnbound = map[string]bool{"JSON": true, "Math": true, "Reflect": true, "Object": true, "Number": true, "Symbol": true}

// primordialRecipesJS runs in a throwaway VM and lists, for every name a
// holder offers, where it is found.
const primordialRecipesJS = `(function (holdersJSON) {
  const g = globalThis;
  const holders = JSON.parse(holdersJSON);
  const out = [];
  const upper = (s) => s[0].toUpperCase() + s.slice(1);
  const nameOf = (key) => (typeof key === 'symbol' ? 'Symbol' + upper(key.description.slice(7)) : upper(key));
  const keyOf = (key) => (typeof key === 'symbol' ? '@@' + key.description.slice(7) : key);
  const globals = ['Array', 'ArrayBuffer', 'BigInt', 'Boolean', 'DataView', 'Date', 'Error', 'EvalError',
    'Function', 'Map', 'Number', 'Object', 'Promise', 'Proxy', 'RangeError', 'ReferenceError', 'RegExp', 'Set',
    'String', 'Symbol', 'SyntaxError', 'TypeError', 'URIError', 'WeakMap', 'WeakSet', 'WeakRef', 'AggregateError',
    'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array',
    'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array', 'TypedArray',
    'parseInt', 'parseFloat', 'isFinite', 'isNaN', 'encodeURIComponent', 'decodeURIComponent',
    'encodeURI', 'decodeURI', 'escape', 'unescape', 'globalThis', 'queueMicrotask'];
  for (let h = 0; h < holders.length; h++) {
    const [prefix, expr] = holders[h];
    if (prefix === '') {
      for (const name of globals) {
        if (name !== 'TypedArray' && name in g) out.push({ name, holder: h, key: name, kind: 'global' });
      }
      continue;
    }
    let src;
    try {
      src = (0, eval)('(function (g) { return ' + expr + '; })')(g);
    } catch (e) {
      continue; // a built-in this goja lacks (WeakRef, AggregateError)
    }
    if (src === undefined || src === null) continue;
    const proto = prefix.endsWith('Prototype');
    if (prefix === 'TypedArray') out.push({ name: 'TypedArray', holder: h, key: '', kind: 'self' });
    for (const key of Reflect.ownKeys(src)) {
      if (key === 'constructor' || key === 'prototype' || key === 'caller' || key === 'arguments' ||
          (typeof key === 'string' && key.startsWith('__'))) continue;
      const d = Reflect.getOwnPropertyDescriptor(src, key);
      const name = prefix + nameOf(key);
      if ('value' in d) {
        out.push({ name, holder: h, key: keyOf(key), kind: typeof d.value !== 'function' ? 'data' : proto ? 'method' : 'value' });
      } else {
        if (d.get !== undefined) out.push({ name: prefix + 'Get' + nameOf(key), holder: h, key: keyOf(key), kind: 'get' });
        if (d.set !== undefined) out.push({ name: prefix + 'Set' + nameOf(key), holder: h, key: keyOf(key), kind: 'set' });
      }
    }
  }
  return JSON.stringify(out);
})`

// primordialsSource writes the program that takes the primordials the
// prelude uses: a function expression of (host, internal) that leaves
// internal.takePrimordials(P, uncurryThis, bindTo). That function puts each
// primordial in P; called again (guards.js, after it has wrapped some
// methods) it takes again only those whose built-in has changed since.
func primordialsSource() (string, error) {
	used, err := primordialNamesUsed()
	if err != nil {
		return "", err
	}
	vm := goja.New()
	v, err := vm.RunString(primordialRecipesJS)
	if err != nil {
		return "", err
	}
	list, ok := goja.AssertFunction(v)
	if !ok {
		return "", fmt.Errorf("primordials: the recipe script is not a function")
	}
	holdersJSON, err := json.Marshal(primordialHolders)
	if err != nil {
		return "", err
	}
	res, err := list(goja.Undefined(), vm.ToValue(string(holdersJSON)))
	if err != nil {
		return "", fmt.Errorf("primordials: %w", err)
	}
	var recipes []primordialRecipe
	if err := json.Unmarshal([]byte(res.String()), &recipes); err != nil {
		return "", fmt.Errorf("primordials: %w", err)
	}
	byName := make(map[string]primordialRecipe, len(recipes))
	for _, r := range recipes {
		if _, dup := byName[r.Name]; !dup {
			byName[r.Name] = r
		}
	}
	var b strings.Builder
	b.WriteString("(function (host, internal) {\n  'use strict';\n")
	b.WriteString("  internal.takePrimordials = (P, uncurryThis, bindTo) => {\n")
	b.WriteString("    const g = globalThis, describe = g.Reflect.getOwnPropertyDescriptor;\n")
	// The holders are evaluated once a take, each only if a name uses it.
	holders := map[int]bool{}
	var wanted []primordialRecipe
	for _, name := range used {
		if r, ok := byName[name]; ok {
			wanted = append(wanted, r)
			holders[r.Holder] = true
		}
	}
	for h := range primordialHolders {
		if holders[h] {
			fmt.Fprintf(&b, "    const h%d = %s;\n", h, primordialHolders[h][1])
		}
	}
	b.WriteString("    let v;\n")
	var state strings.Builder // the built-ins last taken, one variable a name
	for i, r := range wanted {
		key := strconv.Quote(r.Key)
		if strings.HasPrefix(r.Key, "@@") {
			key = "g.Symbol." + r.Key[2:]
		}
		prefix := primordialHolders[r.Holder][0]
		var read, take string
		switch r.Kind {
		case "self":
			read, take = fmt.Sprintf("h%d", r.Holder), "v"
		case "global", "data":
			read, take = fmt.Sprintf("h%d[%s]", r.Holder, key), "v"
		case "value":
			read, take = fmt.Sprintf("h%d[%s]", r.Holder, key), fmt.Sprintf("bindTo(v, h%d)", r.Holder)
			if primordialUnbound[prefix] {
				take = "v"
			}
		case "method":
			read, take = fmt.Sprintf("h%d[%s]", r.Holder, key), "uncurryThis(v)"
		case "get", "set":
			read, take = fmt.Sprintf("describe(h%d, %s).%s", r.Holder, key, r.Kind), "uncurryThis(v)"
		default:
			return "", fmt.Errorf("primordials: %s: unknown kind %q", r.Name, r.Kind)
		}
		fmt.Fprintf(&state, "%sr%d", map[bool]string{true: "  let ", false: ", "}[i == 0], i)
		fmt.Fprintf(&b, "    v = %s; if (v !== r%d) { r%d = v; P.%s = %s; }\n", read, i, i, r.Name, take)
	}
	b.WriteString("  };\n")
	if state.Len() > 0 {
		// The state lives outside the function, so a second take sees the first's.
		src := b.String()
		b.Reset()
		i := strings.Index(src, "  internal.takePrimordials")
		b.WriteString(src[:i] + state.String() + ";\n" + src[i:])
	}
	b.WriteString("})\n")
	return b.String(), nil
}
