package js_test

import (
	"context"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes"
)

// TestBigIntStoresOfLongTexts: a long decimal text stored as a BigInt by
// DataView's setBigInt64 and setBigUint64 or a BigInt array's fill and set
// is refused before goja parses it (a million digits took seconds in
// native code, where no interrupt lands); shorter texts, objects and
// BigInts are stored as before.
func TestBigIntStoresOfLongTexts(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: 128 << 20})
	s.ok("var long = '9'.repeat(1e6), dv = new DataView(new ArrayBuffer(16)), ta = new BigInt64Array(2), tu = new BigUint64Array(2)")
	refusesLongBigInts(t, s,
		"dv.setBigInt64(0, long)",
		"dv.setBigUint64(8, long, true)",
		"dv.setBigInt64(0, { valueOf: () => long })",
		"ta.fill(long)",
		"tu.fill({ [Symbol.toPrimitive]: () => long }, 1)",
		"ta.set([1n, long])",
		"tu.set({ length: 1, 0: long })",
	)
	tests := []struct{ code, want string }{
		{"dv.setBigInt64(0, '-12345678901234'); dv.setBigUint64(8, { valueOf: () => '77' }, true); [dv.getBigInt64(0), dv.getBigUint64(8, true)]", "[ -12345678901234n, 77n ]"},
		{"ta.fill('5'); tu.fill(7n, 1); [...ta, ...tu]", "[ 5n, 5n, 0n, 7n ]"},
		{"ta.set(['3', { valueOf: () => 4n }]); tu.set(new BigUint64Array([9n]), 1); [...ta, ...tu]", "[ 3n, 4n, 0n, 9n ]"},
		{"const e = []; for (const f of [() => dv.setBigInt64(0, 5), () => ta.fill(1), () => ta.set([1]), () => dv.setBigInt64(0, 'x')]) try { f() } catch (x) { e.push(x.name) } e",
			"[ 'TypeError', 'TypeError', 'TypeError', 'SyntaxError' ]"},
		{"const f = new Float64Array(2); f.fill(long.slice(0, 400)); f.set(['1.5']); [f[0], f[1], DataView.prototype.setBigInt64.name, DataView.prototype.setBigInt64.length, Float64Array.prototype.fill.length]",
			"[ 1.5, Infinity, 'setBigInt64', 2, 1 ]"},
	}
	for _, tt := range tests {
		if got, _ := s.ok(tt.code); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.code, got, tt.want)
		}
	}
}

// refusesLongBigInts runs each of codes in s, where long is a text of a
// million digits, and checks that it fails at once with the sandbox's
// RangeError instead of parsing the text (seconds of native code).
func refusesLongBigInts(t *testing.T, s *session, codes ...string) {
	t.Helper()
	for _, code := range codes {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		start := time.Now()
		out, rec := s.runCtx(ctx, code)
		cancel()
		if took := time.Since(start); took > testenv.Stretch(2*time.Second) {
			t.Errorf("%s took %v", code, took)
		}
		if !out.Failed {
			t.Errorf("%s did not fail", code)
			continue
		}
		want(t, code, rec.StderrText(), "RangeError: BigInt: the text has 1000000 characters, more than the 100000 the sandbox parses")
	}
}
