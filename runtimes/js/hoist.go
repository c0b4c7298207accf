package js

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/wasmeval/wasmeval/internal/goja"
	"github.com/wasmeval/wasmeval/internal/goja/ast"
	"github.com/wasmeval/wasmeval/internal/goja/file"
	"github.com/wasmeval/wasmeval/internal/goja/parser"
	"github.com/wasmeval/wasmeval/internal/goja/token"
	"github.com/wasmeval/wasmeval/internal/goja/unistring"
)

// Declaration hoisting.
//
// Every cell is parsed, turned into a program for the global scope and
// compiled from its AST (goja.CompileAST); the source text is never
// re-generated, so positions stay those of the cell.
//
// A cell without top-level await or return is a script. Its var and function
// declarations already become global properties; its let, const and class
// declarations would become global lexical bindings, which a later cell
// could not declare again. They are rewritten to var declarations:
//
//	let a = 1, b      ->  var a = 1, b = void 0
//	const { c } = o   ->  var { c } = o
//	class D {}        ->  var D = class D {}
//
// A cell with top-level await or return is parsed as the body of
//
//	(async () => {
//	<cell>
//	})
//
// and then taken apart: the var names of the arrow's scope (also those of
// nested blocks) move to the program's declaration list, so they are
// global; let, const and class become var statements as above, which now
// assign to those globals; function declarations move out of the arrow
// into the program, where they are global and hoisted as before. What stays
// in the arrow is the cell's code, with its last expression statement turned
// into `return {<resultKey>: expr}` so that the result is not mistaken for an
// explicit return and a promise result is not awaited (Node's REPL shows
// `Promise { ... }`). The program's completion value is the arrow, which the
// host calls: no frame of glue code shows in stack traces.
//
// The parse of the wrapped text gives every node an offset that is too large
// by the length of the wrapper's first line; shiftPositions moves them back,
// and the program's file is the cell's own text, so line and column in
// stacks and errors are the cell's.

const (
	cellFile    = "<cell>"
	asyncPrefix = "(async () => {\n"
	asyncSuffix = "\n})"
	// resultKey marks the object an async cell returns its last expression
	// in.
	resultKey = "\x00wasmeval:result"
)

// compiledCell is a cell ready to run.
type compiledCell struct {
	prg *goja.Program
	// async is true when running prg yields the async arrow to call.
	async bool
}

// codeError is a cell or module that does not parse or compile.
type codeError struct {
	file      string
	src       string
	line, col int
	msg       string
	kind      string // the error's name; "" is SyntaxError
}

func (e *codeError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.file, e.line, e.col, e.msg)
}

