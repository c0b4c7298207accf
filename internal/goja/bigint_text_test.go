package goja

import (
	"math/big"
	"strings"
	"testing"
)

// The fork's change (bigint_text.go): no path from a text to a BigInt
// parses more than SetMaxBigIntBits allows. A text of 2e6 or 2e7 digits
// took goja 11 s or about 20 min in one uninterruptible call; each case
// here must end at once (a regression hangs until the test's timeout).

const testMaxBits = 1 << 21

func bigTextRuntime(t *testing.T) *Runtime {
	t.Helper()
	r := New()
	r.SetMaxBigIntBits(testMaxBits)
	return r
}

func TestBigIntFromLongTextIsRefused(t *testing.T) {
	r := bigTextRuntime(t)
	const want = "RangeError: Maximum BigInt size exceeded: the result would have more than 2097152 bits, the sandbox's limit"
	for _, digits := range []string{"2e6", "2e7"} {
		if _, err := r.RunString("var long = '9'.repeat(" + digits + "), neg = '-' + long, hex = '0x' + 'f'.repeat(" + digits + ")"); err != nil {
			t.Fatal(err)
		}
		for _, code := range []string{
			"BigInt(long)",
			"BigInt(neg)",
			"BigInt(hex)",
			"BigInt('  \\n' + long + '\\t ')",
			"BigInt.asIntN(64, { valueOf: () => long })",
			"BigInt.asIntN(64, { [Symbol.toPrimitive]: () => neg })",
			"BigInt.asIntN(64, long)",
			"BigInt.asUintN(64, long)",
			"BigInt.asUintN(8, { valueOf: () => hex })",
		} {
			_, err := r.RunString(code)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s digits: %s = %v, want %q", digits, code, err, want)
			}
			if ex, ok := err.(*Exception); ok {
				if _, caught := r.RunString("try { " + code + "; false } catch (e) { e instanceof RangeError }"); caught != nil || ex == nil {
					t.Errorf("%s: not catchable: %v", code, caught)
				}
			}
		}
	}
}

func TestBigIntTextNearTheLimit(t *testing.T) {
	r := bigTextRuntime(t)
	// 2^2097152 - 1 has exactly the limit's bits; 2^2097152 one more. The
	// first digits-only bound cannot tell them apart: the parse does.
	maxed := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), testMaxBits), big.NewInt(1))
	over := new(big.Int).Lsh(big.NewInt(1), testMaxBits)
	r.Set("maxed", maxed.String())
	r.Set("over", over.String())
	r.Set("zeros", strings.Repeat("0", 2e7)+"42")
	v, err := r.RunString("[BigInt(maxed) === (1n << 2097152n) - 1n, BigInt('-' + maxed) === 1n - (1n << 2097152n), BigInt('0x' + 'f'.repeat(524288)) === (1n << 2097152n) - 1n, BigInt(zeros), BigInt('0b' + '1'.repeat(64))].join()")
	if err != nil {
		t.Fatal(err)
	}
	if got := v.String(); got != "true,true,true,42,18446744073709551615" {
		t.Errorf("got %s", got)
	}
	for _, code := range []string{"BigInt(over)", "BigInt('-' + over)", "BigInt('0x1' + '0'.repeat(524288))"} {
		if _, err := r.RunString(code); err == nil || !strings.Contains(err.Error(), "more than 2097152 bits") {
			t.Errorf("%s = %v, want the limit's RangeError", code, err)
		}
	}
}

