package js_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/runtimes"
)

// replaceable lists the built-ins the prelude calls, each as the object
// that holds it and its key (JavaScript expressions). TestPrimordials
// replaces each in turn; add a row for any built-in the prelude comes to
// call.
var replaceable = []struct{ holder, key string }{
	{"Object", "'keys'"},
	{"Object", "'getOwnPropertyNames'"},
	{"Object", "'getOwnPropertySymbols'"},
	{"Object", "'getOwnPropertyDescriptor'"},
	{"Object", "'getPrototypeOf'"},
	{"Object", "'defineProperty'"},
	{"Object", "'assign'"},
	{"Object", "'create'"},
	{"Object", "'freeze'"},
	{"Object", "'entries'"},
	{"Object", "'is'"},
	{"Object.prototype", "'hasOwnProperty'"},
	{"Object.prototype", "'propertyIsEnumerable'"},
	{"Object.prototype", "'toString'"},
	{"Array", "'isArray'"},
	{"Array", "'from'"},
	{"Array.prototype", "'join'"},
	{"Array.prototype", "'push'"},
	{"Array.prototype", "'pop'"},
	{"Array.prototype", "'slice'"},
	{"Array.prototype", "'splice'"},
	{"Array.prototype", "'map'"},
	{"Array.prototype", "'filter'"},
	{"Array.prototype", "'forEach'"},
	{"Array.prototype", "'includes'"},
	{"Array.prototype", "'indexOf'"},
	{"Array.prototype", "'unshift'"},
	{"Array.prototype", "'sort'"},
	{"Array.prototype", "'concat'"},
	{"Array.prototype", "'find'"},
	{"Array.prototype", "'reverse'"},
	{"Array.prototype", "Symbol.iterator"},
	{"Array", "Symbol.species"},
	{"Object.getPrototypeOf([][Symbol.iterator]())", "'next'"},
	{"String.prototype", "'slice'"},
	{"String.prototype", "'replace'"},
	{"String.prototype", "'replaceAll'"},
	{"String.prototype", "'split'"},
	{"String.prototype", "'padStart'"},
	{"String.prototype", "'padEnd'"},
	{"String.prototype", "'repeat'"},
	{"String.prototype", "'includes'"},
	{"String.prototype", "'indexOf'"},
	{"String.prototype", "'startsWith'"},
	{"String.prototype", "'endsWith'"},
	{"String.prototype", "'charCodeAt'"},
	{"String.prototype", "'toUpperCase'"},
	{"String.prototype", "'codePointAt'"},
	{"JSON", "'stringify'"},
	{"JSON", "'parse'"},
	{"Function.prototype", "'call'"},
	{"Function.prototype", "'apply'"},
	{"Function.prototype", "'bind'"},
	{"Error", "Symbol.hasInstance"},
	{"RangeError", "Symbol.hasInstance"},
	{"Map.prototype", "'get'"},
	{"Map.prototype", "'set'"},
	{"Map.prototype", "'has'"},
	{"Map.prototype", "'entries'"},
	{"Map.prototype", "Symbol.iterator"},
	{"Object.getPrototypeOf(new Map().entries())", "'next'"},
	{"Set.prototype", "'add'"},
	{"Set.prototype", "'has'"},
	{"Set.prototype", "'values'"},
	{"Set.prototype", "Symbol.iterator"},
	{"Object.getPrototypeOf(new Set().values())", "'next'"},
	{"WeakMap.prototype", "'get'"},
	{"WeakMap.prototype", "'set'"},
	{"WeakMap.prototype", "'has'"},
	{"WeakSet.prototype", "'has'"},
	{"WeakSet.prototype", "'add'"},
	{"Reflect", "'apply'"},
	{"Reflect", "'ownKeys'"},
	{"Reflect", "'getOwnPropertyDescriptor'"},
	{"Reflect", "'defineProperty'"},
	{"Number", "'isNaN'"},
	{"Number", "'isInteger'"},
	{"Number.prototype", "'toString'"},
	{"Math", "'min'"},
	{"Math", "'max'"},
	{"Math", "'floor'"},
	{"Math", "'sqrt'"},
	{"Math", "'round'"},
	{"Math", "'trunc'"},
	{"RegExp.prototype", "'test'"},
	{"RegExp.prototype", "'exec'"},
	{"RegExp.prototype", "Symbol.replace"},
	{"RegExp.prototype", "Symbol.split"},
	{"Promise.prototype", "'then'"},
	{"Promise", "'resolve'"},
	{"Promise", "'reject'"},
	{"Date", "'now'"},
	{"Date.prototype", "'toISOString'"},
	{"Error.prototype", "'toString'"},
	{"Symbol.prototype", "'toString'"},
	{"globalThis", "'Object'"},
	{"globalThis", "'Array'"},
	{"globalThis", "'String'"},
	{"globalThis", "'Number'"},
	{"globalThis", "'Symbol'"},
	{"globalThis", "'JSON'"},
	{"globalThis", "'Reflect'"},
	{"globalThis", "'Math'"},
	{"globalThis", "'Map'"},
	{"globalThis", "'Set'"},
	{"globalThis", "'WeakMap'"},
	{"globalThis", "'Promise'"},
	{"globalThis", "'Error'"},
	{"globalThis", "'TypeError'"},
	{"globalThis", "'RangeError'"},
	{"globalThis", "'queueMicrotask'"},
}