// render formats the error as Node does for a script: the place, the line
// with a caret under the column, and the message.
func (e *codeError) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d\n", e.file, e.line)
	lines := strings.Split(e.src, "\n")
	if e.line >= 1 && e.line <= len(lines) {
		line := strings.TrimRight(lines[e.line-1], "\r")
		b.WriteString(line)
		b.WriteByte('\n')
		col := min(max(e.col, 1), len(line)+1)
		for _, c := range line[:col-1] {
			if c == '\t' {
				b.WriteByte('\t')
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString("^\n")
	}
	kind := e.kind
	if kind == "" {
		kind = "SyntaxError"
	}
	fmt.Fprintf(&b, "\n%s: %s\n    at %s:%d:%d\n", kind, e.msg, e.file, e.line, e.col)
	return b.String()
}

// parseError converts a parser error. lineDelta is subtracted from its line
// (the lines of a wrapper before the code), and firstColDelta from its
// column on the first line of the code (the wrapper's text before it).
func parseError(err error, name, src string, lineDelta, firstColDelta int) *codeError {
	ce := &codeError{file: name, src: src, line: 1, col: 1, msg: err.Error()}
	var list parser.ErrorList
	var one *parser.Error
	switch {
	case errors.As(err, &list) && len(list) > 0:
		one = list[0]
	case errors.As(err, &one):
	}
	if one != nil {
		ce.msg = one.Message
		ce.line = one.Position.Line - lineDelta
		ce.col = one.Position.Column
		if ce.line == 1 {
			ce.col -= firstColDelta
		}
		if n := strings.Count(src, "\n") + 1; ce.line > n {
			ce.line = n
			ce.col = len(src) - strings.LastIndexByte(src, '\n')
		}
		if ce.line < 1 {
			ce.line, ce.col = 1, 1
		}
	}
	return ce
}

// compileError converts an error of goja.CompileAST.
func compileError(err error, name, src string) *codeError {
	ce := &codeError{file: name, src: src, line: 1, col: 1, msg: err.Error()}
	var cse *goja.CompilerSyntaxError
	if errors.As(err, &cse) {
		ce.msg = cse.Message
		if cse.File != nil {
			p := cse.File.Position(cse.Offset)
			ce.line, ce.col = p.Line, p.Column
		}
	}
	return ce
}

// compileCell parses, hoists and compiles a cell named <cell>.
func compileCell(code string) (*compiledCell, *codeError) {
	return compileNamed(code, cellFile, nil, 0)
}

// overBudget is the panic of the parser's cost hook when a cell's code
// would take more than its budget to parse and compile.
type overBudget struct{ need int64 }

// compileNamed parses, hoists and compiles a cell; name is its file in
// stacks and errors. tm, when set, maps positions in code (the JavaScript
// esbuild made of a TypeScript cell) to the TypeScript source, which is
// then the program's file (typescript.go). A budget above 0 bounds what
// parsing and compiling the cell may take (the parser's estimate as it
// reads, internal/goja/parser/cost.go): the parse and compilation of a
// cell are made in native code before it runs, where neither the
// allocation guard nor the monitor can stop them, and dense code takes
// far more than its size (a 4 MB array literal of 1s took 700 MB). Past
// the budget the cell is refused with a RangeError before it grows more.
func compileNamed(code, name string, tm *tsMap, budget int64) (cell *compiledCell, cerr *codeError) {
	var opts []parser.Option
	if budget > 0 {
		defer func() {
			if p := recover(); p != nil {
				ob, ok := p.(overBudget)
				if !ok {
					panic(p)
				}
				cell, cerr = nil, &codeError{file: name, src: code, line: 1, col: 1, kind: "RangeError",
					msg: fmt.Sprintf("memory limit: parsing and compiling this cell's code takes more than %d MiB, past the session's limit of %d MiB (dense code, such as a long literal, takes a hundred times its size or more); split it into smaller cells, or build large data at run time (from a file in the session root)", ob.need>>20, budget>>20)}
			}
		}()
		opts = append(opts, parser.WithCostHook(func(n int64) {
			if n > budget {
				panic(overBudget{need: n})
			}
		}))
	}
	return compileBudgeted(code, name, tm, opts)
}

// compileBudgeted is compileNamed with the parser's options opts.
func compileBudgeted(code, name string, tm *tsMap, opts []parser.Option) (*compiledCell, *codeError) {
	// shown is the text errors quote: the cell as written.
	shown := code
	fixErr := func(ce *codeError) *codeError { return ce }
	if tm != nil {
		shown = tm.source
		fixErr = tm.mapError
	}
	refused := func(err error) *codeError {
		return &codeError{file: name, src: shown, line: 1, col: 1, msg: err.Error()}
	}
	// Before anything recurses over the code: see source.go.
	if err := checkNesting(code); err != nil {
		return nil, refused(err)
	}
	src := rewriteModuleSyntax(code, false).src
	opts = append(opts, parser.WithDisableSourceMaps)
	script := func(prog *ast.Program) (*compiledCell, *codeError) {
		if err := checkDepth(prog); err != nil {
			return nil, refused(err)
		}
		regroupRelational(prog)
		f := prog.File
		if tm != nil {
			f = tm.remap(prog, name)
		}
		return compileProgram(hoistScript(prog.Body, prog.DeclarationList, f), false, name, shown)
	}
	if !strings.Contains(src, "await") && !strings.Contains(src, "return") {
		prog, err := parser.ParseFile(nil, name, src, 0, opts...)
		if err != nil {
			return nil, fixErr(parseError(err, name, src, 0, 0))
		}
		return script(prog)
	}
	wrapped, err := parser.ParseFile(nil, name, asyncPrefix+src+asyncSuffix, 0, opts...)
	if err == nil {
		err = checkDepth(wrapped)
		if err != nil {
			return nil, refused(err)
		}
	}
	if err != nil {
		// Code that is only valid as a script (await as a name) still runs.
		if prog, err2 := parser.ParseFile(nil, name, src, 0, opts...); err2 == nil {
			return script(prog)
		}
		return nil, fixErr(parseError(err, name, src, 1, 0))
	}
	arrow := wrapped.Body[0].(*ast.ExpressionStatement).Expression.(*ast.ArrowFunctionLiteral)
	body := arrow.Body.(*ast.BlockStatement)
	shiftPositions(wrapped, -len(asyncPrefix))
	regroupRelationalIn(wrapped, src, 1)
	var f *file.File
	if tm != nil {
		f = tm.remap(wrapped, name)
	} else {
		f = file.NewFile(name, src, 1)
	}
	if !hasTopLevelAwait(body.List) {
		return compileProgram(hoistScript(body.List, arrow.DeclarationList, f), false, name, shown)
	}
	return compileProgram(hoistAsync(arrow, body, f), true, name, shown)
}

// compileProgram compiles a hoisted program; name and src are what its
// errors show.
func compileProgram(prog *ast.Program, async bool, name, src string) (*compiledCell, *codeError) {
	// Relational chains are regrouped already, in the code as parsed
	// (relational.go).
	guardOperators(prog)
	prg, err := goja.CompileAST(prog, false)
	if err != nil {
		return nil, compileError(err, name, src)
	}
	return &compiledCell{prg: prg, async: async}, nil
}

// voidZero is `void 0`, the initializer of a hoisted `let x;`.
func voidZero(idx file.Idx) ast.Expression {
	return &ast.UnaryExpression{Operator: token.VOID, Idx: idx, Operand: &ast.NumberLiteral{Idx: idx, Literal: "0", Value: int64(0)}}
}

// hoistDeclaration rewrites a top-level let, const or class declaration into
// a var statement and appends its bindings to decls. Other statements come
// back unchanged.
func hoistDeclaration(st ast.Statement, decls *[]*ast.VariableDeclaration) ast.Statement {
	switch s := st.(type) {
	case *ast.LexicalDeclaration:
		for _, b := range s.List {
			if b.Initializer == nil {
				b.Initializer = voidZero(b.Idx0())
			}
		}
		*decls = append(*decls, &ast.VariableDeclaration{Var: s.Idx, List: s.List})
		return &ast.VariableStatement{Var: s.Idx, List: s.List}
	case *ast.ClassDeclaration:
		if s.Class.Name == nil {
			return st
		}
		b := &ast.Binding{
			Target:      &ast.Identifier{Name: s.Class.Name.Name, Idx: s.Class.Name.Idx},
			Initializer: s.Class,
		}
		list := []*ast.Binding{b}
		*decls = append(*decls, &ast.VariableDeclaration{Var: s.Class.Class, List: list})
		return &ast.VariableStatement{Var: s.Class.Class, List: list}
	}
	return st
}

// hoistScript makes a script program whose top-level declarations are all
// var-like.
func hoistScript(body []ast.Statement, decls []*ast.VariableDeclaration, f *file.File) *ast.Program {
	out := make([]ast.Statement, len(body))
	for i, st := range body {
		out[i] = hoistDeclaration(st, &decls)
	}
	return &ast.Program{Body: out, DeclarationList: decls, File: f}
}

// hoistAsync makes the program of a cell with top-level await or return.
func hoistAsync(arrow *ast.ArrowFunctionLiteral, body *ast.BlockStatement, f *file.File) *ast.Program {
	decls := arrow.DeclarationList
	arrow.DeclarationList = nil
	var funcs, list []ast.Statement
	for _, st := range body.List {
		if fd, ok := st.(*ast.FunctionDeclaration); ok {
			funcs = append(funcs, fd)
			continue
		}
		list = append(list, hoistDeclaration(st, &decls))
	}
	if n := len(list); n > 0 {
		if es, ok := list[n-1].(*ast.ExpressionStatement); ok {
			idx := es.Idx0()
			list[n-1] = &ast.ReturnStatement{Return: idx, Argument: &ast.ObjectLiteral{
				LeftBrace:  idx,
				RightBrace: idx,
				Value: []ast.Property{&ast.PropertyKeyed{
					Key:   &ast.StringLiteral{Idx: idx, Literal: strconv.Quote(resultKey), Value: unistring.NewFromString(resultKey)},
					Kind:  ast.PropertyKindValue,
					Value: es.Expression,
				}},
			}}
		}
	}
	body.List = list
	prog := &ast.Program{DeclarationList: decls, File: f}
	prog.Body = append(funcs, &ast.ExpressionStatement{Expression: arrow})
	return prog
}

// shiftPositions adds delta to every position (file.Idx) in an AST. A
// position that would fall before the start of the text becomes its first
// byte.
func shiftPositions(root any, delta int) {
	mapPositions(root, func(n int64) int64 { return max(n+int64(delta), 1) })
}

// mapPositions replaces every position (file.Idx) in an AST that is set
// (positive) with f of it. Nodes shared between parents (a binding is both
// in its statement and in its scope's declaration list) are mapped once.
func mapPositions(root any, f func(int64) int64) {
	walkAST(root, func(v reflect.Value) bool {
		if v.Type() == idxType {
			if n := v.Int(); n > 0 && v.CanSet() {
				v.SetInt(f(n))
			}
		}
		return true
	}, nil)
}

// hasTopLevelAwait reports whether statements use await or return outside
// of any nested function: then the cell needs the async wrapper.
func hasTopLevelAwait(list []ast.Statement) bool {
	found := false
	walkAST(list, func(v reflect.Value) bool {
		if found || v.Kind() != reflect.Pointer {
			return !found
		}
		switch v.Interface().(type) {
		case *ast.AwaitExpression, *ast.ReturnStatement:
			found = true
			return false
		case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral, *ast.ClassLiteral:
			return false
		}
		return true
	}, nil)
	return found
}
