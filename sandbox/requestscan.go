package sandbox

import (
	"unicode/utf8"
)

// ScanRequest decodes a request of the common shape without reflection: a
// `wasmeval eval` line or request body costs a few microseconds instead of
// DecodeRequest's general path (a map per object, every value checked
// twice). The shape is one JSON object whose only field is "cells", an
// array of 1 to MaxCells objects with only cell fields, each at most once:
// "language", "code" and "title" strings (valid UTF-8, escapes other than
// surrogate pairs), "timeout" a plain integer from 1 to MaxTimeoutSeconds,
// "reset" true or false, "fuel" a plain integer from 1 to MaxFuel; no
// nulls; every cell with a language and code; nothing after the object
// but white space; and the request valid (Request.Validate).
//
// ok false says only that the data is not of that shape: DecodeRequest
// then decides, with its messages. When ok is true, DecodeRequest returns
// the same Request (FuzzScanRequest checks it).
func ScanRequest(data []byte) (req Request, ok bool) {
	s := scanner{b: data}
	if !s.lit('{') || !s.key("cells") || !s.lit('[') {
		return Request{}, false
	}
	for {
		if len(req.Cells) == MaxCells {
			return Request{}, false
		}
		c, ok := s.cell()
		if !ok {
			return Request{}, false
		}
		req.Cells = append(req.Cells, c)
		if s.lit(',') {
			continue
		}
		if !s.lit(']') || !s.lit('}') {
			return Request{}, false
		}
		break
	}
	s.space()
	if s.p != len(s.b) || req.Validate() != nil {
		return Request{}, false
	}
	return req, true
}

// scanner reads JSON from b at p. Its methods return false on anything
// outside ScanRequest's shape.
type scanner struct {
	b []byte
	p int
}

func (s *scanner) space() {
	for s.p < len(s.b) {
		switch s.b[s.p] {
		case ' ', '\t', '\n', '\r':
			s.p++
		default:
			return
		}
	}
}

// lit reads c after white space.
func (s *scanner) lit(c byte) bool {
	s.space()
	if s.p < len(s.b) && s.b[s.p] == c {
		s.p++
		return true
	}
	return false
}

// key reads the object key name and its colon.
func (s *scanner) key(name string) bool {
	k, ok := s.str()
	return ok && k == name && s.lit(':')
}

// cell reads one cell object.
func (s *scanner) cell() (Cell, bool) {
	var c Cell
	if !s.lit('{') {
		return c, false
	}
	var seen uint8 // a bit per field of cellFields
	for {
		k, ok := s.str()
		if !ok || !s.lit(':') {
			return c, false
		}
		bit := uint8(0)
		switch k {
		case "language":
			bit = 1
			c.Language, ok = s.str()
		case "code":
			bit = 2
			c.Code, ok = s.str()
		case "title":
			bit = 4
			c.Title, ok = s.str()
		case "timeout":
			bit = 8
			var n int64
			n, ok = s.uint(MaxTimeoutSeconds)
			c.TimeoutSeconds = int(n)
		case "reset":
			bit = 16
			c.Reset, ok = s.bool()
		case "fuel":
			bit = 32
			c.Fuel, ok = s.uint(MaxFuel)
		default:
			return c, false
		}
		if !ok || seen&bit != 0 {
			return c, false
		}
		seen |= bit
		if s.lit(',') {
			continue
		}
		if !s.lit('}') || seen&3 != 3 {
			return c, false
		}
		if seen&8 == 0 {
			c.TimeoutSeconds = DefaultTimeoutSeconds
		}
		return c, true
	}
}

// uint reads a plain JSON integer from 1 to max (no sign, fraction,
// exponent or leading zero).
func (s *scanner) uint(max int64) (int64, bool) {
	s.space()
	start := s.p
	var n int64
	for s.p < len(s.b) && '0' <= s.b[s.p] && s.b[s.p] <= '9' {
		if s.p-start >= 18 { // past any max here; no overflow
			return 0, false
		}
		n = n*10 + int64(s.b[s.p]-'0')
		s.p++
	}
	if s.p == start || s.b[start] == '0' || n > max {
		return 0, false
	}
	if s.p < len(s.b) {
		switch s.b[s.p] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	return n, true
}

func (s *scanner) bool() (bool, bool) {
	s.space()
	switch {
	case hasAt(s.b, s.p, "true"):
		s.p += 4
		return true, true
	case hasAt(s.b, s.p, "false"):
		s.p += 5
		return false, true
	}
	return false, false
}

func hasAt(b []byte, p int, lit string) bool {
	return len(b)-p >= len(lit) && string(b[p:p+len(lit)]) == lit
}

// str reads a JSON string after white space. Strings with invalid UTF-8
// (which encoding/json replaces), control characters (invalid) or
// surrogate escapes are not read: DecodeRequest's general path does.
func (s *scanner) str() (string, bool) {
	if !s.lit('"') {
		return "", false
	}
	start := s.p
	ascii := true
	for s.p < len(s.b) {
		c := s.b[s.p]
		switch {
		case c == '"':
			raw := s.b[start:s.p]
			s.p++
			if !ascii && !utf8.Valid(raw) {
				return "", false
			}
			return string(raw), true
		case c == '\\':
			return s.escaped(start)
		case c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
		}
		s.p++
	}
	return "", false
}

// escaped finishes reading a string that has an escape, from its start.
func (s *scanner) escaped(start int) (string, bool) {
	out := make([]byte, 0, s.p-start+64)
	seg := start // the start of the bytes not yet copied to out
	for s.p < len(s.b) {
		c := s.b[s.p]
		switch {
		case c == '"':
			out = append(out, s.b[seg:s.p]...)
			s.p++
			if !utf8.Valid(out) {
				return "", false
			}
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			s.p++
			continue
		}
		out = append(out, s.b[seg:s.p]...)
		if s.p+1 >= len(s.b) {
			return "", false
		}
		e := s.b[s.p+1]
		s.p += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if s.p+4 > len(s.b) {
				return "", false
			}
			r := rune(0)
			for _, h := range s.b[s.p : s.p+4] {
				switch {
				case '0' <= h && h <= '9':
					r = r<<4 | rune(h-'0')
				case 'a' <= h && h <= 'f':
					r = r<<4 | rune(h-'a'+10)
				case 'A' <= h && h <= 'F':
					r = r<<4 | rune(h-'A'+10)
				default:
					return "", false
				}
			}
			if 0xD800 <= r && r < 0xE000 { // a surrogate: the general path
				return "", false
			}
			s.p += 4
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
		seg = s.p
	}
	return "", false
}
