package js

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/wasmeval/wasmeval/internal/goja"
	"github.com/wasmeval/wasmeval/internal/goja/ast"
	"github.com/wasmeval/wasmeval/internal/goja/file"
	"github.com/wasmeval/wasmeval/internal/goja/parser"
	"github.com/wasmeval/wasmeval/internal/goja/token"
	"github.com/wasmeval/wasmeval/internal/goja/unistring"
)

// Source guards: all code the guest runs (cells, modules, eval, the
// Function constructors) goes through these before goja compiles it.
//
// goja's parser recurses once per nested bracket, template or prefix
// operator, in Go, with no limit: 1.5 million nested brackets (a few MB of
// text, which eval can make) overflow the goroutine's stack, a fatal error
// that ends the process. Its compiler takes time quadratic in the length
// of a chain of binary operators: `1+1+...` 100 000 times compiled for 90 s
// with no interrupt possible. checkNesting refuses deep nestings before the
// parser sees them, checkDepth deep trees before the compiler does.
//
// Spreading (`[...x]`, `f(...x)`, `{...x}`) runs in native code over all of
// x: guardOperators passes each spread value through a check first.
//
// BigInt operators run in native code: `2n ** (2n ** 40n)` or
// `1n << (2n ** 40n)` ask Go for terabytes at once, and Go ends the process
// when it cannot have them. guardOperators rewrites `**`, `<<` and `>>`
// (and their assignments) into calls of the prelude's guards, which refuse
// a BigInt result of more than maxBigIntBits bits with V8's RangeError. An
// operand that is a number literal needs no guard (a BigInt on the other
// side is a TypeError), so `x ** 2` and `h << 5` stay as they are.
// Multiplication is rewritten too: squaring doubles a BigInt's size, and
// a product too big to turn into text in time is refused (memory.go).

const (
	// maxSourceNesting is the deepest nesting of brackets, templates and
	// right-recursive operators (prefix operators, ?:, assignments, arrows)
	// that code may have.
	maxSourceNesting = 2000
	// maxASTDepth is the deepest syntax tree goja may compile.
	maxASTDepth = 3000
	// maxBigIntBits is the largest BigInt that ** and the shifts make.
	maxBigIntBits = 1 << 22
)

// The prelude's operator guards, as global properties whose names no
// JavaScript identifier can spell, so that no binding shadows them.
const (
	opPow = "%wasmeval.pow"
	opShl = "%wasmeval.shl"
	opSar = "%wasmeval.sar"
	opMul = "%wasmeval.mul"
	// opAdd reserves the memory of a long concatenation before goja
	// copies it (guards.js): `s = s + s` doubling past the memory limit
	// otherwise made the whole copy before an interrupt could land.
	opAdd = "%wasmeval.add"
	// opProto checks a prototype that code gives an object natively (an
	// object literal's __proto__, `F.prototype = x` before `new F`), and
	// opProtoClass a class's superclass: goja looks properties up a
	// prototype chain by recursing in Go (guards.js caps their depth).
	opProto      = "%wasmeval.proto"
	opProtoClass = "%wasmeval.protoClass"
	opAssign     = "%wasmeval.assign" // (object, key, operator, right)
	// opSpread checks what `...x` spreads: goja spreads an array in
	// native code, all of its length (a sparse Array(2**31) too).
	opSpread = "%wasmeval.spread"
)

// nestingError is code that nests too deeply for the parser or compiler.
type nestingError struct{ what string }

func (e *nestingError) Error() string {
	return fmt.Sprintf("the code %s: it is refused before parsing, since goja's parser and compiler recurse without limit in native code; split it up or build the structure at run time", e.what)
}

