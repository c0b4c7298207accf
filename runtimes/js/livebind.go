package js

import (
	"reflect"

	"github.com/wasmeval/wasmeval/internal/goja/ast"
	"github.com/wasmeval/wasmeval/internal/goja/unistring"
)

// Imports in a module file are live bindings, as in ES modules: a binding
// imported from another module reads that module's export each time it is
// used, so that modules that import each other (a cycle) see each other's
// exports once they are made. rewriteModuleSyntax turns
//
//	import d, { a, b as c } from './x.js'  ->  const __wasmeval_i0 = __wasmeval.import("./x.js");
//
// and liveImports then replaces every reference to d, a and c in the module
// by __wasmeval_i0.default, .a and .b, except where a declaration of the
// same name (a parameter, a variable of a function or block, a catch
// parameter) hides the import. Binding patterns are left alone. Cells keep
// copies: their imports become globals of the session.

// importBinding is where an imported local name reads from.
type importBinding struct {
	ns       string // the namespace variable
	imported string // the export's name
}

var (
	exprType        = reflect.TypeFor[ast.Expression]()
	identifierPtr   = reflect.TypeFor[*ast.Identifier]()
	objectLiteralTy = reflect.TypeFor[ast.ObjectLiteral]()
)

// liveImports rewrites references to imported bindings in root (the
// module's function literal), in place. The tree must have passed
// checkDepth: the walk recurses.
func liveImports(root ast.Node, imports map[string]importBinding) {
	if len(imports) == 0 {
		return
	}
	hidden := map[string]int{}
	dot := func(id *ast.Identifier, b importBinding) *ast.DotExpression {
		return &ast.DotExpression{
			Left:       &ast.Identifier{Name: unistring.String(b.ns), Idx: id.Idx},
			Identifier: ast.Identifier{Name: unistring.String(b.imported), Idx: id.Idx},
		}
	}
	live := func(name unistring.String) (importBinding, bool) {
		b, ok := imports[string(name)]
		return b, ok && hidden[string(name)] == 0
	}
	// hide adds the imported names among names to the hidden set, and
	// returns the function that takes them out again.
	hide := func(names []string) func() {
		var mine []string
		for _, n := range names {
			if _, ok := imports[n]; ok {
				hidden[n]++
				mine = append(mine, n)
			}
		}
		return func() {
			for _, n := range mine {
				hidden[n]--
			}
		}
	}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || v.Type() == fileType {
				return
			}
			node, _ := v.Interface().(ast.Node)
			switch n := node.(type) {
			case *ast.ArrayPattern, *ast.ObjectPattern:
				return // declarations, or assignments to them
			case *ast.CallExpression:
				// a() calls the import with this undefined, not the
				// namespace: (0, ns.a)().
				if id, ok := n.Callee.(*ast.Identifier); ok {
					if b, ok := live(id.Name); ok {
						n.Callee = &ast.SequenceExpression{Sequence: []ast.Expression{
							&ast.NumberLiteral{Idx: id.Idx, Literal: "0", Value: int64(0)}, dot(id, b),
						}}
					}
				}
			case *ast.FunctionLiteral:
				if v.Pointer() != reflect.ValueOf(root).Pointer() {
					defer hide(functionNames(n.Name, n.ParameterList, n.DeclarationList, n.Body))()
				}
			case *ast.ArrowFunctionLiteral:
				body, _ := n.Body.(*ast.BlockStatement)
				defer hide(functionNames(nil, n.ParameterList, n.DeclarationList, body))()
			case *ast.BlockStatement:
				defer hide(lexicalNames(n.List))()
			case *ast.CaseStatement:
				defer hide(lexicalNames(n.Consequent))()
			case *ast.CatchStatement:
				defer hide(bindingNames(n.Parameter))()
			case *ast.ForStatement:
				if init, ok := n.Initializer.(*ast.ForLoopInitializerLexicalDecl); ok {
					defer hide(declaredNames(&init.LexicalDeclaration))()
				}
			case *ast.ForInStatement:
				if d, ok := n.Into.(*ast.ForDeclaration); ok {
					defer hide(bindingNames(d.Target))()
				}
			case *ast.ForOfStatement:
				if d, ok := n.Into.(*ast.ForDeclaration); ok {
					defer hide(bindingNames(d.Target))()
				}
			case *ast.ClassLiteral:
				if n.Name != nil {
					defer hide([]string{n.Name.Name.String()})()
				}
			case *ast.ClassStaticBlock:
				defer hide(varNames(n.DeclarationList))()
			case *ast.ParameterList:
				// Parameters are declarations; only their defaults read.
				for _, b := range n.List {
					walk(reflect.ValueOf(&b.Initializer).Elem())
				}
				return
			case *ast.Binding:
				walk(reflect.ValueOf(&n.Initializer).Elem())
				return
			case *ast.PropertyKeyed:
				if !n.Computed {
					walk(reflect.ValueOf(&n.Value).Elem())
					return
				}
			case *ast.MethodDefinition:
				if !n.Computed {
					walk(reflect.ValueOf(n.Body))
					return
				}
			case *ast.FieldDefinition:
				if !n.Computed {
					walk(reflect.ValueOf(&n.Initializer).Elem())
					return
				}
			}
			walk(v.Elem())
		case reflect.Interface:
			if v.IsNil() {
				return
			}
			if v.Type() == exprType && v.Elem().Type() == identifierPtr && v.CanSet() {
				id := v.Elem().Interface().(*ast.Identifier)
				if b, ok := live(id.Name); ok {
					v.Set(reflect.ValueOf(dot(id, b)))
				}
				return
			}
			walk(v.Elem())
		case reflect.Struct:
			if v.Type() == objectLiteralTy {
				// {a}: a shorthand that names an import reads it.
				props := v.FieldByName("Value")
				for i := range props.Len() {
					slot := props.Index(i)
					if ps, ok := slot.Interface().(*ast.PropertyShort); ok && ps.Initializer == nil {
						if b, ok := live(ps.Name.Name); ok {
							slot.Set(reflect.ValueOf(&ast.PropertyKeyed{
								Key:   &ast.StringLiteral{Idx: ps.Name.Idx, Literal: ps.Name.Name.String(), Value: ps.Name.Name},
								Kind:  ast.PropertyKindValue,
								Value: dot(&ps.Name, b),
							}))
						}
					}
				}
			}
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(root))
}