// primordialsFixtures makes, before anything is replaced, the values the
// checks print: every kind inspect formats, nested.
const primordialsFixtures = `globalThis.fx = (() => {
  class Point { constructor(x, y) { this.x = x; this.y = y; } }
  const value = {
    num: 1, neg: -0, big: 10n, str: 'it\'s "quoted"',
    multi: 'line one\nline two\nline three, long enough to be broken over lines',
    list: [1, 'two', [3, [4, [5, [6]]]], { deep: { deeper: { deepest: 1 } } }],
    sparse: [1, , 3], long: Array.from({ length: 120 }, (_, i) => i * 7),
    words: ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'],
    map: new Map([['a', 1], [{ k: 1 }, [1, 2]]]), set: new Set([1, 'x', { y: 2 }]),
    weak: new WeakMap(), err: new TypeError('bad thing'), date: new Date(0), re: /ab+c/gi,
    typed: new Uint8Array([1, 2, 3]), buf: new ArrayBuffer(4), fn: function named() {}, arrow: () => 1,
    cls: Point, point: new Point(1, 2), sym: Symbol('s'), [Symbol('key')]: 'symbol-keyed',
    boxed: new Number(3), nul: null, undef: undefined, promise: Promise.resolve(5),
    custom: { [Symbol.for('nodejs.util.inspect.custom')]() { return 'CUSTOM'; } },
  };
  value.self = value;
  const clonable = { a: [1, { b: new Map([[1, new Set([2])]]) }], d: new Date(0) };
  clonable.self = clonable;
  const err = new Error('outer', { cause: new RangeError('inner') });
  return { value, err, clonable, small: { a: 1, b: [1, 2] }, list: ['x', 'y', 'z'] };
})(); 0`

// primordialsChecks are the cells run with each built-in replaced; each
// must show what it shows with none replaced. uses names the built-ins a
// check's own code calls (which it then may not test).
var primordialsChecks = []struct{ name, code, uses string }{
	{"printing a result", "fx.value", ""},
	{"printing an error", "fx.err", ""},
	{"console", "console.log(fx.value); console.log('%s=%d %j %o', 'n', 42, fx.small, fx.list); console.info(fx.err); print(fx.list); console.group('g'); console.log('in'); console.groupEnd(); console.count('c'); console.count('c'); console.countReset('c')", ""},
	{"display", "display(fx.small); display(fx.list); display({ type: 'markdown', text: '# t' })", ""},
	{"timers", "queueMicrotask(() => console.log('microtask')); setImmediate(() => { console.log('immediate', fx.list); setTimeout(() => { console.log('timeout', fx.small); const t = setInterval(() => { console.log('interval'); clearInterval(t); }, 1); }, 1); })", "globalThis 'queueMicrotask'"},
	{"process", "process.nextTick(() => console.log('tick', process.hrtime().length)); process.stdout.write('out\\n')", ""},
	{"require of a local module", "require('./lib.js')", ""},
	{"import of a local module", "import { name, list } from './esm.mjs'; import * as ns from './lib.js'; [name, list, ns]", ""},
	{"write and read", "await write('note.txt', 'b\\na\\nb'); await append('note.txt', '\\nc'); await read('note.txt')", ""},
	{"text helpers", "[sort('b\\na\\nc\\na', { unique: true }), uniq('a\\na\\nb', { count: true }), counter('a\\nb\\na')]", ""},
	{"parallel", "await parallel([() => 1, () => 2, () => 3], { concurrency: 2 })", ""},
	{"a refused ArrayBuffer", "(() => { try { return new ArrayBuffer(2 ** 31).byteLength; } catch (e) { return e.message; } })()", ""},
	{"a refused BigInt", "(() => { try { return 3n ** (2n ** 22n) > 0n; } catch (e) { return e.message; } })()", ""},
	{"a refused repeat", "(() => { try { return 'x'.repeat(2 ** 29).length; } catch (e) { return e.message; } })()", "String.prototype 'repeat'"},
	{"guarded methods", "['ab'.repeat(2), 'ab'.padStart(4, '-'), 'ab'.padEnd(4, '-'), 'a-b'.replace('-', '+'), 'a-b-c'.replaceAll('-', '+')]", "String.prototype 'repeat',String.prototype 'padStart',String.prototype 'padEnd',String.prototype 'replace',String.prototype 'replaceAll'"},
	{"guarded array methods", "(() => { const a = ['b', 'a']; return a.join('+') + a.slice(1) + a.concat(['c']).length; })()", "Array.prototype 'join',Array.prototype 'slice',Array.prototype 'concat',Array Symbol.species"},
	{"a guarded sort", "(() => { const a = [3, 1, 2]; a.sort((x, y) => x - y); return a[0] * 100 + a[1] * 10 + a[2]; })()", "Array.prototype 'sort'"},
	{"a guarded Function", "new Function('a', 'b', 'return a + b')(1, 2)", "Array.prototype 'slice',Array.prototype 'map',Array.prototype 'join'"},
}

