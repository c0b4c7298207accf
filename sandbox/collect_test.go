package sandbox

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCutKeepsRunes(t *testing.T) {
	var bt boundedText
	line := strings.Repeat("é", 1000) + "\n" // 2001 bytes
	for range 200 {
		bt.WriteString(strings.Repeat("日本", 30)) // no newlines: a cut mid-line
	}
	for range 50 {
		bt.WriteString(line)
	}
	if !bt.needsCut() {
		t.Fatal("no cut needed")
	}
	shown, tr := bt.cut("out-1")
	if !utf8.ValidString(shown) {
		t.Errorf("cut output is not valid UTF-8")
	}
	if tr.Bytes != bt.total || tr.OmittedBytes <= 0 {
		t.Errorf("truncation %+v", tr)
	}
	if got := trimPartialRune([]byte("ab\xe6\x97")); string(got) != "ab" {
		t.Errorf("trimPartialRune = %q", got)
	}
	if got := trimPartialRune([]byte("ab日")); string(got) != "ab日" {
		t.Errorf("trimPartialRune = %q", got)
	}
}

// TestBoundedTextMemory checks that collecting output keeps a bounded
// amount, however much is written.
func TestBoundedTextMemory(t *testing.T) {
	var bt boundedText
	chunk := strings.Repeat("0123456789abcde\n", 4096) // 64 KiB
	const total = 256 << 20
	for n := 0; n < total; n += len(chunk) {
		bt.WriteString(chunk)
	}
	if len(bt.keep) != keepCap || cap(bt.keep) > 2*keepCap || len(bt.ring) != ringSize {
		t.Errorf("kept %d bytes (cap %d) and a ring of %d", len(bt.keep), cap(bt.keep), len(bt.ring))
	}
	if bt.total != total || bt.lines() != total/16 {
		t.Errorf("counted %d bytes, %d lines", bt.total, bt.lines())
	}
	shown, tr := bt.cut("out-1")
	if len(shown) > maxShownBytes || !tr.Capped {
		t.Errorf("shown %d bytes, capped %v", len(shown), tr.Capped)
	}
	if !strings.HasSuffix(shown, "0123456789abcde\n") || !strings.HasPrefix(shown, "0123456789abcde\n") {
		t.Errorf("head or tail not on line boundaries")
	}
	if got := strings.Count(shown, "\n"); got != headLines+tailLines+1 {
		t.Errorf("shown %d lines, want %d", got, headLines+tailLines+1)
	}
	body, note := bt.full()
	if len(body) > keepCap || !strings.Contains(note, "output capped: 260,046,848 more bytes") {
		t.Errorf("full output is %d bytes, note %q", len(body), note)
	}
}

func TestTailAcrossKeepAndRing(t *testing.T) {
	var bt boundedText
	bt.WriteString(strings.Repeat("a", keepCap-10))
	if bt.ring != nil {
		t.Error("ring made before the kept part is full")
	}
	bt.WriteString("0123456789") // fills keep exactly
	bt.WriteString("bcd")        // into the ring
	tail := string(bt.tail())
	if len(tail) != ringSize || !strings.HasSuffix(tail, "a0123456789bcd") {
		t.Errorf("tail is %d bytes ending %q", len(tail), tail[len(tail)-20:])
	}
	var small boundedText
	small.WriteString("xyz")
	if string(small.tail()) != "xyz" || small.ring != nil {
		t.Errorf("small tail %q", small.tail())
	}
}

// TestKeepCapExact: the kept part of an output is exactly keepCap bytes,
// the stream's first, however the writes fall: one write larger than the
// cap, or writes whose size does not divide it.
func TestKeepCapExact(t *testing.T) {
	pattern := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a' + byte(i%26)
		}
		return string(b)
	}
	tests := []struct {
		name   string
		writes []int
	}{
		{"one write past the cap", []int{keepCap + 12345}},
		{"one write of twice the cap", []int{2 * keepCap}},
		{"writes that do not divide the cap", []int{1_000_003, 1_000_003, 1_000_003, 1_000_003, 1_000_003, 1_000_003, 1_000_003, 1_000_003, 1_000_003}},
		{"a small write, then one past the cap", []int{7, keepCap}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var bt boundedText
			var all strings.Builder
			for _, n := range tt.writes {
				s := pattern(n)
				all.WriteString(s)
				bt.WriteString(s)
			}
			stream := all.String()
			if len(bt.keep) != keepCap || string(bt.keep) != stream[:keepCap] {
				t.Errorf("kept %d bytes, want the stream's first %d", len(bt.keep), keepCap)
			}
			if bt.total != int64(len(stream)) || !bt.capped() {
				t.Errorf("total %d, capped %v; want %d, true", bt.total, bt.capped(), len(stream))
			}
			if tail := string(bt.tail()); tail != stream[len(stream)-ringSize:] {
				t.Errorf("the tail is not the stream's last %d bytes", ringSize)
			}
			body, note := bt.full()
			if len(body) != keepCap || !strings.Contains(note, "output capped") {
				t.Errorf("full output %d bytes, note %q", len(body), note)
			}
		})
	}
}