// functionNames are the names a function declares in its own scope.
func functionNames(name *ast.Identifier, params *ast.ParameterList, vars []*ast.VariableDeclaration, body *ast.BlockStatement) []string {
	var names []string
	if name != nil {
		names = append(names, name.Name.String())
	}
	if params != nil {
		for _, b := range params.List {
			names = append(names, bindingNames(b.Target)...)
		}
		if params.Rest != nil {
			names = append(names, bindingNames(params.Rest)...)
		}
	}
	names = append(names, varNames(vars)...)
	if body != nil {
		names = append(names, lexicalNames(body.List)...)
	}
	return names
}

func varNames(vars []*ast.VariableDeclaration) []string {
	var names []string
	for _, d := range vars {
		for _, b := range d.List {
			names = append(names, bindingNames(b.Target)...)
		}
	}
	return names
}

// lexicalNames are the names that the statements of a block declare in it:
// let, const, class and function (and var, which hides an import the
// same way for the code that follows).
func lexicalNames(list []ast.Statement) []string {
	var names []string
	for _, st := range list {
		names = append(names, declaredNames(st)...)
	}
	return names
}

// bindingNames are the names a binding target (an identifier or a
// pattern) declares.
func bindingNames(target any) []string {
	var names []string
	var visit func(e any)
	visit = func(e any) {
		switch t := e.(type) {
		case *ast.Identifier:
			names = append(names, t.Name.String())
		case *ast.Binding:
			visit(t.Target)
		case *ast.AssignExpression:
			visit(t.Left)
		case *ast.ArrayPattern:
			for _, el := range t.Elements {
				if el != nil {
					visit(el)
				}
			}
			if t.Rest != nil {
				visit(t.Rest)
			}
		case *ast.ObjectPattern:
			for _, p := range t.Properties {
				switch p := p.(type) {
				case *ast.PropertyShort:
					names = append(names, p.Name.Name.String())
				case *ast.PropertyKeyed:
					visit(p.Value)
				}
			}
			if t.Rest != nil {
				visit(t.Rest)
			}
		}
	}
	visit(target)
	return names
}

// hoistExportLocals moves the module's exportLocals call (the last
// statement compileModule appends) to the front of its body: as in an ES
// module, its exports exist from the start (a function at once, a let or
// const once its declaration ran), so a module that imports it back, in a
// cycle, reads them live.
func hoistExportLocals(body *ast.BlockStatement) {
	list := body.List
	for i := len(list) - 1; i >= 0; i-- {
		es, ok := list[i].(*ast.ExpressionStatement)
		if !ok {
			continue
		}
		call, ok := es.Expression.(*ast.CallExpression)
		if !ok {
			return
		}
		callee, ok := call.Callee.(*ast.DotExpression)
		if !ok || callee.Identifier.Name != "exportLocals" {
			return
		}
		if left, ok := callee.Left.(*ast.Identifier); !ok || left.Name != "__wasmeval" {
			return
		}
		copy(list[1:i+1], list[:i])
		list[0] = es
		return
	}
}
