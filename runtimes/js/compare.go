package js

import (
	"cmp"
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"sync"

	"github.com/wasmeval/wasmeval/internal/goja"
	"github.com/wasmeval/wasmeval/internal/goja/ast"
	"github.com/wasmeval/wasmeval/internal/goja/token"
)

// Comparisons of a BigInt with a text.
//
// `x < s`, `x == s` (and >, <=, >=, !=) with a BigInt x and a text s parse
// s as a BigInt, in native code: a decimal text of a million digits took
// seconds (quadratic in its length), ten million would take most of an
// hour, and no interrupt stops it. The comparisons are rewritten into a
// call of the prelude's guard (guards.js, compare), which compares a BigInt
// with a long decimal text by its length and, where the lengths are close,
// by the BigInt's own text (which the operators keep short enough to make
// quickly); anything else it hands to the operator. A comparison that
// cannot meet a BigInt and a text keeps its native path:
//
//	a < b  ->  typeof a === 'number' || typeof b === 'number' ||
//	           typeof a === 'string' && typeof b === 'string' ? a < b : %cmp('<', a, b)
//
// (the test reads only identifiers, and only the left one when the right
// is not an identifier: the right one could change while the left is
// evaluated), and none at all when an operand is a literal other than a
// long text.
//
// A comparison that cannot be tested inline (a member on the left,
// `a[i - 1] < a[i]`: a test would evaluate it twice, and a getter would
// run twice) calls a guard of the host's instead, one for each operator
// (%lt, %gt, %le, %ge, %eq, %ne), which compares two numbers or two texts
// itself, as the operator does, and hands anything else to the prelude's
// guard. A call of the prelude's guard, which is JavaScript, made such a
// comparison cost 3.6 times its native time; goja calls a Go function for
// about what the comparison costs (BenchmarkCompare).
//
//	a[i - 1] < a[i]  ->  %lt(a[i - 1], a[i])

// opCompare is the prelude's comparison guard.
const opCompare = "%wasmeval.cmp"

// comparisonGuards are the host's guards of the comparisons, by operator.
var comparisonGuards = map[token.Token]string{
	token.LESS: "%wasmeval.lt", token.GREATER: "%wasmeval.gt", token.LESS_OR_EQUAL: "%wasmeval.le",
	token.GREATER_OR_EQUAL: "%wasmeval.ge", token.EQUAL: "%wasmeval.eq", token.NOT_EQUAL: "%wasmeval.ne",
}

// guardedComparisons are the operators that may parse a text as a BigInt.
var guardedComparisons = map[token.Token]bool{
	token.LESS: true, token.GREATER: true, token.LESS_OR_EQUAL: true, token.GREATER_OR_EQUAL: true,
	token.EQUAL: true, token.NOT_EQUAL: true,
}

// shortLiteral is the longest text literal a comparison is left alone
// with: a BigInt parses it quickly.
const shortLiteral = 4096

// rewriteComparison returns the guarded form of a comparison.
func rewriteComparison(x *ast.BinaryExpression) (ast.Expression, bool) {
	if !guardedComparisons[x.Operator] || safeOperand(x.Left) || safeOperand(x.Right) {
		return nil, false
	}
	call := callGuard(comparisonGuards[x.Operator], x.Left.Idx0(), x.Right.Idx1(), x.Left, x.Right)
	l, okL := x.Left.(*ast.Identifier)
	if !okL {
		return call, true
	}
	test := typeIs(l, "number")
	if r, ok := x.Right.(*ast.Identifier); ok {
		test = &ast.BinaryExpression{Operator: token.LOGICAL_OR,
			Left:  &ast.BinaryExpression{Operator: token.LOGICAL_OR, Left: test, Right: typeIs(r, "number")},
			Right: &ast.BinaryExpression{Operator: token.LOGICAL_AND, Left: typeIs(l, "string"), Right: typeIs(r, "string")},
		}
	}
	return &ast.ConditionalExpression{Test: test, Consequent: x, Alternate: call}, true
}

// safeOperand reports whether a comparison with e cannot parse a long text
// as a BigInt: e is a number, a boolean, null, a short text or a typeof.
func safeOperand(e ast.Expression) bool {
	switch x := e.(type) {
	case *ast.BooleanLiteral, *ast.NullLiteral:
		return true
	case *ast.StringLiteral:
		return len(x.Value) <= shortLiteral
	case *ast.TemplateLiteral:
		return x.Tag == nil && len(x.Expressions) == 0 && len(x.Elements) == 1 && len(x.Elements[0].Parsed) <= shortLiteral
	case *ast.UnaryExpression:
		return x.Operator == token.TYPEOF
	}
	return isNumberLiteral(e)
}

