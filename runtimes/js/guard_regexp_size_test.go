package js_test

import (
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestRegexpCompilesAreBounded compiles patterns that Go's regexp would
// expand into huge programs (a count of a count, copied out: an 11 KB
// pattern took 228 MiB to compile and 90-135 MiB of heap at its peak, a
// 33 KB one 448 MiB on a 128 MiB limit; a 13 KB cell of 200 literals of
// 9,000 instructions 136 MiB), through every way a cell makes a pattern,
// and checks that they match as before while the heap stays small:
// they compile with regexp2, which keeps a count (internal/goja regexp.go,
// maxRE2Insts). A pattern that even regexp2 would take far more than the
// session's limit to compile (ignoring the case of a million characters:
// 258 MiB at its peak) is refused before, with a RangeError the cell can
// catch.
func TestRegexpCompilesAreBounded(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: 64 << 20})
	big := `'(?:a{1000})'.repeat(3000)` // 3 million instructions in Go's regexp
	for _, c := range []struct{ name, code, want string }{
		{"new RegExp", `{ const r = new RegExp(` + big + `); print(r.test('a'.repeat(3e6)), r.test('a'.repeat(3e6 - 1))) }`, "true false"},
		{"a text made a pattern", `print(('b' + 'a'.repeat(3e6)).search(` + big + `))`, "1"},
		{"a literal", `print(/` + strings.Repeat(`(?:a{1000})`, 3000) + `/.test('a'.repeat(3e6)))`, "true"},
		{"a literal in eval", `print(eval('/' + ` + big + ` + '/g').test('a'.repeat(3e6)))`, "true"},
		{"RegExp.prototype.compile", `{ const r = /x/; r.compile(` + big + `); print(r.test('a'.repeat(3e6))) }`, "true"},
		{"many literals", `const rs = [` + strings.Repeat(`/a{1000}b{1000}c{1000}d{1000}e{1000}f{1000}g{1000}h{1000}i{1000}/,`, 200) +
			`]; print(rs.length, rs[199].test('x' + 'abcdefghi'.split('').map(c => c.repeat(1000)).join('')))`, "200 true"},
		{"one Go finds too large", `print(new RegExp('(?:a{1000})'.repeat(5000)).test('a'.repeat(4999999)))`, "false"},
		{"ignoring case", `try { new RegExp('a'.repeat(1e6), 'i') } catch (e) { print(e.name, e.message) }`, "RangeError memory limit: this needs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stop := heapPeak()
			out, rec := s.run(c.code)
			peak := stop()
			if stdout := rec.StdoutText(); out.Failed || !strings.Contains(stdout, c.want) {
				t.Errorf("printed %q, want %q; stderr: %.300s", stdout, c.want, rec.StderrText())
			}
			// The cell's texts (3-5 MB) and regexp2's copy of a text as
			// runes (4 bytes a character) are most of it.
			if bound := int64(48 << 20); peak > bound {
				t.Errorf("the heap grew by %d MiB, more than %d MiB", peak>>20, bound>>20)
			}
		})
	}
}
