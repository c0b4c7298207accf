package js

import (
	"reflect"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/goja/ast"
)

// guardNames returns the names of the source guards that src, rewritten,
// refers to.
func guardNames(t *testing.T, src string) map[string]bool {
	t.Helper()
	_, prog, err := compileGuarded("<test>", src, false)
	if err != nil {
		t.Fatalf("compile %q: %v", src, err)
	}
	names := make(map[string]bool)
	walkAST(prog, func(v reflect.Value) bool {
		if v.Kind() == reflect.Pointer {
			if id, ok := v.Interface().(*ast.Identifier); ok && strings.HasPrefix(id.Name.String(), "%wasmeval.") {
				names[id.Name.String()] = true
			}
		}
		return true
	}, nil)
	return names
}

// TestCheapCodeIsNotGuarded: a loop that calls nothing and makes nothing
// has no safe-point counter, and a sum with a numeric operand no + guard
// (growth.go); loops and sums that could grow the session keep theirs.
func TestCheapCodeIsNotGuarded(t *testing.T) {
	tests := []struct {
		src            string
		counted, added bool
	}{
		{"let s = 0; for (let i = 0; i < 1e6; i++) s += i * 2", false, false},
		{"let s = 0, i = 0; while (i < 10) { s = s + -i; i++ }", false, false},
		{"let n = 0; do { n = n + n * 3 } while (n < 10)", false, false},
		{"let s = 'a'; for (let i = 0; i < 20; i++) s += s", false, true},
		{"let s = 'a', t = 'b'; for (;;) s = t + s", false, true},
		{"const f = (x) => x; let s = 0; for (let i = 0; i < 10; i++) s += f(i)", true, true},
		{"const a = []; for (let i = 0; i < 10; i++) a.push(i)", true, false},
		{"const a = []; for (let i = 0; i < 10; i++) a[i] = i", true, false},
		{"const o = {}; for (let i = 0; i < 10; i++) o.x++", true, false},
		{"let l = []; for (let i = 0; i < 10; i++) l = [l]", true, false},
		{"for (const x of [1, 2]) {}", true, false},
		{"for (let i = 0; i < 10; i++) { try { i++ } catch {} }", true, false},
		{"for (let i = 0; i < 10; i++) { const g = () => i }", true, false},
	}
	for _, tt := range tests {
		names := guardNames(t, tt.src)
		if got := names[opSafePoint]; got != tt.counted {
			t.Errorf("%s: safe point %v, want %v", tt.src, got, tt.counted)
		}
		if got := names[opAdd]; got != tt.added {
			t.Errorf("%s: + guard %v, want %v", tt.src, got, tt.added)
		}
	}
}
