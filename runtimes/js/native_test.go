package js_test

import (
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes"
)

// TestNativeRecursionIsCatchable: recursion through goja's native code
// (JSON, join and toString, flat, structuredClone, inspect, Proxy traps,
// getters) into a deep nesting ends in a RangeError the cell catches, as
// V8's does, and the session goes on. It used to end the cell with an
// uncatchable stop (the call stack's *StackOverflowError), or to recurse in
// Go without a bound (JSON.stringify past the prelude's depth check,
// JSON.parse under the host's size check, flat): issue 9.
func TestNativeRecursionIsCatchable(t *testing.T) {
	// 256 MiB: the nestings below hold about 110 MiB, and a stringify's
	// buffer with the garbage of its growth took a 128 MiB session past
	// its limit before the stack's (the memory test is elsewhere).
	s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: 256 << 20})
	s.ok(`globalThis.kept = 'still here'
function nest(n, f) { let a = []; for (let i = 0; i < n; i++) a = f(a); return a }
globalThis.deepArray = nest(1e5, (a) => [a]);
globalThis.deepObject = nest(1e5, (a) => ({ a }));
// The prelude's depth check of JSON.stringify walks 10000 values, the
// shallow ones first here: the deep one is left to goja.
globalThis.wideThenDeep = [Array.from({ length: 10001 }, () => ({})), deepArray];
globalThis.catches = (f) => { try { f(); return 'no error' } catch (e) { return e instanceof RangeError && e.message } };
`)
	cases := []struct{ name, code string }{
		{"JSON.stringify", `JSON.stringify(deepArray)`},
		{"JSON.stringify of an object", `JSON.stringify(deepObject)`},
		{"JSON.stringify past the prelude's check", `JSON.stringify(wideThenDeep)`},
		{"JSON.stringify with a replacer", `JSON.stringify(deepObject, (k, v) => v)`},
		{"JSON.stringify with a gap", `JSON.stringify(deepArray, null, 2)`},
		{"String", `String(deepArray)`},
		{"join", `deepArray.join()`},
		{"toString", `deepArray.toString()`},
		{"Array.prototype.toString.call", `Array.prototype.toString.call(deepArray)`},
		{"toLocaleString", `deepArray.toLocaleString()`},
		{"a template", "`${deepArray}`"},
		{"a sum", `deepArray + ''`},
		{"flat", `deepArray.flat(Infinity)`},
		{"structuredClone", `structuredClone(deepArray)`},
		{"structuredClone of an object", `structuredClone(deepObject)`},
		{"JSON.parse", `JSON.parse('['.repeat(3e4) + ']'.repeat(3e4))`},
		{"JSON.parse of objects", `JSON.parse('{"a":'.repeat(2e4) + '1' + '}'.repeat(2e4))`},
		{"JSON.parse with a reviver", `JSON.parse('['.repeat(2000) + ']'.repeat(2000), function (k, v) { return v })`},
		{"recursion", `(function f() { return f() })()`},
		{"a getter", `{ const o = { get x() { return this.x } }; o.x }`},
		{"element getters that make arrays", `{ const mk = () => { const a = [1]; Object.defineProperty(a, 0, { get: mk }); return a }; String(mk()) }`},
		{"toString that calls String", `{ const q = { toString() { return String(q) } }; String(q) }`},
		{"a Proxy trap", `{ const p = new Proxy({}, { get(t, k) { return p[k] } }); p.x }`},
		{"Object.prototype.toString through a Proxy trap", `{ const p = new Proxy({}, { get(t, k) { return k === Symbol.toStringTag ? Object.prototype.toString.call(p) : undefined } }); Object.prototype.toString.call(p) }`},
		{"map", `(function m() { return [1].map(m) })()`},
		{"a sort comparator", `(function f() { return [2, 1].sort(() => f()) })()`},
		{"valueOf", `{ const v = { valueOf() { return v * 1 } }; v * 1 }`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			if got := result(s, `catches(() => `+c.code+`)`); got != "'Maximum call stack size exceeded'" {
				t.Errorf("%s: the cell caught %s, want the RangeError 'Maximum call stack size exceeded'", c.code, got)
			}
			// Bounded by the call stack's 1000 frames, where no interrupt
			// lands: about 0.01-0.1 s on an idle machine.
			if took := time.Since(start); took > testenv.Stretch(5*time.Second) {
				t.Errorf("%s: took %v", c.code, took)
			}
			if got := result(s, `[kept, 1 + 1]`); got != "[ 'still here', 2 ]" {
				t.Errorf("after %s: %s", c.code, got)
			}
		})
	}
	// A cell may catch it again and again, and then do what fits.
	if got, _ := s.ok(`{ let n = 0; for (let i = 0; i < 20; i++) if (catches(() => String(deepArray))) n++; n }`); got != "20" {
		t.Errorf("caught %s of 20 overflows", got)
	}
	if got, _ := s.ok(`[JSON.stringify(nest(300, (a) => [a])).length, String(nest(200, (a) => [a, 1])).length, nest(500, (a) => [a, 1]).flat(Infinity).length]`); got != "[ 602, 400, 500 ]" {
		t.Errorf("nestings within the stack: %s", got)
	}
	// Node's inspect catches the overflow itself and says so in its text.
	if got, _ := s.ok(`require('util').inspect(deepArray, { depth: Infinity }).includes('Inspection interrupted prematurely. Maximum call stack size exceeded')`); got != "true" {
		t.Errorf("inspect of a deep array: %s", got)
	}
	// An overflow the cell does not catch fails it, saying so.
	if stderr := s.fails(`String(deepArray)`); !strings.Contains(stderr, "RangeError: Maximum call stack size exceeded") {
		t.Errorf("an uncaught overflow: %s", stderr)
	}
	if got, _ := s.ok(`kept`); got != "'still here'" {
		t.Errorf("at the end: %s", got)
	}
}

// result runs a cell and returns its result's text, or its error: unlike
// session.ok, it may be called from a subtest.
func result(s *session, code string) string {
	out, rec := s.run(code)
	if out.Failed {
		return "the cell failed: " + rec.StderrText()
	}
	if r := rec.Results(); len(r) > 0 {
		return r[0]["text/plain"]
	}
	return ""
}