// checkNesting scans src for brackets, template substitutions and chains
// of right-recursive operators nested deeper than maxSourceNesting. It
// tokenizes strings, comments, templates and regular expressions loosely,
// never recursing itself.
func checkNesting(src string) error {
	type frame struct {
		template bool // a ${ substitution: its } resumes the template
		chain    int  // the operator chain outside this bracket
	}
	if err := checkBigIntLiterals(src); err != nil {
		return err
	}
	var stack []frame
	chain := 0
	prevValue := false // the last token ends an operand: a / is division
	i, n := 0, len(src)
	push := func(template bool) error {
		stack = append(stack, frame{template: template, chain: chain})
		chain = 0
		if len(stack)+chain > maxSourceNesting {
			return &nestingError{fmt.Sprintf("nests brackets more than %d deep", maxSourceNesting)}
		}
		return nil
	}
	// skipTemplate skips template text up to a ${ (then true) or the closing
	// backquote.
	skipTemplate := func() bool {
		for i < n {
			switch src[i] {
			case '\\':
				i += 2
			case '`':
				i++
				return false
			case '$':
				if i+1 < n && src[i+1] == '{' {
					i += 2
					return true
				}
				i++
			default:
				i++
			}
		}
		return false
	}
	newline := false // a line break after an operand: maybe a new statement
	for i < n {
		c := src[i]
		if c == '\n' && prevValue {
			newline = true
		}
		if newline && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '/' {
			// A statement without a semicolon ends the chains of the last.
			if isIdentByte(c) || c == '\'' || c == '"' || c == '`' {
				chain = 0
			}
			newline = false
		}
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '/' && i+1 < n && src[i+1] == '/':
			if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = n
			}
			continue
		case c == '/' && i+1 < n && src[i+1] == '*':
			if j := strings.Index(src[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = n
			}
			continue
		case c == '\'' || c == '"':
			for i++; i < n && src[i] != c && src[i] != '\n'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
			i++
			prevValue = true
		case c == '`':
			i++
			if skipTemplate() {
				if err := push(true); err != nil {
					return err
				}
				prevValue = false
				continue
			}
			prevValue = true
		case c == '/' && !prevValue:
			inClass := false
			for i++; i < n && src[i] != '\n'; i++ {
				if src[i] == '\\' {
					i++
				} else if src[i] == '[' {
					inClass = true
				} else if src[i] == ']' {
					inClass = false
				} else if src[i] == '/' && !inClass {
					break
				}
			}
			i++
			prevValue = true
		case c == '(' || c == '[' || c == '{':
			i++
			if err := push(false); err != nil {
				return err
			}
			prevValue = false
		case c == ')' || c == ']' || c == '}':
			i++
			if len(stack) == 0 {
				prevValue = true
				continue
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			chain = top.chain
			if c == '}' && top.template {
				if skipTemplate() {
					if err := push(true); err != nil {
						return err
					}
					prevValue = false
					continue
				}
			}
			prevValue = true
		case isIdentByte(c):
			j := i
			for j < n && isIdentByte(src[j]) {
				j++
			}
			word := src[i:j]
			i = j
			switch word {
			case "typeof", "void", "delete", "await", "new", "yield":
				chain++
				prevValue = false
			default:
				prevValue = !regexAfter[word]
			}
		default:
			op := punctuator(src[i:])
			i += len(op)
			prefix := !prevValue
			switch op {
			case ";", ",":
				chain = 0
			case "!", "~", "?", "=>", "=", "**=", "<<=", ">>=", ">>>=", "+=", "-=", "*=", "/=", "%=",
				"&=", "|=", "^=", "&&=", "||=", "??=":
				chain++
			case "+", "-", "++", "--":
				if prefix {
					chain++
				}
			}
			prevValue = (op == "++" || op == "--") && !prefix
		}
		if len(stack)+chain > maxSourceNesting {
			return &nestingError{fmt.Sprintf("chains more than %d prefix, conditional or assignment operators", maxSourceNesting)}
		}
	}
	return nil
}

// punctuators are JavaScript's punctuators of more than one character,
// longest first.
var punctuators = []string{">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
	"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=",
	"|=", "^=", "**", "<<", ">>"}

// punctuator returns the punctuator at the start of s: the longest one,
// or its first byte.
func punctuator(s string) string {
	for _, p := range punctuators {
		if strings.HasPrefix(s, p) {
			return p
		}
	}
	return s[:1]
}

