package parser

import (
	"fmt"
	"testing"

	"github.com/dop251/goja/ast"
)

// grouping renders binary expressions fully parenthesised, so a test can see
// which way the parser grouped a chain of operators.
func grouping(e ast.Expression) string {
	switch e := e.(type) {
	case *ast.BinaryExpression:
		return "(" + grouping(e.Left) + " " + e.Operator.String() + " " + grouping(e.Right) + ")"
	case *ast.Identifier:
		return string(e.Name)
	case *ast.PrivateIdentifier:
		return "#" + string(e.Name)
	case *ast.ConditionalExpression:
		return "(" + grouping(e.Test) + " ? " + grouping(e.Consequent) + " : " + grouping(e.Alternate) + ")"
	}
	return fmt.Sprintf("%T", e)
}

// TestBinaryAssociativity is the wasmeval patch's test (see ../README.wasmeval.md):
// relational operators group to the left like every other binary level
// except **, which groups to the right.
func TestBinaryAssociativity(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"a < b < c", "((a < b) < c)"},
		{"a > b >= c <= d", "(((a > b) >= c) <= d)"},
		{"a instanceof b instanceof c", "((a instanceof b) instanceof c)"},
		{"a in b in c", "((a in b) in c)"},
		{"a < b in c instanceof d", "(((a < b) in c) instanceof d)"},
		{"a << b < c >> d", "((a << b) < (c >> d))"},
		{"a == b < c != d", "((a == (b < c)) != d)"},
		{"a === b !== c", "((a === b) !== c)"},
		{"a - b - c", "((a - b) - c)"},
		{"a / b % c", "((a / b) % c)"},
		{"a >>> b << c", "((a >>> b) << c)"},
		{"a ** b ** c", "(a ** (b ** c))"},
		{"a ? b : c ? d : e", "(a ? b : (c ? d : e))"},
	} {
		_, program, err := testParse(c.src)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		got := grouping(program.Body[0].(*ast.ExpressionStatement).Expression)
		if got != c.want {
			t.Errorf("%s: parsed as %s, want %s", c.src, got, c.want)
		}
	}

	// `#x in o` is itself a RelationalExpression, so a chain may go on from it.
	_, program, err := testParse("class C { #x; m(o, p) { return #x in o in p } }")
	if err != nil {
		t.Fatal(err)
	}
	m := program.Body[0].(*ast.ClassDeclaration).Class.Body[1].(*ast.MethodDefinition)
	ret := m.Body.Body.List[0].(*ast.ReturnStatement)
	if got, want := grouping(ret.Argument), "((#x in o) in p)"; got != want {
		t.Errorf("#x in o in p: parsed as %s, want %s", got, want)
	}
}
