package js_test

import (
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestForAwait: `for await` loops and async generators, which goja does not
// parse, run (lowered by esbuild): at the top level of a cell and in
// functions, over async generators, async iterables of one's own
// (Symbol.asyncIterator) and arrays of promises, with top-level return in
// the same cell, in JavaScript and TypeScript cells. The cell's
// declarations are session globals as in any cell, and the loops' own
// state is not: a loop that ended in an error does not throw it again in
// a later cell.
func TestForAwait(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	runChecks(t, s, []check{
		{"const got = [];\nasync function* gen(n) { for (let i = 0; i < n; i++) { await null; yield i } }\nfor await (const x of gen(3)) got.push(x);\ngot", "[ 0, 1, 2 ]"},
		{"class Pages { constructor(n) { this.n = n } async *[Symbol.asyncIterator]() { for (let i = 1; i <= this.n; i++) yield 'page ' + i } }\nconst pages = [];\nfor await (const p of new Pages(2)) pages.push(p);\npages", "[ 'page 1', 'page 2' ]"},
		{"const mixed = [];\nfor await (const v of [Promise.resolve('a'), 'b']) mixed.push(v);\nmixed", "[ 'a', 'b' ]"},
		{"const custom = { [Symbol.asyncIterator]() { let i = 0; return { next: async () => ({ done: i >= 2, value: i++ }) } } };\nconst seen = [];\nfor await (const v of custom) seen.push(v);\nif (seen.length) return seen\n'not here'", "[ 0, 1 ]"},
		{"async function total(it) { let t = 0; for await (const v of it) { if (v > 10) return -1; t += v } return t }\n[await total(gen(4)), await total([5, Promise.resolve(20)])]", "[ 6, -1 ]"},
		{"const o = { async *items() { yield* [1, 2] } };\nconst items = [];\nfor await (const v of o.items()) { if (v === 2) break; items.push(v) }\nitems", "[ 1 ]"},
		{"[typeof gen, typeof Pages, got.length, typeof iter, typeof error]", "[ 'function', 'function', 3, 'undefined', 'undefined' ]"},
		// The session's globals are the cell's own: not the lowering's
		// helpers or loop state.
		{"Object.keys(globalThis).filter((k) => k.startsWith('__') || /^(iter|more|temp|error)\\d*$/.test(k))", "[]"},
		{"let error = 'mine', temp = 'mine too';\ntry { for await (const v of [1]) throw new Error('in the loop') } catch (e) { error += ' ' + e.message }\n[error, temp]", "[ 'mine in the loop', 'mine too' ]"},
		{"const after = [];\nfor await (const v of gen(1)) after.push(v);\nafter", "[ 0 ]"},
		{"const pairs = [];\nouter: for await (const a of gen(3)) { for await (const b of gen(3)) { if (b === 1) continue outer; if (a === 2) break outer; pairs.push([a, b]) } }\npairs", "[ [ 0, 0 ], [ 1, 0 ] ]"},
		// Text that only looks like the syntax runs as before.
		{"const text = 'for await (x of y) and async *g';\ntext.length", "31"},
		{"var await = 2; await * 3", "6"},
	})
	if got, _ := s.okTS("async function* count(n: number): AsyncGenerator<number> { for (let i = 0; i < n; i++) yield i }\nconst ts: number[] = [];\nfor await (const v of count(2)) ts.push(v);\nreturn ts"); got != "[ 0, 1 ]" {
		t.Errorf("TypeScript: %s", got)
	}
}

// TestForAwaitPositions: errors in a lowered cell give the cell's own
// line and column, syntax errors and run-time errors alike, in
// JavaScript and TypeScript.
func TestForAwaitPositions(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	want(t, "syntax", s.fails("for await (const x of [1]) {\n  let y = x +;\n}"),
		"  let y = x +;\n             ^", "SyntaxError: Unexpected \";\"", "at <cell-1>:2:14")
	// goja places a failed call at its parenthesis: column 36 here, as
	// in the same line without the loop (cell 3).
	got := s.fails("const n = 1;\nfor await (const q of [n]) { q.nope() }")
	want(t, "run time", got, "TypeError", "at <cell-2>:2:36")
	want(t, "baseline", s.fails("const m = 1;\nfor       (const q of [m]) { q.nope() }"), "at <cell-3>:2:36")
	got = s.failsTS("const z: number = 1;\nfor await (const v of [z]) { (v as any).nope() }")
	want(t, "TypeScript", got, "TypeError", "at <cell-4>:2:45")
	// A stray closing brace does not make code vanish.
	want(t, "stray brace", s.fails("for await (const v of [1]) {}\n}\nprint('after')\n{"), "SyntaxError", "a } closes more than was opened")
	want(t, "incomplete last line", s.fails("for await (const v of [1]) {}\nconst a = 1 +"), "SyntaxError")
	// A multi-line template literal keeps its lines.
	if got, _ := s.ok("const lines = [];\nfor await (const v of [1]) lines.push(`a\n}\nb${v}`);\nlines[0]"); got != "'a\\n}\\nb1'" {
		t.Errorf("template literal: %s", got)
	}
	got = s.fails("for await (const v of 5) {}")
	want(t, "not iterable", got, "TypeError")
	if strings.Contains(got, "__wasmevalCell") {
		t.Errorf("the wrapper shows: %s", got)
	}
}