// checkDepth refuses a syntax tree deeper than maxASTDepth. It walks with
// a stack of its own: the tree may be far deeper than Go should recurse.
func checkDepth(root ast.Node) error {
	type item struct {
		v     reflect.Value
		depth int
	}
	stack := []item{{reflect.ValueOf(root), 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		v, depth := it.v, it.depth
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || v.Type() == fileType {
				continue
			}
			if depth++; depth > maxASTDepth {
				return &nestingError{fmt.Sprintf("nests expressions more than %d deep (a long chain of binary operators counts one level each)", maxASTDepth)}
			}
			stack = append(stack, item{v.Elem(), depth})
		case reflect.Interface:
			if !v.IsNil() {
				stack = append(stack, item{v.Elem(), depth})
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if f := v.Field(i); f.Kind() == reflect.Pointer || f.Kind() == reflect.Interface || f.Kind() == reflect.Slice || f.Kind() == reflect.Struct {
					stack = append(stack, item{f, depth})
				}
			}
		case reflect.Slice:
			for i := range v.Len() {
				stack = append(stack, item{v.Index(i), depth})
			}
		}
	}
	return nil
}

// guardOperators rewrites, in place, the operators that can make a huge
// BigInt into calls of the prelude's guards. The tree must have passed
// checkDepth: the walk recurses.
func guardOperators(root ast.Node) {
	// A labelled loop is counted at its label: the label must stay on the
	// loop itself, so a label's statement is not rewritten in its place.
	var labelled map[ast.Statement]bool
	walkAST(root, func(v reflect.Value) bool {
		if v.Kind() == reflect.Pointer {
			if l, ok := v.Interface().(*ast.LabelledStatement); ok {
				if labelled == nil {
					labelled = make(map[ast.Statement]bool)
				}
				labelled[l.Statement] = true
			}
		}
		return true
	}, func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			switch x := v.Interface().(type) {
			case *ast.SpreadElement:
				x.Expression = callGuard(opSpread, x.Expression.Idx0(), x.Expression.Idx1(), x.Expression)
			case *ast.ClassLiteral:
				if x.SuperClass != nil {
					x.SuperClass = callGuard(opProtoClass, x.SuperClass.Idx0(), x.SuperClass.Idx1(), x.SuperClass)
				}
			case *ast.ObjectLiteral:
				for _, p := range x.Value {
					if k, ok := p.(*ast.PropertyKeyed); ok && !k.Computed && k.Kind == ast.PropertyKindValue && isName(k.Key, "__proto__") {
						k.Value = callGuard(opProto, k.Value.Idx0(), k.Value.Idx1(), k.Value)
					}
				}
			case *ast.AssignExpression:
				if x.Operator == token.ASSIGN && isPrototypeOf(x.Left) {
					x.Right = callGuard(opProto, x.Right.Idx0(), x.Right.Idx1(), x.Right)
				}
			}
		case reflect.Interface:
			if !v.CanSet() {
				return
			}
			if e, ok := v.Interface().(ast.Expression); ok {
				if r, ok := rewriteOperator(e); ok && reflect.TypeOf(r).AssignableTo(v.Type()) {
					v.Set(reflect.ValueOf(r))
				}
			}
			if st, ok := v.Interface().(ast.Statement); ok && !labelled[st] {
				if r, ok := countLoop(st); ok && reflect.TypeOf(r).AssignableTo(v.Type()) {
					v.Set(reflect.ValueOf(r))
				}
			}
		}
	})
}

// Loops count their turns, and every loopTurns turns call the prelude's
// safe point (memory.go): a cell spinning in a loop of plain JavaScript
// then still lets the memory monitor measure its session.
//
//	L: for (...) body  ->  { let %k = 0; L: for (...) { if (++%k === 65536) { %k = 0; %sp() } body } }
//
// A counter costs a third or so of a loop that does next to nothing, and
// nothing measurable in one that does some work.
const (
	loopCounter = "%wasmeval.k"
	opSafePoint = "%wasmeval.sp"
	loopTurns   = 65536
)

