//go:build go1.26 && !go1.27

package js

import (
	"reflect"
	"unsafe"
)

// goMap and goTable mirror the head of Go 1.26's internal/runtime/maps.Map
// and table: a map's size is its tables' capacity, which the number of its
// entries says little about (a table holds 7/16 to 7/8 of its slots), and
// a walk that went by the entries counted nine tenths of a big Map.
type goMap struct {
	used        uint64
	seed        uintptr
	dirPtr      unsafe.Pointer
	dirLen      int
	globalDepth uint8
}

type goTable struct {
	used       uint16
	capacity   uint16
	growthLeft uint16
	localDepth uint8
	index      int
	groups     unsafe.Pointer
	lengthMask uint64
}

// mapSize returns the heap map v takes (not its keys' and values' own
// memory), read from the map, or ok false if what it reads does not add
// up (the walk then estimates it from its length). The caller owns v.
func mapSize(v reflect.Value) (size int64, ok bool) {
	m := (*goMap)(v.UnsafePointer())
	if m.used != uint64(v.Len()) || m.dirLen < 0 {
		return 0, false
	}
	t := v.Type()
	group := 8 + 8*slotSize(t.Key(), t.Elem())
	size = 48 // the header, a size class of its own
	if m.dirLen == 0 {
		if m.dirPtr != nil {
			size += allocSize(group, true)
		}
		return size, m.used <= 8
	}
	if m.globalDepth > 63 || m.dirLen != 1<<m.globalDepth {
		return 0, false
	}
	dir := unsafe.Slice((**goTable)(m.dirPtr), m.dirLen)
	size += allocSize(int64(m.dirLen)*8, true)
	var used uint64
	for i := 0; i < len(dir); {
		tb := dir[i]
		if tb == nil {
			return 0, false
		}
		c := int(tb.capacity)
		if tb.localDepth > m.globalDepth || c < 8 || c > 1024 || c&(c-1) != 0 || tb.lengthMask != uint64(c/8-1) {
			return 0, false
		}
		used += uint64(tb.used)
		size += allocSize(int64(unsafe.Sizeof(goTable{})), true) + allocSize(int64(c/8)*group, true)
		i += 1 << (m.globalDepth - tb.localDepth)
	}
	return size, used == m.used
}

// slotSize is the size of a map slot holding a key of type k and a value
// of type e (keys and values past 128 bytes are held by pointer).
func slotSize(k, e reflect.Type) int64 {
	ks, ka := int64(k.Size()), int64(k.Align())
	es, ea := int64(e.Size()), int64(e.Align())
	if ks > 128 {
		ks, ka = 8, 8
	}
	if es > 128 {
		es, ea = 8, 8
	}
	off := (ks + ea - 1) &^ (ea - 1)
	a := max(ka, ea)
	return (off + es + a - 1) &^ (a - 1)
}
