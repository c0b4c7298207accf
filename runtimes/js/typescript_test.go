package js_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/js"
	"github.com/wasmeval/wasmeval/runtimes/runtimetest"
)

// runTS runs a TypeScript cell in the session.
func (s *session) runTS(code string) (runtimes.Outcome, *runtimetest.Recorder) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(js.WithTypeScript(context.Background(), true), 30*time.Second)
	defer cancel()
	rec := &runtimetest.Recorder{}
	out, err := s.inst.Run(ctx, code, rec)
	if err != nil {
		s.t.Fatalf("Run(%q) as TypeScript: %v", code, err)
	}
	return out, rec
}

func (s *session) okTS(code string) (result, stdout string) {
	s.t.Helper()
	out, rec := s.runTS(code)
	if out.Failed {
		s.t.Fatalf("Run(%q) as TypeScript failed: %s", code, rec.StderrText())
	}
	if r := rec.Results(); len(r) > 0 {
		result = r[0]["text/plain"]
	}
	return result, rec.StdoutText()
}

func (s *session) failsTS(code string) string {
	s.t.Helper()
	out, rec := s.runTS(code)
	if !out.Failed {
		s.t.Fatalf("Run(%q) as TypeScript succeeded (stdout %q, results %v), want failure", code, rec.StdoutText(), rec.Results())
	}
	return rec.StderrText()
}

// TestTypeScriptCells: types are stripped, TypeScript-only constructs run,
// and ts and js cells share the session's globals both ways, top-level
// await included.
func TestTypeScriptCells(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	steps := []struct {
		ts           bool
		code, result string
	}{
		{true, "const x: number = 1\nlet names: string[] = ['a', 'b']\nx", "1"},
		{false, "x + names.length", "3"},
		{false, "const fromJS = 40", ""},
		{true, "const sum: number = fromJS + x + 1\nsum", "42"},
		{true, "interface Point { x: number; y: number }\nfunction norm(p: Point): number { return Math.hypot(p.x, p.y) }\nnorm({ x: 3, y: 4 })", "5"},
		{false, "norm({x: 6, y: 8})", "10"},
		{true, "enum Color { Red, Green = 5 }\nColor.Green", "5"},
		{true, "class Box<T> { constructor(private value: T) {} get(): T { return this.value } }\nnew Box<string>('v').get()", "'v'"},
		{true, "const v = await Promise.resolve(7 as number)\nv * 6", "42"},
		{false, "v", "7"},
		{true, "type Id = string\nconst id: Id = 'abc'\nid.length", "3"},
		{true, "let later: number\nlater = 5", "5"},
		{false, "later", "5"},
		{true, "if (x === 1) return 'early'\n'late'", "'early'"},
		{true, "const t = <T,>(a: T): T => a\nt<number>(9)", "9"},
	}
	for _, st := range steps {
		var got string
		if st.ts {
			got, _ = s.okTS(st.code)
		} else {
			got, _ = s.ok(st.code)
		}
		if got != st.result {
			t.Errorf("ts=%v %q: result %q, want %q", st.ts, st.code, got, st.result)
		}
	}
	// Redeclaring in a later cell works as in JavaScript cells.
	if got, _ := s.okTS("const x: string = 'again'\nx"); got != "'again'" {
		t.Errorf("redeclared x = %q", got)
	}
}

// TestTypeScriptErrorPositions: syntax errors (esbuild's), runtime stack
// traces and compile errors give the TypeScript line and column, and name
// the cell <cell-N>.
func TestTypeScriptErrorPositions(t *testing.T) {
	tests := []struct {
		code string
		want []string
	}{
		// esbuild's syntax error, at its TypeScript position.
		{"const ok: number = 1\nlet x: = 3", []string{"<cell-1>:2\nlet x: = 3\n       ^\n", "SyntaxError: Unexpected \"=\"", "at <cell-1>:2:8"}},
		// A throw below type-only lines: esbuild drops them, the stack still
		// points at the TypeScript line and column.
		{"interface A {\n  a: number\n}\ntype B = A | null\nconst f = (n: number): number => {\n    throw new Error('bad ' + n)\n}\nf(1)",
			[]string{"Uncaught Error: bad 1", "at f (<cell-2>:6:11)", "at <cell-2>:8:2"}},
		// The same after top-level await (the async path of hoisting).
		{"type T = { a: number }\nawait null\nconst o: T = { a: 1 }\n    null!.x",
			[]string{"TypeError: Cannot read property 'x' of", "at <cell-3>:4:"}},
		// A column past wide type annotations on the same line: the call of
		// undefinedFn, at its parenthesis as in a JavaScript cell.
		{"const a: Record<string, number> = {}; const b: Array<string> = []; undefinedFn()",
			[]string{"ReferenceError: undefinedFn is not defined", "at <cell-4>:1:79"}},
		// A goja compile error (no esbuild error) maps too.
		{"const dup: number = 1\nconst dup: number = 2", []string{"<cell-5>:2", "const dup: number = 2"}},
	}
	s := newSession(t, runtimes.InstanceOptions{})
	for _, tt := range tests {
		want(t, tt.code, s.failsTS(tt.code), tt.want...)
	}
	// A JavaScript cell counts on, and the session still works.
	want(t, "js cell", s.fails("throw new Error('js')"), "at <cell-6>:1:7")
	if got, _ := s.okTS("const n: number = 2\nn"); got != "2" {
		t.Errorf("after errors: result = %q, want 2", got)
	}
}

// TestCellsAreNumbered: stacks name each cell <cell-N>, N counting the
// cells the session ran since its start or last reset, as Python's
// tracebacks do.
func TestCellsAreNumbered(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	s.ok("1")
	want(t, "second cell", s.fails("function f() {\n  throw new Error('two')\n}\nf()"), "at f (<cell-2>:2:9)", "at <cell-2>:4:2")
	want(t, "syntax error", s.fails("let = ;"), "<cell-3>:1\n", "at <cell-3>:1:")
	want(t, "error.stack", s.fails("const e = new Error('s'); console.log(e.stack); throw e"), "at <cell-4>:1:11")
	if err := s.inst.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := s.fails("throw new Error('after reset')")
	want(t, "after reset", got, "at <cell-1>:1:7")
	if strings.Contains(got, "<cell>") {
		t.Errorf("stderr %q still names <cell>", got)
	}
}
