package js_test

import (
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestGuardsIgnoreReplacedBuiltins: a cell that replaces the built-ins the
// prelude's guards call (the BigInt global, Math.trunc and Math.min,
// Array.isArray, Reflect.construct, WeakMap.prototype.get,
// Set.prototype.has, an index setter on Array.prototype) does not switch
// a guard off: each bomb is refused as it is without the replacement (the
// BigInt power ran past its size limit, a 2 GiB ArrayBuffer was made under
// a 128 MiB cap, a prototype chain grew past its depth limit, JSON.stringify
// met a deep value natively), and the native constructors stay out of
// reach. Each case puts the built-in back, so the next starts clean.
func TestGuardsIgnoreReplacedBuiltins(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: 128 << 20})
	tamper := func(setup, restore, bomb string) string {
		return "{ " + setup + "; let r; try { r = 'not refused: ' + (" + bomb + ") } catch (e) { r = e.message } finally { " + restore + " } r }"
	}
	chain := "(() => { let o = {}; for (let i = 0; i < 20000; i++) o = Object.create(o); return o.x })()"
	deepJSON := "(() => { let o = {}; for (let i = 0; i < 5000; i++) o = { o }; return JSON.stringify(o).length })()"
	tests := []struct{ name, code, want string }{
		{"BigInt global", tamper("const B = BigInt; globalThis.BigInt = () => 0n", "globalThis.BigInt = B", "(3n ** (2n ** 22n)) > 0n"),
			`"Maximum BigInt size exceeded: the result would have more than 2097152 bits, the sandbox's limit"`},
		{"Math.trunc", tamper("const f = Math.trunc; Math.trunc = () => 0", "Math.trunc = f", "new ArrayBuffer(2 ** 31).byteLength"),
			"'Array buffer allocation failed'"},
		{"Math.trunc, for Buffer.from", tamper("const f = Math.trunc; Math.trunc = () => 0", "Math.trunc = f", "Buffer.from({ length: 2 ** 28 }).length"),
			"'Array buffer allocation failed'"},
		{"Array.isArray", tamper("const f = Array.isArray; Array.isArray = () => false", "Array.isArray = f", "[...Array(2 ** 24)].length"),
			"'Invalid array length'"},
		{"WeakMap.prototype.get", tamper("const f = WeakMap.prototype.get; WeakMap.prototype.get = () => 0", "WeakMap.prototype.get = f", chain),
			"'Maximum call stack size exceeded: the prototype chain would nest more than 10000 deep'"},
		{"Math.min", tamper("const f = Math.min; Math.min = () => 0", "Math.min = f", chain),
			"'Maximum call stack size exceeded: the prototype chain would nest more than 10000 deep'"},
		{"Set.prototype.has", tamper("const f = Set.prototype.has; Set.prototype.has = () => true", "Set.prototype.has = f", deepJSON),
			"'Maximum call stack size exceeded'"},
		{"an index setter on Array.prototype", tamper("Object.defineProperty(Array.prototype, '2', { set(v) {}, configurable: true })", "delete Array.prototype[2]", deepJSON),
			"'Maximum call stack size exceeded'"},
		{"Reflect.construct", "{ let got; const f = Reflect.construct; Reflect.construct = (t, a, n) => { got = t; return f(t, a, n) }; new ArrayBuffer(1); new Float64Array(1); Reflect.construct = f; typeof got }",
			"'undefined'"},
		{"Function.prototype.call, for Buffer.alloc", "{ let got; const f = Function.prototype.call; Function.prototype.call = function (t, ...a) { got = got || this; return Reflect.apply(this, t, a) }; try { Buffer.alloc(1); Buffer.from([1]); Buffer.concat([Buffer.alloc(1)]); Buffer.from('x', 'latin1').toString('latin1') } finally { Function.prototype.call = f } typeof got }",
			"'undefined'"},
		{"Array.prototype[Symbol.iterator], for concat", tamper("const f = Array.prototype[Symbol.iterator]; Array.prototype[Symbol.iterator] = function* () {}", "Array.prototype[Symbol.iterator] = f",
			"[].concat({ length: 2 ** 25, [Symbol.isConcatSpreadable]: true }).length"),
			"'Invalid array length'"},
		{"the built-ins still work", "[JSON.stringify({ a: [1, { b: 2 }] }), [...[1, 2]].length, new ArrayBuffer(8).byteLength, String(2n ** 10n), Object.create(Object.create({ x: 1 })).x, new Proxy({}, {}).y, Math.max(1, 2)]",
			"[ '{\"a\":[1,{\"b\":2}]}', 2, 8, '1024', 1, undefined, 2 ]"},
	}
	for _, tt := range tests {
		if got, _ := s.ok(tt.code); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
