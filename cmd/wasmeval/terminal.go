package main

import (
	"io"
	"strconv"
	"unicode/utf8"
)

// visible returns s with what a terminal would act on shown escaped: C0
// control characters but tab and newline, DEL and bytes that are not
// UTF-8 as \xNN, C1 control characters (U+0080 to U+009F, 8-bit CSI among
// them) as \u00NN, which keeps JSON valid JSON. What `tape show` and
// `replay` print comes from a tape, whose code, outputs, file names and
// environment a guest (or whoever wrote the tape) chose: an escape
// sequence in them must not set the operator's window title, write their
// clipboard or clear their screen.
func visible(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if controlRune(r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case !controlRune(r, n):
			b = append(b, s[i:i+n]...)
		case r >= 0x80 && n > 1: // C1
			b = append(b, `\u00`...)
			b = strconv.AppendUint(b, uint64(r)>>4, 16)
			b = strconv.AppendUint(b, uint64(r)&15, 16)
		default:
			b = append(b, `\x`...)
			b = strconv.AppendUint(b, uint64(s[i])>>4, 16)
			b = strconv.AppendUint(b, uint64(s[i])&15, 16)
		}
		i += n
	}
	return string(b)
}

// controlRune says whether the rune r, n bytes long, is one that visible
// escapes.
func controlRune(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n == 1: // not UTF-8
		return true
	case r == '\n' || r == '\t':
		return false
	}
	return r < 0x20 || r >= 0x7f && r <= 0x9f
}

// visibleWriter writes what is written to it through visible. Each Write
// should be whole lines (a rune split across two writes would be shown as
// bytes).
type visibleWriter struct{ w io.Writer }

func (v visibleWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(v.w, visible(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