// countLoop returns st, a loop or a labelled loop, counting its turns.
func countLoop(st ast.Statement) (ast.Statement, bool) {
	inner := st
	for {
		l, ok := inner.(*ast.LabelledStatement)
		if !ok {
			break
		}
		inner = l.Statement
	}
	var body *ast.Statement
	switch x := inner.(type) {
	case *ast.ForStatement:
		body = &x.Body
	case *ast.ForInStatement:
		body = &x.Body
	case *ast.ForOfStatement:
		body = &x.Body
	case *ast.WhileStatement:
		body = &x.Body
	case *ast.DoWhileStatement:
		body = &x.Body
	default:
		return nil, false
	}
	if !loopMayGrow(inner) {
		return nil, false // growth.go
	}
	idx := st.Idx0()
	counter := func() *ast.Identifier { return &ast.Identifier{Name: loopCounter, Idx: idx} }
	number := func(n int64) *ast.NumberLiteral {
		return &ast.NumberLiteral{Idx: idx, Literal: fmt.Sprint(n), Value: n}
	}
	check := &ast.IfStatement{
		If: idx,
		Test: &ast.BinaryExpression{
			Operator: token.STRICT_EQUAL,
			Left:     &ast.UnaryExpression{Operator: token.INCREMENT, Idx: idx, Operand: counter()},
			Right:    number(loopTurns),
		},
		Consequent: &ast.BlockStatement{LeftBrace: idx, RightBrace: idx, List: []ast.Statement{
			&ast.ExpressionStatement{Expression: &ast.AssignExpression{Operator: token.ASSIGN, Left: counter(), Right: number(0)}},
			&ast.ExpressionStatement{Expression: callGuard(opSafePoint, idx, idx+1)},
		}},
	}
	*body = &ast.BlockStatement{LeftBrace: idx, RightBrace: idx, List: []ast.Statement{check, *body}}
	decl := &ast.LexicalDeclaration{Idx: idx, Token: token.LET, List: []*ast.Binding{{Target: counter(), Initializer: number(0)}}}
	return &ast.BlockStatement{LeftBrace: idx, RightBrace: idx, List: []ast.Statement{decl, st}}, true
}

// guardedOps maps the operators that guardOperators rewrites to their
// guards.
var guardedOps = map[token.Token]string{
	token.EXPONENT:    opPow,
	token.SHIFT_LEFT:  opShl,
	token.SHIFT_RIGHT: opSar,
	token.MULTIPLY:    opMul,
	token.PLUS:        opAdd,
}

// rewriteOperator returns the guarded form of e, if e needs one.
func rewriteOperator(e ast.Expression) (ast.Expression, bool) {
	switch x := e.(type) {
	case *ast.TemplateLiteral:
		return rewriteTemplate(x) // templates.go
	case *ast.BinaryExpression:
		if r, ok := rewriteComparison(x); ok {
			return r, true // compare.go
		}
		guard, ok := guardedOps[x.Operator]
		if !ok || isNumberLiteral(x.Right) || isNumberLiteral(x.Left) {
			return nil, false
		}
		if guard == opAdd && (isLiteral(x.Left) || isLiteral(x.Right) || isNumeric(x.Left) || isNumeric(x.Right)) {
			return nil, false // grows a string by a literal's length at most
		}
		call := callGuard(guard, x.Left.Idx0(), x.Right.Idx1(), x.Left, x.Right)
		switch guard {
		case opMul:
			return numbersFirst(x, call), true
		case opAdd:
			return numberFirst(x.Left, x, call), true
		}
		return call, true
	case *ast.AssignExpression:
		guard, ok := guardedOps[x.Operator]
		if !ok || isNumberLiteral(x.Right) || guard == opAdd && (isLiteral(x.Right) || isNumeric(x.Right)) {
			return nil, false
		}
		idx := x.Left.Idx0()
		switch l := x.Left.(type) {
		case *ast.DotExpression:
			if _, super := l.Left.(*ast.SuperExpression); !super {
				key := &ast.StringLiteral{Idx: l.Identifier.Idx, Literal: "'" + l.Identifier.Name.String() + "'", Value: l.Identifier.Name}
				return callGuard(opAssign, idx, x.Right.Idx1(), l.Left, key, opName(guard), x.Right), true
			}
		case *ast.BracketExpression:
			return callGuard(opAssign, idx, x.Right.Idx1(), l.Left, l.Member, opName(guard), x.Right), true
		}
		// An identifier, or super.x and this.#x, whose references are
		// evaluated twice: once to read, once to assign.
		var right ast.Expression = callGuard(guard, idx, x.Right.Idx1(), x.Left, x.Right)
		switch guard {
		case opMul:
			right = numbersFirst(&ast.BinaryExpression{Operator: token.MULTIPLY, Left: x.Left, Right: x.Right}, right.(*ast.CallExpression))
		case opAdd:
			right = numberFirst(x.Left, &ast.BinaryExpression{Operator: token.PLUS, Left: x.Left, Right: x.Right}, right.(*ast.CallExpression))
		}
		return &ast.AssignExpression{
			Operator: token.ASSIGN,
			Left:     x.Left,
			Right:    right,
		}, true
	}
	return nil, false
}

