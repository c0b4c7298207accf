package js_test

import (
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestCompilerInputIsBounded: esbuild, which strips a TypeScript cell's
// types and lowers for await loops and async generators, runs in native
// code no interrupt reaches, in time quadratic in the code for some errors
// (16,000 redeclarations of one name, 160 KB, took 3.8 s). Code past a
// 2,048th of the session's limit (at most 256 KiB) is refused before it
// gets there, with a RangeError that says why and what to do; the session
// goes on, and a long JavaScript cell whose "for await" is only text still
// runs (goja's word decides, as before).
func TestCompilerInputIsBounded(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: 64 << 20}) // 32 KiB
	redeclared := strings.Repeat("let f = 1;", 40_000)                       // 400 KB
	for name, stderr := range map[string]string{
		"TypeScript": s.failsTS(redeclared),
		"lowered":    s.fails(redeclared + "\nasync function* g() {}"),
	} {
		if !strings.Contains(stderr, "RangeError: memory limit: this code is 391 KiB, and the compiler that") || !strings.Contains(stderr, "at most 32 KiB") {
			t.Errorf("%s: %q", name, stderr[max(0, len(stderr)-400):])
		}
	}
	if _, out := s.okTS("const n: number = 41; console.log(n + 1)"); out != "42\n" {
		t.Errorf("the session after them: %q", out)
	}
	long := "const text = '" + strings.Repeat("for await ", 10_000) + "'; console.log(text.length)"
	if _, out := s.ok(long); out != "100000\n" {
		t.Errorf("a long cell whose for await is text: %q", out)
	}
}
