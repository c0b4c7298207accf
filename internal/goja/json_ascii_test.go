package goja

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestJSONQuoteASCII: JSON.stringify of an ASCII text (the fast path,
// quoteASCII) gives the bytes of the rune-by-rune path for every ASCII
// character, alone and in random texts, as JSON.stringify of the same
// text as a UTF-16 one (which takes the other path) gives them.
func TestJSONQuoteASCII(t *testing.T) {
	vm := New()
	stringify := func(s String) string {
		t.Helper()
		v, err := vm.RunString("(s) => JSON.stringify(s)")
		if err != nil {
			t.Fatal(err)
		}
		f, _ := AssertFunction(v)
		res, err := f(_undefined, s)
		if err != nil {
			t.Fatal(err)
		}
		return res.String()
	}
	// The other path: the same text with a non-ASCII character after it,
	// which is then cut off the result.
	slow := func(s string) string {
		out := stringify(newStringValue(s + "é"))
		return out[:len(out)-len(`é"`)] + `"`
	}
	var all strings.Builder
	for c := range 128 {
		all.WriteByte(byte(c))
		s := string(rune(c))
		if got, want := stringify(asciiString(s)), slow(s); got != want {
			t.Errorf("char %#x: %s, want %s", c, got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	texts := []string{"", all.String(), strings.Repeat("plain text ", 1000)}
	for range 200 {
		b := make([]byte, r.IntN(300))
		for i := range b {
			b[i] = byte(r.IntN(128))
		}
		texts = append(texts, string(b))
	}
	for _, s := range texts {
		if got, want := stringify(asciiString(s)), slow(s); got != want {
			t.Fatalf("%q: %s, want %s", s, got, want)
		}
	}
}

func BenchmarkJSONQuoteASCII(b *testing.B) {
	vm := New()
	if _, err := vm.RunString("var s = 'x'.repeat(8 << 20)"); err != nil {
		b.Fatal(err)
	}
	prg := MustCompile("", "JSON.stringify(s).length", false)
	b.SetBytes(8 << 20)
	for b.Loop() {
		if _, err := vm.RunProgram(prg); err != nil {
			b.Fatal(err)
		}
	}
}
