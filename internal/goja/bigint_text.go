package goja

// BigInts from text, in bounded time: wasmeval's change to goja (FORK.md).
//
// Go's big.Int parses decimal text in time quadratic in its length (a
// million digits take about 3 s, ten million about 5 min), in one call
// that Interrupt cannot stop. Upstream goja hands any text that does not
// fit an int64 to big.Int.SetString: BigInt(text), a store into a BigInt
// array, a comparison of a BigInt with a text. Here
//
//   - a conversion to a BigInt of any size (BigInt(text), BigInt.asIntN
//     and asUintN) refuses a text whose value has more bits than the
//     Runtime's limit (SetMaxBigIntBits) with a RangeError, before it
//     parses more than that many bits' worth of digits;
//   - a conversion that keeps 64 bits (a BigInt64Array's or
//     BigUint64Array's element, DataView's setBigInt64 and setBigUint64)
//     reduces the text modulo 2^64 as it reads it, in linear time, and
//     gives V8's result whatever its length;
//   - a comparison or equality of a BigInt with a text decides by the
//     text's length when it has more digits than the BigInt could have,
//     and parses it only when it is about the BigInt's size.
//
// Texts that fit an int64 take upstream's path unchanged. Longer ones are
// read as ECMAScript's StringToBigInt reads them (a sign for decimal
// digits only, no underscores), where upstream's SetString(text, 0) also
// took underscores, and a leading 0 as octal.

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// SetMaxBigIntBits sets the largest BigInt, in bits, that r makes from
// text (BigInt(text), BigInt.asIntN(n, text), BigInt.asUintN(n, text)):
// a text whose value has more bits is refused with a RangeError
// ("Maximum BigInt size exceeded: ...") after a scan in time linear in its
// length, before the parse, whose time is quadratic in it. n <= 0 means no
// limit, the default. Stores into BigInt arrays and comparisons with text
// need no limit (see bigint_text.go).
// Like the other Set* methods, it may only be called from the vm goroutine
// or when the vm is not running.
func (r *Runtime) SetMaxBigIntBits(n int) {
	r.maxBigIntBits = max(n, 0)
}

// bigIntTooBig is the error of a text whose BigInt would have more than
// max bits.
type bigIntTooBig struct{ max int }

func (e *bigIntTooBig) Error() string {
	return fmt.Sprintf("Maximum BigInt size exceeded: the result would have more than %d bits, the sandbox's limit", e.max)
}

// bigIntText is a StringIntegerLiteral, split into its parts.
type bigIntText struct {
	neg    bool
	base   int
	digits string // without the prefix, the sign and leading zeros; "" for 0
}

// scanBigIntText splits s, already trimmed of white space, in time linear
// in its length; ok is false when s is not a StringIntegerLiteral
// (StringToBigInt's undefined, a SyntaxError).
func scanBigIntText(s string) (t bigIntText, ok bool) {
	t.base = 10
	if s == "" {
		return t, true
	}
	if len(s) > 2 && s[0] == '0' {
		switch s[1] {
		case 'x', 'X':
			t.base = 16
		case 'o', 'O':
			t.base = 8
		case 'b', 'B':
			t.base = 2
		}
		if t.base != 10 {
			s = s[2:]
		}
	}
	if t.base == 10 && (s[0] == '+' || s[0] == '-') {
		t.neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return t, false
	}
	lead := 0
	for lead < len(s) && s[lead] == '0' {
		lead++
	}
	base := uint8(t.base)
	for i := lead; i < len(s); i++ {
		if digitValues[s[i]] >= base {
			return t, false
		}
	}
	t.digits = s[lead:]
	return t, true
}

// digitValues is digitVal as a table (36 for a byte that is no digit):
// scanBigIntText reads every byte of texts of millions.
var digitValues = func() (d [256]uint8) {
	for i := range d {
		d[i] = uint8(digitVal(byte(i)))
	}
	return
}()

// minBits is the fewest bits t's value can have: base^(digits-1) has
// floor((digits-1)*log2(base))+1.
func (t bigIntText) minBits() int {
	if t.digits == "" {
		return 0
	}
	return int(float64(len(t.digits)-1)*math.Log2(float64(t.base))) + 1
}

