package js_test

import (
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestBigIntDoorsTakeLongTexts: a long decimal text that reaches a BigInt
// array through its constructor, %TypedArray%.from, of, with or map, or
// through Object.assign, Object.defineProperty(ies), Reflect.set or
// defineProperty, or Array.prototype.fill called on it (or on a Proxy of
// it), is stored at once with V8's value: the fork reads it once
// (internal/goja/bigint_text.go), where upstream parsed it in 3 s of native
// code for a million digits. The wrappers that refused such texts (issue
// 9) are gone, and the generic functions are goja's own again; the same
// doors store short texts, objects and BigInts as before.
func TestBigIntDoorsTakeLongTexts(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: 128 << 20})
	s.ok("var long = '9'.repeat(1e6), big = { valueOf: () => long }")
	longBigIntValues(t, s)
	if got, _ := s.ok("[new BigInt64Array([1n, long])[1] === wantI, new BigUint64Array({ length: 1, 0: big })[0] === wantU, Object.assign(new BigInt64Array(1), [long])[0] === wantI, [Reflect.set, Reflect.defineProperty, Object.defineProperty, Object.defineProperties].every((f) => f.toString().includes('[native code]'))]"); got != "[ true, true, true, true ]" {
		t.Errorf("V8's values of a long text, and goja's own functions: %s", got)
	}
	storesLongBigInts(t, s,
		"new BigInt64Array([1n, long])",
		"new BigUint64Array({ length: 1, 0: long })",
		"new BigInt64Array(new Set([big]))",
		"class B extends BigUint64Array {}; new B([long])",
		"BigInt64Array.from([long])",
		"BigUint64Array.from([1], () => big)",
		"BigInt64Array.of(1n, long)",
		"new BigInt64Array(1).with(0, long)",
		"new BigUint64Array(1).map(() => long)",
		"Object.assign(new BigInt64Array(1), { 0: long })",
		"Object.assign(new Proxy(new BigInt64Array(1), {}), [big])",
		"Object.defineProperty(new BigInt64Array(1), 0, { value: long })",
		"Object.defineProperties(new BigUint64Array(1), { 0: { value: big } })",
		"Reflect.defineProperty(new BigInt64Array(1), '0', { value: long })",
		"Reflect.set(new BigInt64Array(1), 0, long)",
		"Reflect.set({}, { toString: () => '0' }, long, new BigInt64Array(1))",
		"Array.prototype.fill.call(new BigInt64Array(1), long)",
	)
	tests := []struct{ code, want string }{
		{"class B extends BigInt64Array {}; [new B([1n, '2', { valueOf: () => 3n }]), B.from(['4']), B.of('5', 6n), new B(2) instanceof BigInt64Array, new BigInt64Array(1).constructor === BigInt64Array, BigInt64Array.name, BigInt64Array.length]",
			"[ B(3) [BigInt64Array] [ 1n, 2n, 3n ], B(1) [BigInt64Array] [ 4n ], B(2) [BigInt64Array] [ 5n, 6n ], true, true, 'BigInt64Array', 3 ]"},
		{"[new BigUint64Array(new Set(['7'])), new BigInt64Array(new BigInt64Array([3n])), new BigInt64Array(new ArrayBuffer(16), 8), BigInt64Array.from({ length: 2, 0: '1', 1: 2n }), BigInt64Array.from([1n], function (x, i) { return x + this.d }, { d: 1n }), Float64Array.from(['1.5'], x => x), Int8Array.of('3')]",
			"[ BigUint64Array(1) [ 7n ], BigInt64Array(1) [ 3n ], BigInt64Array(1) [ 0n ], BigInt64Array(2) [ 1n, 2n ], BigInt64Array(1) [ 2n ], Float64Array(1) [ 1.5 ], Int8Array(1) [ 3 ] ]"},
		{"[Object.assign(new BigInt64Array(2), { 0: '5', 1: { valueOf: () => 6n }, foo: 'bar' }), Object.defineProperty(new BigInt64Array(1), 0, { value: '8' }), Reflect.set(new BigInt64Array(1), { toString: () => '0' }, '9'), Object.defineProperties(new BigInt64Array(1), { 0: { value: '10' } })]",
			"[ BigInt64Array(2) [ 5n, 6n, foo: 'bar' ], BigInt64Array(1) [ 8n ], true, BigInt64Array(1) [ 10n ] ]"},
		{"[Array.prototype.fill.call(new BigInt64Array(2), '3'), new BigInt64Array(2).with(1, '4'), new BigInt64Array([1n, 2n]).map(x => String(x * 2n)), Reflect.set.length, Object.assign.name, BigInt64Array.from.length]",
			"[ BigInt64Array(2) [ 3n, 3n ], BigInt64Array(2) [ 0n, 4n ], BigInt64Array(2) [ 2n, 4n ], 3, 'assign', 1 ]"},
		{"const o = {}; [Object.assign({}, { a: long }).a.length, Reflect.set(o, 0, long), Object.defineProperty([], 0, { value: long })[0].length, new Float64Array([long.slice(0, 400)])[0]]",
			"[ 1000000, true, 1000000, Infinity ]"},
		{"const e = []; for (const f of [() => new BigInt64Array(['x']), () => BigInt64Array(1), () => BigInt64Array.from([1n], 5), () => new BigInt64Array([1])]) try { f() } catch (x) { e.push(x.name) } e",
			"[ 'SyntaxError', 'TypeError', 'TypeError', 'TypeError' ]"},
	}
	for _, tt := range tests {
		got, _ := s.ok(tt.code)
		if got = strings.Join(strings.Fields(got), " "); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.code, got, tt.want)
		}
	}
}
