package js_test

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes"
)

// TestBigIntStoresOfLongTexts: a long decimal text stored as a BigInt by
// DataView's setBigInt64 and setBigUint64 or a BigInt array's fill and set
// is stored at once, as V8 stores it (ToBigInt mod 2^64): the fork reads
// the text once (internal/goja/bigint_text.go), where upstream goja parsed
// it in time quadratic in its length (a million digits took seconds of
// native code, where no interrupt lands). These methods were wrapped to
// refuse texts past 100,000 characters instead; the wrappers are gone.
// Shorter texts, objects and BigInts are stored as before.
func TestBigIntStoresOfLongTexts(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: 128 << 20})
	s.ok("var long = '9'.repeat(1e6), dv = new DataView(new ArrayBuffer(16)), ta = new BigInt64Array(2), tu = new BigUint64Array(2)")
	longBigIntValues(t, s)
	storesLongBigInts(t, s,
		"dv.setBigInt64(0, long)",
		"dv.setBigUint64(8, long, true)",
		"dv.setBigInt64(0, { valueOf: () => long })",
		"ta.fill(long)",
		"tu.fill({ [Symbol.toPrimitive]: () => long }, 1)",
		"ta.set([1n, long])",
		"tu.set({ length: 1, 0: long })",
	)
	s.ok("ta = new BigInt64Array(2); tu = new BigUint64Array(2)")
	if got, _ := s.ok("dv.setBigUint64(8, long, true); ta.fill(long); [dv.getBigUint64(8, true) === wantU, ta[0] === wantI, DataView.prototype.setBigInt64.toString().includes('[native code]')]"); got != "[ true, true, true ]" {
		t.Errorf("V8's values of a long text: %s", got)
	}
	s.ok("ta = new BigInt64Array(2); tu = new BigUint64Array(2)")
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

// storesLongBigInts runs each of codes in s, where long is a text of a
// million digits, and checks that it succeeds at once: the fork reduces
// the text mod 2^64 as it reads it, where upstream parsed it whole.
func storesLongBigInts(t *testing.T, s *session, codes ...string) {
	t.Helper()
	for _, code := range codes {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		start := time.Now()
		out, rec := s.runCtx(ctx, code)
		cancel()
		if took := time.Since(start); took > testenv.Stretch(2*time.Second) {
			t.Errorf("%s took %v", code, took)
		}
		if out.Failed {
			t.Errorf("%s failed: %s", code, rec.StderrText())
		}
	}
}

// longBigIntValues defines, in s, wantU and wantI: the values V8 stores
// for long (a million nines) in a BigUint64Array and a BigInt64Array.
func longBigIntValues(t *testing.T, s *session) {
	t.Helper()
	v := new(big.Int)
	v.SetString(strings.Repeat("9", 1e6), 10)
	u := new(big.Int).And(v, new(big.Int).SetUint64(^uint64(0))).Uint64()
	s.ok(fmt.Sprintf("var wantU = %dn, wantI = %dn", u, int64(u)))
}
