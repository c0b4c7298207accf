package js_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestDenseCodeParseIsRefused: eval, the Function constructor and require
// of dense code (300 KB of `a=>a,` takes about 100 MiB to parse and
// compile, 350 bytes a byte) are refused with a RangeError the cell
// catches, before the host grows past the session's limit. They reserved
// 32 bytes a byte before parsing, 10 MiB here: the parse went on, and the
// memory monitor stopped the cell (uncatchably) only once the host had
// grown past the limit; the parser now reserves as it reads
// (internal/goja/parser/cost.go).
func TestDenseCodeParseIsRefused(t *testing.T) {
	const limit = 64 << 20
	arrows := "'[' + 'a=>a,'.repeat(6e4) + ']'"
	regexps := "'[' + '/a/,'.repeat(75e3) + ']'"
	cases := []struct{ name, code string }{
		{"eval of arrows", "eval(" + arrows + ")"},
		{"eval of regexps", "eval(" + regexps + ")"},
		{"indirect eval", "(0, eval)(" + arrows + ")"},
		{"new Function", "new Function('return ' + " + arrows + ")"},
		{"require", "require('./dense.js')"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: limit})
			if err := os.WriteFile(filepath.Join(s.root, "dense.js"), []byte("module.exports = ["+strings.Repeat("a=>a,", 6e4)+"]"), 0o644); err != nil {
				t.Fatal(err)
			}
			s.ok("globalThis.kept = 'still here'")
			stop := heapPeak()
			got := result(s, "(() => { try { "+c.code+"; return 'made' } catch (e) { return (e instanceof RangeError) + ' ' + e.message } })()")
			peak := stop()
			t.Logf("heap peak +%d MiB: %s", peak>>20, firstLine(got))
			if !strings.HasPrefix(got, "'true memory limit") {
				t.Errorf("%s: %s, want the cell to catch a RangeError 'memory limit...'", c.code, got)
			}
			if peak > limit {
				t.Errorf("the heap grew by %d MiB, more than the limit, %d MiB", peak>>20, limit>>20)
			}
			if got, _ := s.ok("kept"); got != "'still here'" {
				t.Errorf("after the parse: kept = %s", got)
			}
		})
	}
}

// TestOrdinaryCodeParses: eval and require of 200 KB of ordinary code in
// a 64 MiB session run (the parser's estimate is about 3 times what it
// takes, not a bound for the densest code on every byte).
func TestOrdinaryCodeParses(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: 64 << 20})
	code := strings.Repeat("function f(a, b) { return a + b * 2 }\n", 5000) + "f(1, 2)"
	if err := os.WriteFile(filepath.Join(s.root, "lib.js"), []byte(code+"\nmodule.exports = f"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.ok(`globalThis.code = 'function f(a, b) { return a + b * 2 }\n'.repeat(5000) + 'f(1, 2)'`)
	if got, _ := s.ok("eval(code)"); got != "5" {
		t.Errorf("eval: %s, want 5", got)
	}
	if got, _ := s.ok("require('./lib.js')(2, 3)"); got != "8" {
		t.Errorf("require: %s, want 8", got)
	}
}