// TestBigIntTextSyntax: texts past an int64 are read as StringToBigInt
// reads them (upstream handed them to SetString(text, 0), which took
// underscores and read a leading 0 as octal).
func TestBigIntTextSyntax(t *testing.T) {
	r := bigTextRuntime(t)
	big20 := "12345678901234567890123"
	v, err := r.RunString(`
		const out = [];
		for (const s of ['` + big20 + `', '+` + big20 + `', '-` + big20 + `', '0` + big20 + `', ' 0x` + big20 + ` ', '0o7777777777777777777777777', '0b` + strings.Repeat("1", 70) + `', '', '-0', '12', '0x10']) out.push(String(BigInt(s)));
		for (const s of ['1_` + big20 + `', '-0x` + big20 + `', '0x-` + big20 + `', '` + big20 + `n', '0o8` + big20 + `', '0b2` + big20 + `', '` + big20 + `.5', '1e30', '--` + big20 + `']) {
			try { BigInt(s); out.push('ok ' + s) } catch (e) { out.push(e.name) }
		}
		out.join()`)
	if err != nil {
		t.Fatal(err)
	}
	want := big20 + "," + big20 + ",-" + big20 + "," + big20 + ",352125166682025326612644131,37778931862957161709567,1180591620717411303423,0,0,12,16," +
		strings.Repeat("SyntaxError,", 8) + "SyntaxError"
	if got := v.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestBigIntArrayStoresOfLongText: what a BigInt64Array, a BigUint64Array
// or a DataView keeps of a text is its value modulo 2^64, read in linear
// time, with no limit: V8's result, whatever the length.
func TestBigIntArrayStoresOfLongText(t *testing.T) {
	r := bigTextRuntime(t)
	for _, digits := range []int{2e6, 2e7} {
		text := strings.Repeat("9", digits)
		low := lowBits(text)
		r.Set("long", text)
		v, err := r.RunString(`(() => {
			const i64 = new BigInt64Array(4), u64 = new BigUint64Array(4), dv = new DataView(new ArrayBuffer(16));
			const out = [];
			i64[0] = long; u64[0] = long; u64[1] = '-' + long; i64[1] = '0x' + 'f'.repeat(` + itoa(digits) + `);
			dv.setBigUint64(0, long); dv.setBigInt64(8, '-' + long);
			out.push(i64[0], u64[0], u64[1], i64[1], dv.getBigUint64(0), dv.getBigInt64(8));
			[i64[2]] = [long]; ({ a: u64[2] } = { a: long }); for (u64[3] of [long]);
			out.push(i64[2], u64[2], u64[3]);
			u64[3] = 0n; u64[3] += long; out.push(u64[3]);
			new Proxy(u64, {})[0] = 5n; new Proxy(u64, {})[1] = long; out.push(u64[0], u64[1]);
			u64.fill(long); out.push(u64[3]); u64.set([long, '7'], 2); out.push(u64[2], u64[3]);
			out.push(BigUint64Array.from([long])[0], BigUint64Array.of(long)[0], new BigUint64Array([long])[0], new BigUint64Array(1).with(0, long)[0]);
			out.push(new BigUint64Array(1).map(() => long)[0]);
			class A extends Array { static get [Symbol.species]() { return BigUint64Array } }
			out.push(A.from([1]).map(() => long)[0]);
			for (const m of ['push', 'unshift']) try { Array.prototype[m].call(u64, long) } catch (e) { out.push(e.name) }
			try { Array.prototype.splice.call(u64, 0, 1, long) } catch (e) { out.push(e.name) } out.push(u64[0]);
			return out.join() })()`)
		if err != nil {
			t.Fatalf("%d digits: %v", digits, err)
		}
		lowS := new(big.Int).SetUint64(low).String()
		neg := new(big.Int).SetUint64(-low).String()
		i64 := big.NewInt(int64(low)).String()
		want := strings.Join([]string{i64, lowS, neg, "-1", lowS, big.NewInt(int64(-low)).String(), i64, lowS, lowS, lowS, "5", lowS, lowS, lowS, "7",
			lowS, lowS, lowS, lowS, lowS, lowS, "TypeError", "TypeError", "TypeError", lowS}, ",")
		if got := v.String(); got != want {
			t.Errorf("%d digits:\n got %s\nwant %s", digits, got, want)
		}
	}
}

// TestBigIntCompareWithLongText: a comparison of a BigInt with a text is
// decided by the text's length when the BigInt cannot be that long, as
// V8 decides it.
func TestBigIntCompareWithLongText(t *testing.T) {
	r := bigTextRuntime(t)
	for _, digits := range []string{"2e6", "2e7"} {
		v, err := r.RunString(`
			var long = '9'.repeat(` + digits + `), neg = '-' + long, big = (1n << 2097000n);
			[1n < long, long > 1n, 1n == long, long == 1n, 1n != long, big < long, big > neg, neg < big, 1n == long + 'x', 1n < long + 'x', 1n >= long + 'x',
			 -1n > neg, 0n == '0'.repeat(` + digits + `), 5n == '0'.repeat(` + digits + `) + '5', 5n < '0'.repeat(` + digits + `) + '6', 5n == '  5  ', 5n == '-0'].join()`)
		if err != nil {
			t.Fatal(err)
		}
		want := "true,true,false,false,true,true,true,true,false,false,false,true,true,true,true,true,false"
		if got := v.String(); got != want {
			t.Errorf("%s digits:\n got %s\nwant %s", digits, got, want)
		}
	}
}

// TestBigIntTextNoLimitByDefault: a Runtime without SetMaxBigIntBits
// parses as upstream does.
func TestBigIntTextNoLimitByDefault(t *testing.T) {
	r := New()
	v, err := r.RunString("BigInt('9'.repeat(1000)) === 10n ** 1000n - 1n && BigInt('1' + '0'.repeat(700000)) > 0n")
	if err != nil || !v.ToBoolean() {
		t.Errorf("got %v, %v", v, err)
	}
}

// lowBits is the decimal text's value modulo 2^64.
func lowBits(text string) uint64 {
	var u uint64
	for i := 0; i < len(text); i++ {
		u = u*10 + uint64(text[i]-'0')
	}
	return u
}

func itoa(n int) string { return big.NewInt(int64(n)).String() }
