package js_test

import (
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestBigIntTextNativePaths: the doors by which a long text reaches goja's
// BigInt conversion in its own VM code, where no wrapper could see it (an
// element store `ta[i] = text`, `+=`, destructuring,
// for-of into an element, a store through a Proxy, a species constructor
// that is a BigInt array's, a comparison). Upstream goja parsed the whole
// text in one native call, quadratic in its length (2e6 digits: ~11 s,
// 2e7: ~20 min), past any timeout. The fork (internal/goja/bigint_text.go)
// keeps the 64 bits a BigInt array keeps by reading the text once, and
// decides a comparison by the text's length: each cell ends at once with
// V8's answer. The cells get 5 s: a regression ends as "Interrupted" after
// the parse, or hangs until the test's timeout.
func TestBigIntTextNativePaths(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: 128 << 20})
	for _, digits := range []int{2e6, 2e7} {
		text := strings.Repeat("9", digits)
		var low uint64
		for i := 0; i < len(text); i++ {
			low = low*10 + 9
		}
		u := new(big.Int).SetUint64(low).String() + "n"
		i := big.NewInt(int64(low)).String() + "n"
		neg := new(big.Int).SetUint64(-low).String() + "n"
		run := func(code, want string) {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			out, rec := s.runCtx(ctx, code)
			if out.Failed {
				t.Errorf("%d digits: %s failed: %s", digits, code, rec.StderrText())
				return
			}
			got := ""
			if r := rec.Results(); len(r) > 0 {
				got = strings.Join(strings.Fields(r[0]["text/plain"]), " ")
			}
			if got != want {
				t.Errorf("%d digits: %s\n got %s\nwant %s", digits, code, got, want)
			}
		}
		s.ok("var long = '9'.repeat(" + big.NewInt(int64(digits)).String() + "), i64 = new BigInt64Array(2), u64 = new BigUint64Array(2)")
		run("i64[0] = long; u64[0] = long; u64[1] = '-' + long; [i64[0], u64[0], u64[1]]", "[ "+i+", "+u+", "+neg+" ]")
		run("u64[0] = 0n; u64[0] += long; u64[0]", u)
		run("u64[1] = 1n; [u64[1]] = [long]; u64[1]", u)
		run("({ a: i64[1] } = { a: long }); i64[1]", i)
		run("for (u64[0] of ['5', long]); u64[0]", u)
		run("const p = new Proxy(u64, {}); p[0] = 7n; p[1] = long; [u64[0], u64[1]]", "[ 7n, "+u+" ]")
		run("class A extends Array { static get [Symbol.species]() { return BigUint64Array } }; A.from([1, 2]).map(() => long)", "BigUint64Array(2) [ "+u+", "+u+" ]")
		run("[1n < long, long > 1n, 1n == long, long == 1n, 1n != long, -1n > '-' + long, 5n == '0'.repeat(long.length) + '5']",
			"[ true, true, false, false, true, true, true ]")
	}
	// Ordinary texts still parse.
	got, _ := s.ok("const t = new BigInt64Array(2); t[0] = '42'; t[1] = ' -0x10 '.trim().slice(1); [BigInt('123'), t[0], t[1], BigInt('0x' + 'f'.repeat(16)), 12n == '12', 3n < '4']")
	if got = strings.Join(strings.Fields(got), " "); got != "[ 123n, 42n, 16n, 18446744073709551615n, true, true ]" {
		t.Errorf("ordinary texts: got %s", got)
	}
}

// TestBigIntTextForkLimit: goja's own BigInt(text) refuses a result past
// the session's BigInt limit (the limit the operators' guards use) with
// their RangeError. guards.js's BigInt refuses texts of more than 100,000
// characters first; under a small memory limit the session's BigInt limit
// (65,536 bits at least, a 32nd of the limit) is below what 100,000 digits
// make, so a text of 90,000 digits reaches goja.
func TestBigIntTextForkLimit(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: 1 << 20})
	stderr := s.fails("BigInt('9'.repeat(90000))")
	want(t, "BigInt of 90,000 digits", stderr, "RangeError: Maximum BigInt size exceeded: the result would have more than 262144 bits, the sandbox's limit")
	got, _ := s.ok("String(BigInt('9'.repeat(70000))).length")
	if got != "70000" {
		t.Errorf("BigInt of 70,000 digits: length %s", got)
	}
}
