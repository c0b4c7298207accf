package goja

import "testing"

// TestBigInt64ArrayFillKeepsTheSign: a BigInt64Array's fill stores a
// negative value's bits (upstream stored its magnitude: fill(-1n) gave 1n).
func TestBigInt64ArrayFillKeepsTheSign(t *testing.T) {
	v, err := New().RunString("[new BigInt64Array(1).fill(-1n)[0], new BigInt64Array(1).fill(-5n)[0], new BigInt64Array(1).fill('-7')[0], new BigInt64Array(1).fill(2n ** 63n)[0], new BigUint64Array(1).fill(-1n)[0]].join()")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), "-1,-5,-7,-9223372036854775808,18446744073709551615"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
