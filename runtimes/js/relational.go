package js

import (
	"reflect"
	"strings"

	"github.com/wasmeval/wasmeval/internal/goja/ast"
	"github.com/wasmeval/wasmeval/internal/goja/token"
)

// Relational chains.
//
// goja's parser (as of 793a2a65c13b, the newest the module proxy serves)
// parses <, <=, >, >=, instanceof and in right-recursively, so
// `a < b < c` becomes a < (b < c): 1 < 2 < 3 is false and 3 > 2 > 1 true,
// where the language groups them to the left. Carrying a patched goja
// would not reach programs that require wasmeval (a replace in go.mod
// applies only inside this module), so every cell's AST is regrouped here
// before it is compiled.
//
// The AST keeps no parentheses, so a right operand that is itself a
// relational expression was either written in parentheses, a < (b < c),
// which stays as it is, or is the parser's mistake. The text between the
// two tells them apart: the parentheses opened before the right operand
// that do not close right after its own left operand wrap the whole right
// operand.

// relational reports whether op is an operator of goja's right-recursive
// parseRelationalExpression.
func relational(op token.Token) bool {
	switch op {
	case token.LESS, token.LESS_OR_EQUAL, token.GREATER, token.GREATER_OR_EQUAL, token.INSTANCEOF, token.IN:
		return true
	}
	return false
}

// regroupRelational regroups prog's relational chains to the left.
func regroupRelational(prog *ast.Program) {
	if prog.File == nil {
		return
	}
	regroupRelationalIn(prog, prog.File.Source(), prog.File.Base())
}

// regroupRelationalIn regroups the relational chains of root, a tree
// parsed from src whose positions are offsets in src plus base. A
// TypeScript cell is regrouped in the JavaScript esbuild made of it,
// before its positions move to the TypeScript text (typescript.go):
// there, the parentheses esbuild dropped (`(2 as number)` became `2`)
// and positions that map to a nearby token misled the test of
// parentheses (`[1 < 2 < 3, 3 > (2 as number) > 1]` became a chain
// across the comma: "Value is not an object: 2").
func regroupRelationalIn(root any, src string, base int) {
	// A chain needs two operators; most cells have none, and the walk
	// would cost them a few µs (every "in" counts, also inside names: the
	// count only has to be no less than the operators').
	if strings.Count(src, "<")+strings.Count(src, ">")+strings.Count(src, "in") < 2 {
		return
	}
	// chained reports whether right, the right operand of a relational
	// expression, is unparenthesized: the parentheses right before its
	// start (k) are all closed right before its own operator (m). Start
	// positions are used, not ends: goja's Idx1 of some nodes (new F())
	// falls short of their text.
	chained := func(right *ast.BinaryExpression) bool {
		start, rstart := int(right.Idx0())-base, int(right.Right.Idx0())-base
		if start < 0 || rstart <= start || rstart > len(src) {
			return false
		}
		k := countBack(src, start, '(')
		i := skipBack(src, rstart, "(")
		for i > start && strings.IndexByte("<>=abcdefghijklmnopqrstuvwxyz", src[i-1]) >= 0 {
			i-- // the operator
		}
		m := countBack(src, i, ')')
		return k <= m
	}
	var fix func(e *ast.BinaryExpression) ast.Expression
	fix = func(e *ast.BinaryExpression) ast.Expression {
		// Collect the chain along the right spine: a op1 b op2 c ...
		operands := []ast.Expression{e.Left}
		ops := []*ast.BinaryExpression{e}
		cur := e
		for {
			r, ok := cur.Right.(*ast.BinaryExpression)
			if !ok || !relational(r.Operator) || !chained(r) {
				operands = append(operands, cur.Right)
				break
			}
			operands = append(operands, r.Left)
			ops = append(ops, r)
			cur = r
		}
		if len(ops) == 1 {
			return e
		}
		out := operands[0]
		for i, op := range ops {
			out = &ast.BinaryExpression{Operator: op.Operator, Left: out, Right: operands[i+1], Comparison: op.Comparison}
		}
		return out
	}
	// Before its operands are walked, each chain is regrouped: its
	// operands are then the regrouped tree's.
	walkAST(root, func(v reflect.Value) bool {
		if v.Kind() == reflect.Interface && v.CanSet() {
			if b, ok := v.Interface().(*ast.BinaryExpression); ok && relational(b.Operator) {
				if fixed := fix(b); fixed != ast.Expression(b) && reflect.TypeOf(fixed).AssignableTo(v.Type()) {
					v.Set(reflect.ValueOf(fixed))
				}
			}
		}
		return true
	}, nil)
}

// skipBack returns the offset before which src, read backwards from i,
// has only white space, block comments and the bytes of also.
func skipBack(src string, i int, also string) int {
	for i > 0 {
		c := src[i-1]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || strings.IndexByte(also, c) >= 0:
			i--
		case c == '/' && i >= 2 && src[i-2] == '*':
			j := strings.LastIndex(src[:i-2], "/*")
			if j < 0 {
				return i
			}
			i = j
		default:
			return i
		}
	}
	return i
}

// countBack counts the bytes c right before offset i of src, across white
// space and block comments.
func countBack(src string, i int, c byte) int {
	n := 0
	for {
		i = skipBack(src, i, "")
		if i == 0 || src[i-1] != c {
			return n
		}
		n++
		i--
	}
}
