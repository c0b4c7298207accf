package js

import (
	"reflect"
	"strconv"

	"github.com/wasmeval/wasmeval/internal/goja"

	"github.com/wasmeval/wasmeval/internal/goja/ast"
)

// Template literals.
//
// goja turns each substitution of a template into text and joins them in
// native code: `${s}${s}` doubles a string in one copy that no interrupt
// stops, so a doubling loop passed the memory limit by the whole last copy
// (the heap peaked at about three times the limit). A template of two or
// more substitutions is rewritten into a call of the host's guard
// (defineTemplateGuard), which makes the text itself when every
// substitution is a number or a text and the result is short, and hands
// anything else to the prelude's guard (guards.js, template), which
// reserves a long result before it makes it:
//
//	`q0${a}q1${b}q2`  ->  %tpln('q0', a, 'q1', b, 'q2')
//
// A call of the prelude's guard, which is JavaScript, cost a template of
// members three times its native time; a test of each identifier's type
// and length before goja's own template (the form before the host's guard)
// cost more than the host's call does (BenchmarkTemplate: 100,000
// templates of two substitutions took 204 ms with a member, 79-91 ms with
// identifiers; with the host's guard 53-66 ms either way).
//
// A template of one substitution grows a text by its literal parts only,
// as `s + 'x'` does, and is left alone. The guard converts its
// substitutions to text after evaluating them all, where goja converts
// each right after evaluating it: only an object whose toString changes
// what a later substitution evaluates to could tell.

// opTemplate is the prelude's template guard (guards.js), opTemplateHost
// the host's, which calls it (defineTemplateGuard).
const (
	opTemplate     = "%wasmeval.tpl"
	opTemplateHost = "%wasmeval.tpln"
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
	return callGuard(opTemplateHost, idx, x.CloseQuote+1, args...), true
}

// defineTemplateGuard defines the host's template guard as a property of
// global that no binding can shadow; slow is the prelude's guard, which
// it calls for what it does not make itself: a substitution that is not
// a number or a text (its conversion may call code, or throw), or a
// result long enough to be reserved first.
func (in *instance) defineTemplateGuard(global *goja.Object, slow goja.Callable) error {
	guard := in.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		parts := call.Arguments
		it, ft := numberTypes()
		chars := 0
		for i, p := range parts {
			if i&1 == 1 {
				if t := reflect.TypeOf(p); t == it || t == ft {
					chars += 25 // the longest number's text, -1.2345678901234567e-308
					continue
				}
			}
			s, ok := p.(goja.String)
			if !ok {
				chars = templateReserveChars
				break
			}
			chars += s.Length()
		}
		if chars >= templateReserveChars {
			v, err := slow(goja.Undefined(), parts...)
			if err != nil {
				in.rethrow(err)
			}
			return v
		}
		var b goja.StringBuilder
		for _, p := range parts {
			if s, ok := p.(goja.String); ok {
				b.WriteString(s)
			} else {
				b.WriteUTF8String(p.String()) // a number's text, as goja makes it
			}
		}
		return b.String()
	})
	return global.DefineDataProperty(opTemplateHost, guard, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
}
