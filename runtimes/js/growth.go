package js

import (
	"reflect"
	"strings"

	"github.com/wasmeval/wasmeval/internal/goja/ast"
	"github.com/wasmeval/wasmeval/internal/goja/token"
)

// What the source guards can leave out (source.go).
//
// A loop's safe-point counter and the + guard's type test cost a tight
// loop about 45% each (BenchmarkLoop). Two kinds of code need neither:
//
//   - A loop that calls nothing and makes no objects, arrays, functions,
//     templates or properties (loopMayGrow is false) holds no more after a
//     turn than before it, except a longer text in a variable (`s += c`):
//     it needs no safe point to measure its session, and the memory
//     monitor judges a growing text by the live heap as it judges native
//     code. Interrupts need no safe point at all: goja checks for them at
//     every instruction.
//   - A sum with an operand that is a number or a BigInt by its form (a
//     product, a difference, a negation, an increment; isNumeric) cannot
//     double a text: it grows it by a number's digits at most, as a sum
//     with a literal does, which the + guard leaves alone too.

// loopMayGrow reports whether a turn of the loop st (a loop statement,
// with its test, update and body) may call code or make anything but
// numbers and texts. The source guards' own calls do not count: they are
// safe points or reservations themselves.
func loopMayGrow(st ast.Statement) bool {
	grows := false
	walkAST(st, func(v reflect.Value) bool {
		if !grows && v.Kind() == reflect.Pointer && grew(v.Interface()) {
			grows = true
		}
		return !grows
	}, nil)
	return grows
}

// grew reports whether node n, of a loop, may call code or grow what the
// session holds.
func grew(n any) bool {
	switch x := n.(type) {
	case *ast.CallExpression:
		id, ok := x.Callee.(*ast.Identifier)
		return !ok || !strings.HasPrefix(id.Name.String(), "%wasmeval.")
	case *ast.NewExpression, *ast.ObjectLiteral, *ast.ArrayLiteral, *ast.FunctionLiteral,
		*ast.ArrowFunctionLiteral, *ast.ClassLiteral, *ast.RegExpLiteral, *ast.SpreadElement,
		*ast.YieldExpression, *ast.AwaitExpression, *ast.FunctionDeclaration, *ast.ClassDeclaration,
		*ast.ForInStatement, *ast.ForOfStatement, *ast.WithStatement, *ast.TryStatement,
		*ast.ThrowStatement:
		// A for-in or for-of calls an iterator or lists keys; a try or
		// a throw makes error objects.
		return true
	case *ast.TemplateLiteral:
		return x.Tag != nil
	case *ast.AssignExpression:
		// A property set may add a property (or run a setter).
		_, ok := x.Left.(*ast.Identifier)
		return !ok
	case *ast.UnaryExpression:
		switch x.Operator {
		case token.INCREMENT, token.DECREMENT:
			_, ok := x.Operand.(*ast.Identifier)
			return !ok
		case token.DELETE:
			return true
		}
	}
	return false
}

// isNumeric reports whether e is a number or a BigInt by its form, if it
// does not throw.
func isNumeric(e ast.Expression) bool {
	switch x := e.(type) {
	case *ast.NumberLiteral:
		return true
	case *ast.BinaryExpression:
		switch x.Operator {
		case token.MINUS, token.MULTIPLY, token.SLASH, token.REMAINDER, token.EXPONENT, token.AND,
			token.OR, token.EXCLUSIVE_OR, token.SHIFT_LEFT, token.SHIFT_RIGHT, token.UNSIGNED_SHIFT_RIGHT:
			return true
		}
	case *ast.UnaryExpression:
		switch x.Operator {
		case token.MINUS, token.PLUS, token.BITWISE_NOT, token.INCREMENT, token.DECREMENT:
			return true
		}
	case *ast.ConditionalExpression:
		// numbersFirst's form of a guarded product.
		return isNumeric(x.Consequent) && isNumeric(x.Alternate)
	case *ast.CallExpression:
		// The guards of *, **, << and >>.
		if id, ok := x.Callee.(*ast.Identifier); ok {
			switch id.Name.String() {
			case opMul, opPow, opShl, opSar:
				return true
			}
		}
	}
	return false
}
