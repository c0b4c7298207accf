package js_test

import (
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/goja"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestMemberComparisons: comparisons that the host's guards make for
// members (compare.go) give the operators' results, for the numbers and
// texts they compare themselves and for what they hand on, and evaluate
// each operand once.
func TestMemberComparisons(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	def := "var o = { i: 2, j: 3, f: 2.5, nan: NaN, z: -0, pz: 0, big: 2 ** 60, s: 'b', t: 'ab', u: '\\u00e9', v: '\\ud83d\\ude00', w: '\\uffff', " +
		"n: null, un: undefined, b: true, bi: 5n, d: new Date(5), obj: { valueOf: () => 2 }, str: '2', arr: [1, 2] }"
	s.ok(def)
	ops := []string{"<", ">", "<=", ">=", "==", "!="}
	pairs := [][2]string{
		{"i", "j"}, {"j", "i"}, {"i", "i"}, {"i", "f"}, {"f", "j"}, {"nan", "nan"}, {"nan", "i"}, {"z", "pz"}, {"big", "f"},
		{"s", "t"}, {"t", "s"}, {"s", "s"}, {"u", "v"}, {"v", "w"}, {"w", "u"}, {"t", "u"},
		{"i", "str"}, {"str", "i"}, {"n", "un"}, {"n", "i"}, {"un", "i"}, {"b", "i"}, {"bi", "j"}, {"bi", "str"}, {"d", "i"},
		{"obj", "i"}, {"obj", "str"}, {"arr", "s"}, {"arr", "arr"}, {"s", "arr"},
	}
	var list []string
	for _, p := range pairs {
		for _, op := range ops {
			list = append(list, "o."+p[0]+" "+op+" o."+p[1])
		}
	}
	code := "[" + strings.Join(list, ", ") + "].map(Number).join('')"
	// goja's own operators, unguarded, are the reference.
	vm := goja.New()
	want, err := vm.RunString(def + ";" + code)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ok(code); got != "'"+want.String()+"'" {
		for i, e := range list {
			if i < len(got)-1 && got[i+1] != want.String()[i] {
				t.Errorf("%s: %c, goja says %c", e, got[i+1], want.String()[i])
			}
		}
	}
	tests := []struct{ code, want string }{
		// Each operand is evaluated once, left first.
		{"{ const log = []; const g = { get a() { log.push('a'); return 1 }, get b() { log.push('b'); return 2 } }; [g.a < g.b, g.b >= g.a, g.a == g.a, log.join('')] }",
			"[ true, true, true, 'abbaaa' ]"},
		{"{ const a = [5, 1, 4]; let c = 0; for (let i = 1; i < a.length; i++) if (a[i - 1] < a[i]) c++; c }", "1"},
		// Conversions the guard hands on still happen, in order.
		{"{ const log = []; const x = { p: { valueOf() { log.push('x'); return 1 } } }, y = { p: { valueOf() { log.push('y'); return 2 } } }; [x.p < y.p, log.join('')] }",
			"[ true, 'xy' ]"},
		{"{ const e = []; try { ({ p: Symbol() }).p < ({ q: 1 }).q } catch (x) { e.push(x.constructor.name) } e }", "[ 'TypeError' ]"},
		{"{ const e = []; try { ({ p: { valueOf() { throw new RangeError('no') } } }).p < o.i } catch (x) { e.push(x.message) } e }", "[ 'no' ]"},
	}
	for _, tt := range tests {
		if got, _ := s.ok(tt.code); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.code, got, tt.want)
		}
	}
}

// TestMemberTemplates: templates of members, which the host's guard makes
// (templates.go), give goja's own text for every kind of substitution, and
// a long one is still reserved first.
func TestMemberTemplates(t *testing.T) {
	def := "var o = { i: 2, f: -2.5e-7, big: 1e21, max: -Number.MAX_VALUE, nan: NaN, z: -0, s: 'b', u: '\\u00e9', " +
		"lone: '\\ud83d', pair: '\\ud83d\\ude00', n: null, un: undefined, b: true, bi: 5n, d: [1, [2, 3]], " +
		"obj: { toString: () => 'T', valueOf: () => 'V' }, e: '' }"
	keys := []string{"i", "f", "big", "max", "nan", "z", "s", "u", "lone", "pair", "n", "un", "b", "bi", "d", "obj", "e"}
	var list []string
	for i, k := range keys {
		l := keys[(i+5)%len(keys)]
		m := keys[(i+11)%len(keys)]
		list = append(list, "`<${o."+k+"}|${o."+l+"}>`", "`${o."+k+"}${o."+l+"}${o."+m+"}`", "`-${o."+k+"}${o."+m+"}${o."+l+"}${o."+k+"}-`")
	}
	// Texts as code units, so that a lone surrogate compares too.
	code := "[" + strings.Join(list, ", ") + "].map((s) => Array.from(s, (c) => c.charCodeAt(0)).join('.')).join('|')"
	vm := goja.New()
	want, err := vm.RunString(def + ";" + code)
	if err != nil {
		t.Fatal(err)
	}
	s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: 64 << 20})
	s.ok(def)
	got, _ := s.ok(code)
	gotParts, wantParts := strings.Split(strings.Trim(got, "'"), "|"), strings.Split(want.String(), "|")
	if len(gotParts) != len(wantParts) {
		t.Fatalf("%d results, goja makes %d", len(gotParts), len(wantParts))
	}
	for i := range list {
		if gotParts[i] != wantParts[i] {
			t.Errorf("%s = %s, goja makes %s", list[i], gotParts[i], wantParts[i])
		}
	}
	tests := []struct{ code, want string }{
		{"{ const log = []; const g = { get a() { log.push('a'); return 1 }, get b() { log.push('b'); return 2 } }; [`${g.a}${g.b}${g.a}`, log.join('')] }", "[ '121', 'aba' ]"},
		{"{ const e = []; try { `${o.s}${({ p: Symbol('q') }).p}` } catch (x) { e.push(x.constructor.name) } e }", "[ 'TypeError' ]"},
		{"{ const big = { t: 'x'.repeat(300000) }; `${big.t}${big.t}`.length }", "600000"},
	}
	for _, tt := range tests {
		if got, _ := s.ok(tt.code); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.code, got, tt.want)
		}
	}
	if stderr := s.fails("{ const o = { s: 'x'.repeat(1 << 20) }; for (;;) o.s = `${o.s}${o.s}` }"); !memoryError(stderr) {
		t.Errorf("a doubling template of members: %s", stderr)
	}
}
