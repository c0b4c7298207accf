package fuel

import (
	"errors"
	"fmt"
)

var (
	errEOF      = errors.New("unexpected end of input")
	errLEB      = errors.New("malformed LEB128 integer")
	errLEBRange = errors.New("LEB128 integer out of range")
)

// reader reads a WebAssembly byte stream. off is relative to b; base is the
// offset of b[0] in the whole module, for error messages.
type reader struct {
	b    []byte
	off  int
	base int
}

func (r *reader) pos() int { return r.base + r.off }

func (r *reader) eof() bool { return r.off >= len(r.b) }

// end reports bytes left after a section's last item.
func (r *reader) end() error {
	if r.off < len(r.b) {
		return fmt.Errorf("%d trailing bytes at offset 0x%x", len(r.b)-r.off, r.pos())
	}
	return nil
}

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errEOF
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *reader) bytes(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.off {
		return nil, errEOF
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s, nil
}

// u32 reads an unsigned LEB128 integer of at most 32 bits (5 bytes).
func (r *reader) u32() (uint32, error) {
	var v uint32
	for i := 0; i < 5; i++ {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if i == 4 && c&0xf0 != 0 {
			return 0, errLEBRange
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return 0, errLEB
}

// u64 reads an unsigned LEB128 integer of at most 64 bits (10 bytes).
func (r *reader) u64() (uint64, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if i == 9 && c&0xfe != 0 {
			return 0, errLEBRange
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return 0, errLEB
}

// signed reads a signed LEB128 integer of at most bits bits (32, 33 or 64).
func (r *reader) signed(bits int) (int64, error) {
	var v int64
	maxBytes := (bits + 6) / 7
	for i := 0; i < maxBytes; i++ {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		shift := 7 * i
		v |= int64(c&0x7f) << shift
		if c&0x80 == 0 {
			if i == maxBytes-1 {
				// The unused bits of the last byte must all equal the sign bit.
				used := bits - shift // value bits carried by this byte, sign included
				rest := int8(c<<1) >> 1 >> (used - 1)
				if rest != 0 && rest != -1 {
					return 0, errLEBRange
				}
			}
			if shift+7 < 64 && c&0x40 != 0 {
				v |= -1 << (shift + 7)
			}
			return v, nil
		}
	}
	return 0, errLEB
}

// name reads a length-prefixed string.
func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(int(n))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// skipName skips a length-prefixed string without allocating it.
func (r *reader) skipName() error {
	n, err := r.u32()
	if err == nil {
		_, err = r.bytes(int(n))
	}
	return err
}

func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendS64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func sizeU32(v uint32) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func appendName(b []byte, s string) []byte {
	b = appendU32(b, uint32(len(s)))
	return append(b, s...)
}