// numbersFirst keeps `a * b` of two identifiers native when both are
// numbers, as nearly every product is: the guard's call would cost more
// than the product. Identifiers read twice read the same value (only a
// getter on the global object, or in a with block, could tell).
//
//	a * b  ->  typeof a === 'number' && typeof b === 'number' ? a * b : %mul(a, b)
func numbersFirst(x *ast.BinaryExpression, call *ast.CallExpression) ast.Expression {
	l, okL := x.Left.(*ast.Identifier)
	r, okR := x.Right.(*ast.Identifier)
	if !okL || !okR {
		return call
	}
	isNumber := func(id *ast.Identifier) ast.Expression {
		c := *id
		return &ast.BinaryExpression{
			Operator: token.STRICT_EQUAL,
			Left:     &ast.UnaryExpression{Operator: token.TYPEOF, Idx: id.Idx, Operand: &c},
			Right:    &ast.StringLiteral{Idx: id.Idx, Literal: "'number'", Value: "number"},
		}
	}
	lc, rc := *l, *r
	return &ast.ConditionalExpression{
		Test:       &ast.BinaryExpression{Operator: token.LOGICAL_AND, Left: isNumber(l), Right: isNumber(r)},
		Consequent: &ast.BinaryExpression{Operator: token.MULTIPLY, Left: &lc, Right: &rc},
		Alternate:  call,
	}
}

// numberFirst keeps `a + b` native when a is an identifier and the sum
// needs no reservation: a is a number (the sum, or a text at most a
// number's length longer than b), or, when b is an identifier too, b is a
// number or both are texts shorter together than the guard would reserve
// for. Otherwise the guard's call, which costs more than a short sum.
// b is evaluated once either way, but compiled twice: only a small b is,
// so that nested sums do not double the code at every level.
//
//	a + b  ->  typeof a === 'number' || typeof b === 'number' ||
//	           typeof a === 'string' && typeof b === 'string' && a.length + b.length < 524288
//	           ? a + b : %add(a, b)
func numberFirst(left ast.Expression, x *ast.BinaryExpression, call *ast.CallExpression) ast.Expression {
	id, ok := left.(*ast.Identifier)
	if !ok || !isSmall(x.Right, maxDuplicated) {
		return call
	}
	test := typeIs(id, "number")
	if r, ok := x.Right.(*ast.Identifier); ok {
		length := func(id *ast.Identifier) ast.Expression {
			c := *id
			return &ast.DotExpression{Left: &c, Identifier: ast.Identifier{Name: "length", Idx: id.Idx}}
		}
		short := &ast.BinaryExpression{
			Operator: token.LESS,
			Left:     &ast.BinaryExpression{Operator: token.PLUS, Left: length(id), Right: length(r)},
			Right:    &ast.NumberLiteral{Idx: id.Idx, Literal: "524288", Value: int64(524288)},
		}
		texts := &ast.BinaryExpression{Operator: token.LOGICAL_AND,
			Left:  &ast.BinaryExpression{Operator: token.LOGICAL_AND, Left: typeIs(id, "string"), Right: typeIs(r, "string")},
			Right: short}
		test = &ast.BinaryExpression{Operator: token.LOGICAL_OR,
			Left:  &ast.BinaryExpression{Operator: token.LOGICAL_OR, Left: test, Right: typeIs(r, "number")},
			Right: texts}
	}
	return &ast.ConditionalExpression{Test: test, Consequent: x, Alternate: call}
}

