package wasm

import (
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero/api"
)

// Segment is an active data segment: bytes a module's instantiation writes
// into its memory at Offset.
type Segment struct {
	Offset uint32
	Data   []byte
}

// StripData returns a copy of the module bin without its data segments (an
// empty data section), and the segments. A module instantiated from the
// stripped copy starts with its memory untouched, which lets a snapshot
// mapped copy-on-write stay shared instead of being overwritten page by
// page by instantiation; ApplyData writes the segments when the module is
// booted instead of restored.
//
// Only active segments for memory 0 with an i32.const offset are supported
// (what clang and wasm-ld emit without bulk memory); anything else is an
// error.
func StripData(bin []byte) ([]byte, []Segment, error) {
	if len(bin) < 8 || string(bin[:4]) != "\x00asm" {
		return nil, nil, errors.New("wasm: strip data: not a WebAssembly module")
	}
	out := append([]byte(nil), bin[:8]...)
	var segs []Segment
	p := 8
	for p < len(bin) {
		id := bin[p]
		size, n, err := uleb(bin, p+1)
		if err != nil {
			return nil, nil, fmt.Errorf("wasm: strip data: section at %#x: %w", p, err)
		}
		start := p + 1 + n
		end := start + int(size)
		if end > len(bin) || end < start {
			return nil, nil, fmt.Errorf("wasm: strip data: section %d at %#x overruns the module", id, p)
		}
		switch id {
		case 11: // data
			segs, err = parseData(bin[start:end])
			if err != nil {
				return nil, nil, fmt.Errorf("wasm: strip data: %w", err)
			}
			out = append(out, 11, 1, 0) // a data section with no segments
		case 12: // data count: must match the (now empty) data section
			out = append(out, 12, 1, 0)
		default:
			out = append(out, bin[p:end]...)
		}
		p = end
	}
	return out, segs, nil
}

func parseData(b []byte) ([]Segment, error) {
	count, n, err := uleb(b, 0)
	if err != nil {
		return nil, err
	}
	p := n
	// Each segment takes at least 4 bytes: a count past that is a lie that
	// must not size the allocation.
	if uint64(count) > uint64(len(b))/4 {
		return nil, fmt.Errorf("data section: %d segments cannot fit in %d bytes", count, len(b))
	}
	segs := make([]Segment, 0, count)
	for i := uint32(0); i < count; i++ {
		if p+3 > len(b) {
			return nil, fmt.Errorf("data segment %d: truncated", i)
		}
		if b[p] != 0 {
			return nil, fmt.Errorf("data segment %d: kind %d is not supported (only active segments of memory 0)", i, b[p])
		}
		if b[p+1] != 0x41 { // i32.const
			return nil, fmt.Errorf("data segment %d: offset is not an i32.const", i)
		}
		off, n, err := sleb32(b, p+2)
		if err != nil {
			return nil, fmt.Errorf("data segment %d: %w", i, err)
		}
		p += 2 + n
		if p >= len(b) || b[p] != 0x0b {
			return nil, fmt.Errorf("data segment %d: offset expression is not a single i32.const", i)
		}
		p++
		size, n, err := uleb(b, p)
		if err != nil {
			return nil, fmt.Errorf("data segment %d: %w", i, err)
		}
		p += n
		if p+int(size) > len(b) {
			return nil, fmt.Errorf("data segment %d: truncated", i)
		}
		segs = append(segs, Segment{Offset: uint32(off), Data: b[p : p+int(size)]})
		p += int(size)
	}
	if p != len(b) {
		return nil, errors.New("data section: trailing bytes")
	}
	return segs, nil
}

// ApplyData writes the segments into mem, as instantiation of the original
// module would have.
func ApplyData(mem api.Memory, segs []Segment) error {
	for i, s := range segs {
		if !mem.Write(s.Offset, s.Data) {
			return fmt.Errorf("wasm: data segment %d (%d bytes at %#x) is out of memory bounds", i, len(s.Data), s.Offset)
		}
	}
	return nil
}

func uleb(b []byte, p int) (uint32, int, error) {
	var v uint32
	for i := 0; i < 5; i++ {
		if p+i >= len(b) {
			return 0, 0, errors.New("truncated LEB128")
		}
		c := b[p+i]
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errors.New("LEB128 too long")
}

func sleb32(b []byte, p int) (int32, int, error) {
	var v int64
	for i := 0; i < 5; i++ {
		if p+i >= len(b) {
			return 0, 0, errors.New("truncated LEB128")
		}
		c := b[p+i]
		v |= int64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if shift := 7 * (i + 1); shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return int32(v), i + 1, nil
		}
	}
	return 0, 0, errors.New("LEB128 too long")
}
