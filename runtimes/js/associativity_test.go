package js_test

import (
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestOperatorAssociativity runs chains of every binary operator level
// through real cells, each chosen so that grouping to the left and to the
// right give different answers. goja as released grouped the relational
// operators (<, <=, >, >=, instanceof, in) to the right, so `3 > 2 > 1` was
// true; every cell's AST is regrouped before it is compiled (relational.go),
// parentheses kept. ** and ?: group to the right and must stay that way.
// goja's parser also refuses a chain that goes on from a private `#x in o`
// (a SyntaxError), which regrouping cannot reach: not tested here.
func TestOperatorAssociativity(t *testing.T) {
	tests := []struct{ code, want string }{
		// Relational: (a < b) < c, not a < (b < c).
		{"var a = 1, b = 2, c = 3; a < b < c", "true"},
		{"3 > 2 > 1", "false"},
		{"3 >= 2 >= 2", "false"},
		{"0 <= 1 <= 0", "false"},
		{"3 > 1 < 1", "false"},
		{"1 < 2 < 3 < 4 > 0", "true"},
		// A shift operand binds tighter than the comparison on either side.
		{"1 << 2 < 3 << 1", "true"},
		// instanceof: (x instanceof F) instanceof Boolean is false; the right
		// grouping throws because `F instanceof Boolean` is not callable.
		{"function F() {}; new F() instanceof F instanceof Boolean", "false"},
		// in: ('x' in o) in {true: 1} is 'true' in {true: 1}.
		{"'x' in { x: 1 } in { true: 1 }", "true"},
		{"'y' in { x: 1 } in { false: 1 }", "true"},
		// Mixed relational operators keep to the left too.
		{"2 < 3 in { true: 1 }", "true"},
		{"'x' in { x: 1 } < 2", "true"},
		// Parentheses are kept: a parenthesized right operand stays one,
		// a parenthesized left one goes on the chain.
		{"1 < (2 < 3)", "false"},
		{"3 > (2 > 1)", "true"},
		{"1 < (2) < 3", "true"},
		{"3 > ((2)) > 1", "false"},
		{"1 < ((2) < 3)", "false"},
		{"1 < /* ( */ (2 < 3)", "false"},
		{"1 < (/* ) */ 2 < 3)", "false"},
		{"3 > /* ) */ 2 > 1", "false"},
		{"[1 < 2 < 3, (3 > 2 > 1) || 'no', f => f < 2 < 3][1]", "'no'"},
		{"function g(x) { return x > 2 > 1 }; g(3)", "false"},
		{"var s = `${3 > 2 > 1}`; s", "'false'"},
		// Equality.
		{"1 === 2 === false", "true"},
		{"1 == 2 == false", "true"},
		{"2 !== 2 !== false", "false"},
		{"2 != 2 != 0", "false"},
		{"1 < 2 == 1", "true"},
		// Shift, additive, multiplicative.
		{"1 << 2 << 3", "32"},
		{"256 >> 2 >> 1", "32"},
		{"-16 >>> 28 >>> 1", "7"},
		{"10 - 4 - 3", "3"},
		{"'a' + 1 + 2", "'a12'"},
		{"100 / 10 / 5", "2"},
		{"17 % 10 % 4", "3"},
		{"2 * 7 % 4", "2"},
		// &, ^, |, &&, || and ?? give one answer either way round, so only
		// their precedence against each other can show.
		{"1 | 2 & 0", "1"},
		{"3 ^ 1 & 1", "2"},
		{"0 && 1 || 2", "2"},
		{"null ?? 0 ?? 2", "0"},
		// Right-associative levels must stay so.
		{"2 ** 3 ** 2", "512"},
		{"true ? 1 : false ? 2 : 3", "1"},
		{"var p, q; p = q = 5; [p, q]", "[ 5, 5 ]"},
	}
	s := newSession(t, runtimes.InstanceOptions{})
	for _, tt := range tests {
		// Not s.ok: a wrong grouping can throw, and every case should report.
		out, rec := s.run(tt.code)
		if out.Failed {
			t.Errorf("%s\n failed: %s\nwant %s", tt.code, rec.StderrText(), tt.want)
			continue
		}
		got := ""
		if r := rec.Results(); len(r) > 0 {
			got = r[0]["text/plain"]
		}
		if got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.code, got, tt.want)
		}
	}
}

// TestOperatorAssociativityInTypeScript: relational chains in TypeScript
// cells group to the left too, parentheses that esbuild drops with a type
// assertion included: they are regrouped in the JavaScript esbuild makes,
// not in the TypeScript text, whose parentheses and positions told the
// chain apart wrongly (3 > (xs as number[]).length > 1 was true).
func TestOperatorAssociativityInTypeScript(t *testing.T) {
	tests := []struct{ code, want string }{
		{"const xs = [1, 2, 3]; [3 > (xs as number[]).length > 1, 1 < (xs as Array<number>).length < 3, (xs as any).length >= 3 >= 1]",
			"[ false, true, true ]"},
		{"await null; const ys: number[] = [1, 2, 3]; [3 > (ys as number[]).length > 1, 3 > (2 as number) > 1]", "[ false, false ]"},
		{"const n = 2 as number; const r1 = 1 < n < 3; const r2 = 3 > (n) > 1; [r1, r2, 1 < (n < 3)]", "[ true, false, false ]"},
		// `a < b, c > (d)` is a call with type arguments in TypeScript's
		// grammar (tsc reads it so too): 2<3, 3>(2) calls 2.
		{"const e: string[] = []; try { [1 < 2 < 3, 3 > (2 as number) > 1] } catch (x) { e.push(x.name) } e", "[ 'TypeError' ]"},
	}
	s := newSession(t, runtimes.InstanceOptions{})
	for _, tt := range tests {
		out, rec := s.runTS(tt.code)
		if out.Failed {
			t.Errorf("%s\n failed: %s\nwant %s", tt.code, rec.StderrText(), tt.want)
			continue
		}
		got := ""
		if r := rec.Results(); len(r) > 0 {
			got = r[0]["text/plain"]
		}
		if got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.code, got, tt.want)
		}
	}
}

// TestOperatorAssociativityOutsideCells: code made with eval and the
// Function constructors, and modules, group relational chains to the left
// as cells do (they went through goja's right-recursive parse as it was).
func TestOperatorAssociativityOutsideCells(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"chain.js":  "module.exports = [1 < 2 < 3, 3 > 2 > 1, 1 < (2 < 3)]\n",
		"chain.mjs": "export const r = [1 < 2 < 3, 3 > 2 > 1]\n",
	})
	s := newSession(t, runtimes.InstanceOptions{Root: root})
	tests := []struct{ code, want string }{
		{"[eval('1 < 2 < 3'), eval('3 > 2 > 1'), Function('return 1 <= 2 <= 3')(), new Function('a', 'return a > 2 > 1')(3)]", "[ true, false, true, false ]"},
		{"require('./chain.js')", "[ true, false, false ]"},
		{"import { r } from './chain.mjs'; r", "[ true, false ]"},
	}
	for _, tt := range tests {
		if got, _ := s.ok(tt.code); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.code, got, tt.want)
		}
	}
}