// typeIs is `typeof id === 'kind'`.
func typeIs(id *ast.Identifier, kind string) ast.Expression {
	c := *id
	return &ast.BinaryExpression{
		Operator: token.STRICT_EQUAL,
		Left:     &ast.UnaryExpression{Operator: token.TYPEOF, Idx: id.Idx, Operand: &c},
		Right:    &ast.StringLiteral{Idx: id.Idx, Literal: "'" + kind + "'", Value: unistring.NewFromString(kind)},
	}
}

// maxDuplicated is the most syntax nodes an operand that numberFirst
// compiles twice may have.
const maxDuplicated = 40

// isSmall reports whether e has at most limit syntax nodes.
func isSmall(e ast.Expression, limit int) bool {
	n := 0
	var count func(v reflect.Value) bool
	count = func(v reflect.Value) bool {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() || v.Type() == fileType {
				return true
			}
			if v.Kind() == reflect.Pointer {
				if n++; n > limit {
					return false
				}
			}
			return count(v.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				if !count(v.Field(i)) {
					return false
				}
			}
		case reflect.Slice:
			for i := range v.Len() {
				if !count(v.Index(i)) {
					return false
				}
			}
		}
		return true
	}
	return count(reflect.ValueOf(e))
}

// isName reports whether e, a property key, is name.
func isName(e ast.Expression, name string) bool {
	switch k := e.(type) {
	case *ast.Identifier:
		return k.Name.String() == name
	case *ast.StringLiteral:
		return k.Value.String() == name
	}
	return false
}

// isPrototypeOf reports whether e is `x.prototype` or `x['prototype']`.
func isPrototypeOf(e ast.Expression) bool {
	switch m := e.(type) {
	case *ast.DotExpression:
		return m.Identifier.Name.String() == "prototype"
	case *ast.BracketExpression:
		return isName(m.Member, "prototype")
	}
	return false
}

// isLiteral reports whether e is a literal of a primitive value: text, a
// number, a boolean, null, or a template without substitutions.
func isLiteral(e ast.Expression) bool {
	switch x := e.(type) {
	case *ast.StringLiteral, *ast.NumberLiteral, *ast.BooleanLiteral, *ast.NullLiteral:
		return true
	case *ast.TemplateLiteral:
		return x.Tag == nil && len(x.Expressions) == 0
	}
	return false
}

func opName(guard string) ast.Expression {
	return &ast.StringLiteral{Literal: "'" + guard + "'", Value: unistring.NewFromString(guard)}
}

func callGuard(guard string, from, to file.Idx, args ...ast.Expression) *ast.CallExpression {
	return &ast.CallExpression{
		Callee:           &ast.Identifier{Name: unistring.NewFromString(guard), Idx: from},
		LeftParenthesis:  from,
		ArgumentList:     args,
		RightParenthesis: max(to-1, from),
	}
}

// isNumberLiteral reports whether e is a number literal, signed or not (a
// BigInt literal is a NumberLiteral too, and is not one).
func isNumberLiteral(e ast.Expression) bool {
	if u, ok := e.(*ast.UnaryExpression); ok && !u.Postfix && (u.Operator == token.MINUS || u.Operator == token.PLUS) {
		e = u.Operand
	}
	n, ok := e.(*ast.NumberLiteral)
	if !ok {
		return false
	}
	switch n.Value.(type) {
	case int64, float64:
		return true
	}
	return false
}

// guardProgram checks and rewrites a parsed program: a module, or code
// made with eval or a Function constructor.
func guardProgram(prog *ast.Program) error {
	if err := checkDepth(prog); err != nil {
		return err
	}
	// As in cells (hoist.go): eval('1 < 2 < 3') and a module's chains
	// grouped to the right.
	regroupRelational(prog)
	guardOperators(prog)
	return nil
}

