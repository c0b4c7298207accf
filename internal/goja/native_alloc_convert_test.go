package goja

import (
	"runtime"
	"testing"
)

// TestAllocGuardCoversConversions: case conversions, normalize and
// localeCompare announce at least what they allocate, for the characters
// that expand most (NFKD makes 18 of '\ufdfa', toUpperCase 3 of '\u0390',
// toLowerCase 2 of '\u0130'). They announced 8 bytes a character, and NFKD
// of '\ufdfa' took 262.
func TestAllocGuardCoversConversions(t *testing.T) {
	r := New()
	var asked int64
	r.SetAllocGuard(func(n int64) { asked += n })
	chars := []string{`\u00e9`, `a\u00e9`, `\u0390`, `\u00df`, `\u0130`, `\u0149`, `\ufdfa`, `\u1f80`, `\ufb03`,
		`\u3300`, `\uac00`, `\ud835\udc00`, `\ud800`}
	ops := []string{"toUpperCase()", "toLowerCase()", "toLocaleUpperCase()", "normalize('NFD')", "normalize('NFKD')",
		"normalize('NFKC')", "normalize()", "localeCompare('x')"}
	for _, ch := range chars {
		if _, err := r.RunString("var s = '" + ch + "'.repeat(1e5)"); err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			asked = 0
			runtime.GC()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			v, err := r.RunString("s." + op)
			runtime.ReadMemStats(&m1)
			if err != nil {
				t.Fatal(err)
			}
			runtime.KeepAlive(v)
			took := int64(m1.TotalAlloc - m0.TotalAlloc)
			if asked < took {
				t.Errorf("'%s'.repeat(1e5).%s announced %d bytes and took %d", ch, op, asked, took)
			}
			if asked > 8*took {
				t.Errorf("'%s'.repeat(1e5).%s announced %d bytes and took only %d", ch, op, asked, took)
			}
		}
	}
}