// parse returns t's value. maxBits > 0 refuses a value of more bits with
// *bigIntTooBig, before the parse when t's digits alone say so.
func (t bigIntText) parse(maxBits int) (*big.Int, error) {
	if maxBits > 0 && t.minBits() > maxBits {
		return nil, &bigIntTooBig{maxBits}
	}
	n := new(big.Int)
	switch {
	case t.digits == "":
	case t.base == 10 && len(t.digits) > decimalChunk:
		n = parseDecimal(t.digits, map[int]*big.Int{})
	default:
		if _, ok := n.SetString(t.digits, t.base); !ok {
			return nil, strconv.ErrSyntax // not reached: scanBigIntText checked the digits
		}
	}
	if maxBits > 0 && n.BitLen() > maxBits {
		return nil, &bigIntTooBig{maxBits}
	}
	if t.neg {
		n.Neg(n)
	}
	return n, nil
}

// decimalChunk is the longest run of decimal digits parseDecimal hands to
// SetString whole.
const decimalChunk = 4096

// parseDecimal returns the value of decimal digits s, by halves: hi*10^k +
// lo, where the product is Karatsuba's. big.Int.SetString reads digits one
// word at a time, in time quadratic in their number: 631,306 digits (2^21
// bits) took it 3.2 s on a loaded machine, this 0.66 s. pow caches 10^k
// by k.
func parseDecimal(s string, pow map[int]*big.Int) *big.Int {
	if len(s) <= decimalChunk {
		n, _ := new(big.Int).SetString(s, 10)
		return n
	}
	k := decimalChunk
	for k*2 < len(s) {
		k *= 2
	}
	hi := parseDecimal(s[:len(s)-k], pow)
	lo := parseDecimal(s[len(s)-k:], pow)
	p, ok := pow[k]
	if !ok {
		p = new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil)
		pow[k] = p
	}
	return hi.Add(hi.Mul(hi, p), lo)
}

// low64 returns t's value modulo 2^64. Only its last 64 digits count:
// base^64 is a multiple of 2^64 for the bases 2, 8, 10 and 16.
func (t bigIntText) low64() uint64 {
	var u uint64
	b := uint64(t.base)
	d := t.digits[max(0, len(t.digits)-64):]
	for i := 0; i < len(d); i++ {
		u = u*b + uint64(digitValues[d[i]]) // wraps modulo 2^64, as wanted
	}
	if t.neg {
		u = -u
	}
	return u
}

// bigIntBits64 returns ToBigInt(v) modulo 2^64, the bits a BigInt64Array,
// a BigUint64Array and DataView's setBigInt64 and setBigUint64 keep. A
// text is reduced as it is read, in time linear in its length, so that no
// limit is needed and the result is V8's.
func bigIntBits64(v Value) uint64 {
	if o, ok := v.(*Object); ok {
		v = o.toPrimitiveNumber()
	}
	if s, ok := v.(String); ok {
		str := s.toTrimmedUTF8()
		n, err := stringToInt(str)
		if err == nil {
			return uint64(n)
		}
		if isRangeErr(err) || err == strconv.ErrSyntax { // the latter: "-0", 0n as upstream reads it
			if t, ok := scanBigIntText(str); ok {
				return t.low64()
			}
		}
		panic(syntaxError(fmt.Sprintf("Cannot convert %s to a BigInt", s)))
	}
	n := (*big.Int)(toBigInt(v, 0)) // not a text: nothing to parse
	return new(big.Int).Mod(n, twoTo64).Uint64()
}

var twoTo64 = new(big.Int).Lsh(big.NewInt(1), 64)

// compareBigIntText compares x with the BigInt of text s (trimmed):
// -1, 0 or +1 as x is less than, equal to or greater than it; ok is false
// when s is not a BigInt's text. A text with more digits than x could have
// is not parsed: its sign decides. So a parse costs about as much as x's
// size, whatever the text's length.
func compareBigIntText(x *big.Int, s string) (c int, ok bool) {
	n, err := stringToInt(s)
	if err == nil {
		return x.Cmp(big.NewInt(n)), true
	}
	if !isRangeErr(err) && err != strconv.ErrSyntax { // the latter: "-0", 0n as upstream reads it
		return 0, false
	}
	t, ok := scanBigIntText(s)
	if !ok {
		return 0, false
	}
	if t.minBits() > x.BitLen() { // |text| > |x|
		if t.neg {
			return 1, true
		}
		return -1, true
	}
	y, err := t.parse(0)
	if err != nil {
		return 0, false
	}
	return x.Cmp(y), true
}