// parseCost is the parser's option that reserves what parsing and
// compiling code take as the parser reads it (about 30 bytes a byte of
// ordinary code, 475 of `x=>x=>...`; internal/goja/parser/cost.go), made
// in native code where no interrupt lands: eval, the Function
// constructors and require parse with it.
func (in *instance) parseCost() parser.Option { return parser.WithCostHook(in.reserve) }

// compileGuarded parses src as a script with name, with the parser's
// options extra, guards it and compiles it.
func compileGuarded(name, src string, strict bool, extra ...parser.Option) (*goja.Program, *ast.Program, error) {
	if err := checkNesting(src); err != nil {
		return nil, nil, err
	}
	prog, err := parser.ParseFile(nil, name, src, 0, append(extra, parser.WithDisableSourceMaps)...)
	if err != nil {
		return nil, nil, err
	}
	if err := guardProgram(prog); err != nil {
		return nil, nil, err
	}
	prg, err := goja.CompileAST(prog, strict)
	if err != nil {
		return nil, nil, err
	}
	return prg, prog, nil
}

// functionKinds are the source prefixes of the function constructors
// (goja has no async generators).
var functionKinds = map[string]string{
	"Function":          "function",
	"GeneratorFunction": "function*",
	"AsyncFunction":     "async function",
}

// compileFunction is the Function constructors' work: a function of params
// and body, made in the global scope from guarded code.
func (in *instance) compileFunction(kind, params, body string) goja.Value {
	prefix, ok := functionKinds[kind]
	if !ok {
		panic(in.vm.NewTypeError("unknown function kind " + kind))
	}
	src := "(" + prefix + " anonymous(" + params + "\n) {\n" + body + "\n})"
	prg, prog, err := compileGuarded("<anonymous>", src, false, in.parseCost())
	if err == nil && !isOneFunction(prog) {
		err = fmt.Errorf("the parameters or the body of the function are not well-formed")
	}
	if err != nil {
		in.throwSyntax(err)
	}
	v, err := in.vm.RunProgram(prg)
	if err != nil {
		in.rethrow(err)
	}
	return v
}

// isOneFunction reports whether prog is a single function expression.
func isOneFunction(prog *ast.Program) bool {
	if prog == nil || len(prog.Body) != 1 {
		return false
	}
	es, ok := prog.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return false
	}
	_, ok = es.Expression.(*ast.FunctionLiteral)
	return ok
}

// evalScript is the global eval's work: src, guarded, run in the global
// scope as an indirect eval runs it. Its let, const and class declarations
// stay inside it (the code runs as a block), its var and function
// declarations become globals.
func (in *instance) evalScript(src string) goja.Value {
	strict := hasUseStrict(src)
	prg, prog, err := compileGuarded("<eval>", "{\n"+src+"\n}", strict, in.parseCost())
	if err == nil && (len(prog.Body) != 1 || !isBlock(prog.Body[0])) {
		err = fmt.Errorf("unexpected token: the code closes more blocks than it opens")
	}
	if err != nil {
		in.throwSyntax(err)
	}
	v, err := in.vm.RunProgram(prg)
	if err != nil {
		in.rethrow(err)
	}
	return v
}

func isBlock(st ast.Statement) bool {
	_, ok := st.(*ast.BlockStatement)
	return ok
}

// hasUseStrict reports whether src begins with a "use strict" directive.
func hasUseStrict(src string) bool {
	for {
		src = strings.TrimLeft(src, " \t\r\n")
		switch {
		case strings.HasPrefix(src, "//"):
			i := strings.IndexByte(src, '\n')
			if i < 0 {
				return false
			}
			src = src[i:]
		case strings.HasPrefix(src, "/*"):
			i := strings.Index(src, "*/")
			if i < 0 {
				return false
			}
			src = src[i+2:]
		default:
			return strings.HasPrefix(src, `"use strict"`) || strings.HasPrefix(src, `'use strict'`)
		}
	}
}

// throwSyntax throws a SyntaxError for code that does not parse or is
// refused.
func (in *instance) throwSyntax(err error) {
	msg := err.Error()
	if ne, ok := err.(*nestingError); ok {
		msg = ne.Error()
	}
	panic(in.vm.NewError("SyntaxError", msg))
}
