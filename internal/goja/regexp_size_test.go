package goja

import (
	"regexp/syntax"
	"strings"
	"testing"
)

// TestProgInstsBoundsGoPrograms: the estimate of a Go regexp's program is
// at least the program Go compiles, and not far above it, so that the
// patterns sent to regexp2 are the large ones.
func TestProgInstsBoundsGoPrograms(t *testing.T) {
	for _, p := range []string{
		`a`, `abc`, `a|b|c`, `(a)(b)`, `a*b+c?`, `[a-z]{8}`, `a{2,5}`, `a{3,}`, `(?:ab){0,4}`,
		`(?i:abc){10}`, `^(?:[0-9a-f]{8})-(?:[0-9a-f]{4})$`, `\d{1,3}(?:\.\d{1,3}){3}`,
		`(?:a{10}b{20}|c{5,}){7}`, `.{0,100}`, strings.Repeat(`(?:a{100})`, 30),
	} {
		re, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := syntax.Compile(re.Simplify())
		if err != nil {
			t.Fatal(err)
		}
		got := progInsts(re)
		if n := int64(len(prog.Inst)); got < n-2 || got > 2*n {
			// Go adds a fail and a match instruction.
			t.Errorf("%s: estimated %d instructions, Go compiled %d", p, got, n)
		}
	}
}

// TestLargeProgramsGoToRegexp2: a pattern whose Go program would pass
// maxRE2Insts compiles with regexp2, also one Go finds too large itself;
// a smaller one still compiles with Go's regexp.
func TestLargeProgramsGoToRegexp2(t *testing.T) {
	for _, c := range []struct {
		pattern string
		re2     bool
	}{
		{`(?:a{1000})`, true},
		{strings.Repeat(`(?:a{1000})`, 9), true},
		{strings.Repeat(`(?:a{1000})`, 11), false},
		{strings.Repeat(`(?:a{1000})`, 10000), false}, // past Go's own limit
		{strings.Repeat(`a`, 20000), false},
	} {
		var charged int64
		p, err := compileRegexpCharged(c.pattern, "", func(n int64) { charged += n })
		if err != nil {
			t.Fatalf("%.40s: %v", c.pattern, err)
		}
		if got := p.regexpWrapper != nil; got != c.re2 {
			t.Errorf("%.40s (%d bytes): compiled by Go's regexp %v, want %v", c.pattern, len(c.pattern), got, c.re2)
		}
		if charged == 0 {
			t.Errorf("%.40s: nothing was announced", c.pattern)
		}
	}
}

// TestLiteralsShareABudget: the literals of one program compile with Go's
// regexp until their programs together would pass maxLiteralRE2Insts, and
// with regexp2 after.
func TestLiteralsShareABudget(t *testing.T) {
	lit := strings.Repeat(`(?:a{1000})`, 9) // 9,000 instructions
	var c compiler
	var re2 int
	for range 20 {
		p, err := compileRegexpLiteral(&c, lit, "")
		if err != nil {
			t.Fatal(err)
		}
		if p.regexpWrapper != nil {
			re2++
		}
	}
	if want := maxLiteralRE2Insts / 9000; re2 != want {
		t.Errorf("%d of 20 literals of 9,000 instructions compiled with Go's regexp, want %d", re2, want)
	}
}
