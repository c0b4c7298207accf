package js

import (
	"strconv"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"
)

// Template literals.
//
// goja turns each substitution of a template into text and joins them in
// native code: `${s}${s}` doubles a string in one copy that no interrupt
// stops, so a doubling loop passed the memory limit by the whole last copy
// (the heap peaked at about three times the limit). A template of two or
// more substitutions is rewritten so that a long result is reserved
// before it is made (guards.js, template):
//
//	`q0${a}q1${b}q2`  ->  %tpl('q0', a, 'q1', b, 'q2')
//
// and, when every substitution is an identifier, the call is made only
// when a substitution is not a number or a short text (the call costs more
// than a short template):
//
//	(typeof a === 'number' || typeof a === 'string' && a.length < N) &&
//	(typeof b === 'number' || typeof b === 'string' && b.length < N)
//	    ? `q0${a}q1${b}q2` : %tpl('q0', a, 'q1', b, 'q2')
//
// with N the guard's threshold divided by the number of substitutions, so
// that a template the test lets through is shorter than the threshold.
// A template of one substitution grows a text by its literal parts only,
// as `s + 'x'` does, and is left alone. The guard converts its
// substitutions to text after evaluating them all, where goja converts
// each right after evaluating it: only an object whose toString changes
// what a later substitution evaluates to could tell.

// opTemplate is the prelude's template guard (guards.js), and opTemplate2
// and opTemplate3 its forms for two and three substitutions.
const (
	opTemplate  = "%wasmeval.tpl"
	opTemplate2 = "%wasmeval.tpl2"
	opTemplate3 = "%wasmeval.tpl3"
)

// templateReserveChars is the guard's threshold: a result of this many
// characters or more is reserved before it is made (guards.js,
// reserveChars).
const templateReserveChars = 1 << 19

// rewriteTemplate returns the guarded form of an untagged template of two
// or more substitutions.
func rewriteTemplate(x *ast.TemplateLiteral) (ast.Expression, bool) {
	if x.Tag != nil || len(x.Expressions) < 2 || len(x.Elements) != len(x.Expressions)+1 {
		return nil, false
	}
	idx := x.OpenQuote
	args := make([]ast.Expression, 0, 2*len(x.Expressions)+1)
	for i, e := range x.Elements {
		args = append(args, &ast.StringLiteral{Idx: e.Idx, Literal: strconv.Quote(e.Parsed.String()), Value: e.Parsed})
		if i < len(x.Expressions) {
			args = append(args, x.Expressions[i])
		}
	}
	guard := opTemplate
	switch len(x.Expressions) {
	case 2:
		guard = opTemplate2
	case 3:
		guard = opTemplate3
	}
	call := callGuard(guard, idx, x.CloseQuote+1, args...)
	var test ast.Expression
	short := templateReserveChars / len(x.Expressions)
	for _, e := range x.Expressions {
		id, ok := e.(*ast.Identifier)
		if !ok {
			return call, true
		}
		c := *id
		small := &ast.BinaryExpression{Operator: token.LOGICAL_OR,
			Left: typeIs(id, "number"),
			Right: &ast.BinaryExpression{Operator: token.LOGICAL_AND,
				Left: typeIs(id, "string"),
				Right: &ast.BinaryExpression{Operator: token.LESS,
					Left:  &ast.DotExpression{Left: &c, Identifier: ast.Identifier{Name: "length", Idx: id.Idx}},
					Right: &ast.NumberLiteral{Idx: id.Idx, Literal: strconv.Itoa(short), Value: int64(short)},
				},
			},
		}
		if test == nil {
			test = small
		} else {
			test = &ast.BinaryExpression{Operator: token.LOGICAL_AND, Left: test, Right: small}
		}
	}
	return &ast.ConditionalExpression{Test: test, Consequent: x, Alternate: call}, true
}