// TestPrimordials: a cell that replaces a built-in the prelude uses (with
// a function that counts its calls and throws) changes nothing the later
// cells show, printing values of every kind, console, display, timers,
// process, require and import of local modules, the file and text helpers
// and the guards, and the replacement is never called. Each case puts the
// built-in back when it ends, so the next starts clean (issue 9: the
// prelude called what the cells can replace).
func TestPrimordials(t *testing.T) {
	start := primordialsStart(t)
	show := showAll
	s := start(t)
	s.ok("0")
	// The node modules' and web.js's bodies too (prim_index_test.go).
	checks := primordialsChecks
	for _, c := range nodeWebChecks {
		checks = append(checks[:len(checks):len(checks)], struct{ name, code, uses string }{c.name, c.code, c.gaps})
	}
	baseline := make([]string, len(checks))
	for i, c := range checks {
		baseline[i] = show(s, c.code)
		if strings.HasPrefix(baseline[i], "FAILED") {
			t.Fatalf("%s failed with no built-in replaced:\n%s", c.name, baseline[i])
		}
	}

	for _, r := range replaceable {
		name := r.holder + " " + r.key
		t.Run(name, func(t *testing.T) {
			s := start(t)
			// cell runs a setup or teardown cell, which must succeed.
			cell := func(code string) string {
				t.Helper()
				out, rec := s.run(code)
				if out.Failed {
					t.Fatalf("%s: %s", code, rec.StderrText())
				}
				if r := rec.Results(); len(r) > 0 {
					return r[0]["text/plain"]
				}
				return ""
			}
			cell(`{
  const holder = (` + r.holder + `), key = (` + r.key + `);
  const define = Object.defineProperty;
  const original = Object.getOwnPropertyDescriptor(holder, key);
  let calls = 0;
  globalThis.__calls = () => calls;
  globalThis.__restore = () => { if (original) define(holder, key, original); else delete holder[key]; };
  define(holder, key, {
    value: function replaced() { calls++; throw new Error('the replaced built-in was called'); },
    writable: true, configurable: true,
  });
} 0`)
			// The session ends with the case; the built-in is put back
			// all the same, so that a case never leaks into another.
			defer cell("__restore(); 0")
			before := "0"
			for i, c := range checks {
				if strings.Contains(","+c.uses+",", ","+name+",") {
					continue
				}
				if got := show(s, c.code); got != baseline[i] {
					t.Errorf("%s with %s replaced:\n%s\nwant, as with nothing replaced:\n%s", c.name, name, got, baseline[i])
				}
				if got := cell("__calls()"); got != before {
					t.Errorf("%s: the prelude called the replaced %s (%s calls, %s before)", c.name, name, got, before)
					before = got
				}
			}
		})
	}
}

// primordialsStart makes a root with the files the checks read and
// returns how a case starts its session: each case has a session of its
// own, made the same way, the fixtures its first cell.
func primordialsStart(t *testing.T) func(t *testing.T) *session {
	root := t.TempDir()
	files := map[string]string{
		"lib.js":    "module.exports = { name: 'lib', list: [1, 2, 3], nested: { a: [{ b: 1 }] } };\n",
		"esm.mjs":   "export const name = 'esm';\nexport const list = ['p', 'q'];\nexport * from './lib.js';\n",
		"note.txt":  "",
		"dir/a.txt": "a\nb\n",
		"dir/b.txt": "b",
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	calls, err := hostcalls.NewDispatcher(root, nil, hostcalls.DispatcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { calls.Close() })
	return func(t *testing.T) *session {
		s := newSession(t, runtimes.InstanceOptions{Root: root, Call: calls.Call, MemoryLimitBytes: 128 << 20})
		s.ok(primordialsFixtures)
		return s
	}
}

// showAll runs a check and returns all it showed, failed or not.
func showAll(s *session, code string) string {
	s.t.Helper()
	out, rec := s.run(code)
	var b strings.Builder
	if out.Failed {
		b.WriteString("FAILED\n")
	}
	b.WriteString(rec.StdoutText())
	b.WriteString("\n--- stderr\n" + rec.StderrText())
	for _, r := range rec.Results() {
		b.WriteString("\n--- result\n" + r["text/plain"])
	}
	for _, d := range rec.Displays() {
		for _, mime := range []string{"text/plain", "application/json", "text/markdown"} {
			if v, ok := d[mime]; ok {
				b.WriteString("\n--- display " + mime + "\n" + v)
			}
		}
	}
	return b.String()
}
