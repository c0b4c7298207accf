package fuel_test

// A tiny WebAssembly binary encoder for hand-built test modules.

import "fmt"

// Value types and a few opcodes used by name.
const (
	i32     = 0x7f
	i64     = 0x7e
	f32     = 0x7d
	f64     = 0x7c
	v128    = 0x7b
	funcref = 0x70
	extern  = 0x6f

	opUnreachable = 0x00
	opNop         = 0x01
	opBlock       = 0x02
	opLoop        = 0x03
	opIf          = 0x04
	opElse        = 0x05
	opEnd         = 0x0b
	opBr          = 0x0c
	opBrIf        = 0x0d
	opBrTable     = 0x0e
	opReturn      = 0x0f
	opCall        = 0x10
	opCallInd     = 0x11
	opReturnCall  = 0x12
	opDrop        = 0x1a
	opSelect      = 0x1b
	opSelectT     = 0x1c
	opLocalGet    = 0x20
	opLocalSet    = 0x21
	opLocalTee    = 0x22
	opGlobalGet   = 0x23
	opGlobalSet   = 0x24
	opTableGet    = 0x25
	opTableSet    = 0x26
	opI32Const    = 0x41
	opI64Const    = 0x42
	opF32Const    = 0x43
	opF64Const    = 0x44
	opRefNull     = 0xd0
	opRefIsNull   = 0xd1
	opRefFunc     = 0xd2
	empty         = 0x40 // block type
)

func leb(v uint64) []byte {
	var b []byte
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func sleb(v int64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// cat concatenates byte slices and single bytes (any integer type is a byte).
func cat(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch p := p.(type) {
		case []byte:
			b = append(b, p...)
		case byte:
			b = append(b, p)
		case int:
			b = append(b, byte(p))
		case string:
			b = append(b, p...)
		default:
			panic("cat: unsupported part")
		}
	}
	return b
}

func vec(items ...[]byte) []byte {
	b := leb(uint64(len(items)))
	for _, it := range items {
		b = append(b, it...)
	}
	return b
}

func str(s string) []byte { return cat(leb(uint64(len(s))), s) }

func sec(id byte, content []byte) []byte { return cat(id, leb(uint64(len(content))), content) }

func custom(name string, content []byte) []byte { return sec(0, cat(str(name), content)) }

func module(sections ...[]byte) []byte {
	return cat("\x00asm", []byte{1, 0, 0, 0}, cat(anys(sections)...))
}

func anys(bs [][]byte) []any {
	a := make([]any, len(bs))
	for i, b := range bs {
		a[i] = b
	}
	return a
}

func functype(params, results []byte) []byte {
	return cat(0x60, leb(uint64(len(params))), params, leb(uint64(len(results))), results)
}

func importFunc(mod, name string, typ uint32) []byte {
	return cat(str(mod), str(name), 0x00, leb(uint64(typ)))
}

func export(name string, kind byte, idx uint32) []byte {
	return cat(str(name), kind, leb(uint64(idx)))
}

// body encodes a function body: locals is a list of (count, type) pairs.
func body(locals [][2]int, code ...any) []byte {
	var ls [][]byte
	for _, l := range locals {
		ls = append(ls, cat(leb(uint64(l[0])), l[1]))
	}
	b := cat(vec(ls...), cat(code...))
	return cat(leb(uint64(len(b))), b)
}

func u(v uint32) []byte   { return leb(uint64(v)) }
func i32c(v int32) []byte { return cat(opI32Const, sleb(int64(v))) }
func i64c(v int64) []byte { return cat(opI64Const, sleb(v)) }

// memarg encodes an alignment exponent and an offset.
func memarg(align, offset uint32) []byte { return cat(u(align), u(offset)) }

func fc(sub uint32, imm ...any) []byte { return cat(0xfc, u(sub), cat(imm...)) }
func fd(sub uint32, imm ...any) []byte { return cat(0xfd, u(sub), cat(imm...)) }
func fe(sub uint32, imm ...any) []byte { return cat(0xfe, u(sub), cat(imm...)) }

// sectionNames lists the sections of a well-formed module: the id, or
// the name of a custom section.
func sectionNames(bin []byte) []string {
	var names []string
	readU32 := func(b []byte) (uint32, int) {
		var v uint32
		for i := 0; ; i++ {
			v |= uint32(b[i]&0x7f) << (7 * i)
			if b[i]&0x80 == 0 {
				return v, i + 1
			}
		}
	}
	for b := bin[8:]; len(b) > 0; {
		id := b[0]
		size, n := readU32(b[1:])
		content := b[1+n : 1+n+int(size)]
		if id == 0 {
			l, m := readU32(content)
			names = append(names, string(content[m:m+int(l)]))
		} else {
			names = append(names, fmt.Sprint(id))
		}
		b = b[1+n+int(size):]
	}
	return names
}