// compareBigIntText compares BigInt x with text s as a comparison of a
// BigInt and a text does (s parsed as StringToBigInt does), without
// parsing s: -1, 0 or 1, or NaN when s is no integer. Only the BigInt is
// turned into decimal text, and only when the lengths do not tell: the
// operators keep it short enough for that to be quick (memory.go).
func compareBigIntText(xv, sv goja.Value) float64 {
	rv := reflect.ValueOf(xv)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Type() != bigIntType() {
		return math.NaN()
	}
	x := (*big.Int)(rv.UnsafePointer())
	t := strings.TrimFunc(sv.String(), isJSSpace)
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if len(t) > 2 && t[0] == '0' && !neg && strings.IndexByte("xXoObB", t[1]) >= 0 {
		// A radix prefix (no sign allowed): its digits are bits.
		y, ok := parsePow2(t[2:], t[1])
		if !ok {
			return math.NaN()
		}
		return float64(x.Cmp(y))
	}
	if t == "" || strings.TrimLeft(t, "0123456789") != "" {
		return math.NaN()
	}
	if t = strings.TrimLeft(t, "0"); t == "" {
		neg, t = false, "0"
	}
	// The signs first, then the magnitudes.
	sSign := 1
	switch {
	case t == "0":
		sSign = 0
	case neg:
		sSign = -1
	}
	if xs := x.Sign(); xs != sSign {
		if xs < sSign {
			return -1
		}
		return 1
	}
	if sSign == 0 {
		return 0
	}
	var c int
	bits := x.BitLen()
	// |x| has between these many decimal digits.
	low, high := int(float64(bits-1)*math.Log10(2))+1, int(float64(bits)*math.Log10(2))+1
	switch {
	case len(t) < low:
		c = 1
	case len(t) > high:
		c = -1
	default:
		d := new(big.Int).Abs(x).Text(10)
		switch {
		case len(d) != len(t):
			c = cmpInt(len(d), len(t))
		default:
			c = strings.Compare(d, t)
		}
	}
	if sSign < 0 {
		c = -c
	}
	return float64(c)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// isJSSpace reports whether r is white space or a line terminator to
// JavaScript, which StringToBigInt trims.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// parsePow2 parses the digits of a hexadecimal (x), octal (o) or binary
// (b) integer in time linear in their number, which big.Int's SetString
// does not for all of them.
func parsePow2(digits string, radix byte) (*big.Int, bool) {
	bitsPer := uint(4)
	switch radix {
	case 'o', 'O':
		bitsPer = 3
	case 'b', 'B':
		bitsPer = 1
	}
	buf := make([]byte, (uint(len(digits))*bitsPer+7)/8)
	bit := uint(0) // from the least significant end
	for i := len(digits) - 1; i >= 0; i-- {
		v := digitValue(digits[i])
		if v < 0 || v >= 1<<bitsPer {
			return nil, false
		}
		for k := uint(0); k < bitsPer; k++ {
			if v&(1<<k) != 0 {
				buf[len(buf)-1-int((bit+k)/8)] |= 1 << ((bit + k) % 8)
			}
		}
		bit += bitsPer
	}
	return new(big.Int).SetBytes(buf), true
}

// defineComparisonGuards defines the host's comparison guards as
// properties of global that no binding can shadow; slow is the prelude's
// guard, which they call for what they do not compare themselves.
func (in *instance) defineComparisonGuards(global *goja.Object, slow goja.Callable) error {
	t, f := in.vm.ToValue(true), in.vm.ToValue(false)
	for op, name := range comparisonGuards {
		text := in.vm.ToValue(op.String())
		guard := in.vm.ToValue(func(call goja.FunctionCall) goja.Value {
			x, y := call.Argument(0), call.Argument(1)
			if r, ok := compareQuickly(op, x, y); ok {
				if r {
					return t
				}
				return f
			}
			v, err := slow(goja.Undefined(), text, x, y)
			if err != nil {
				in.rethrow(err)
			}
			return v
		})
		if err := global.DefineDataProperty(name, guard, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return err
		}
	}
	return nil
}

// compareQuickly compares x and y with op as the operator does when they
// are two numbers or two texts (ok), which cannot meet a BigInt and a text
// and call no code; anything else is not ok.
func compareQuickly(op token.Token, x, y goja.Value) (result, ok bool) {
	var c int
	xt, yt := reflect.TypeOf(x), reflect.TypeOf(y)
	it, ft := numberTypes()
	switch {
	case xt == it && yt == it:
		c = cmp.Compare(x.ToInteger(), y.ToInteger())
	case (xt == it || xt == ft) && (yt == it || yt == ft):
		a, b := x.ToFloat(), y.ToFloat()
		if math.IsNaN(a) || math.IsNaN(b) {
			return op == token.NOT_EQUAL, true
		}
		c = cmp.Compare(a, b) // -0 and 0 are equal
	default:
		xs, okX := x.(goja.String)
		ys, okY := y.(goja.String)
		if !okX || !okY {
			return false, false
		}
		c = xs.CompareTo(ys) // by UTF-16 code units, as goja's operators
	}
	switch op {
	case token.LESS:
		return c < 0, true
	case token.GREATER:
		return c > 0, true
	case token.LESS_OR_EQUAL:
		return c <= 0, true
	case token.GREATER_OR_EQUAL:
		return c >= 0, true
	case token.EQUAL:
		return c == 0, true
	case token.NOT_EQUAL:
		return c != 0, true
	}
	return false, false
}

// numberTypes are goja's types of integer and floating-point numbers.
var numberTypes = sync.OnceValues(func() (reflect.Type, reflect.Type) {
	vm := goja.New()
	return reflect.TypeOf(vm.ToValue(int64(1))), reflect.TypeOf(vm.ToValue(1.5))
})

// defineFastGuards defines the host's guards of comparisons and templates
// (templates.go), in front of the prelude's.
func (in *instance) defineFastGuards(global *goja.Object) error {
	cmpJS, ok := goja.AssertFunction(global.Get(opCompare))
	if !ok {
		return errors.New("js: prelude defines no " + opCompare)
	}
	tplJS, ok := goja.AssertFunction(global.Get(opTemplate))
	if !ok {
		return errors.New("js: prelude defines no " + opTemplate)
	}
	if err := in.defineComparisonGuards(global, cmpJS); err != nil {
		return err
	}
	return in.defineTemplateGuard(global, tplJS)
}
