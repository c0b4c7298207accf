package python

import (
	"bytes"
	"fmt"

	"github.com/klauspost/compress/s2"

	"github.com/wasmeval/wasmeval/runtimes"
)

// PersistTrackedForTest reports whether cache's last persist took the
// changed pages from the checkpoint's write tracking (not by hashing).
func PersistTrackedForTest(cache *StateCache) bool { return cache.tracked }

// StatePagesForTest decodes a persisted state: its live pages whose bytes
// differ from what the template holds there (zero past it).
func StatePagesForTest(inst runtimes.Instance, index []byte, frames []Frame) (map[uint32]string, error) {
	in := inst.(*Instance)
	_, dec, err := stateCodec()
	if err != nil {
		return nil, err
	}
	size, parsed, err := parseState(index, frames)
	if err != nil {
		return nil, err
	}
	tmpl, release, err := in.r.template.View()
	if err != nil {
		return nil, err
	}
	defer release()
	out := map[uint32]string{}
	for i, f := range parsed {
		var raw []byte
		if f.codec == codecS2 {
			raw, err = s2.Decode(nil, f.data)
		} else {
			raw, err = dec.DecodeAll(f.data, nil)
		}
		if err != nil {
			return nil, fmt.Errorf("frame %d: %w", i, err)
		}
		off := uint32(0)
		for _, e := range f.pages {
			p := e &^ stalePage
			n := min(pageBytes, size-p*pageBytes)
			if e&stalePage == 0 && !bytes.Equal(raw[off:off+n], templatePage(tmpl, p, n)) {
				out[p] = string(raw[off : off+n])
			}
			off += n
		}
	}
	return out, nil
}

// MemoryPagesForTest is inst's memory as StatePagesForTest gives a state:
// the pages whose bytes differ from the template's.
func MemoryPagesForTest(inst runtimes.Instance) (map[uint32]string, error) {
	in := inst.(*Instance)
	in.waitCheckpoint()
	mem := in.mod.Memory()
	size := mem.Size()
	all, _ := mem.Read(0, size)
	tmpl, release, err := in.r.template.View()
	if err != nil {
		return nil, err
	}
	defer release()
	out := map[uint32]string{}
	for p := uint32(0); p*pageBytes < size; p++ {
		n := min(pageBytes, size-p*pageBytes)
		if b := all[p*pageBytes : p*pageBytes+n]; !bytes.Equal(b, templatePage(tmpl, p, n)) {
			out[p] = string(b)
		}
	}
	return out, nil
}

func templatePage(tmpl []byte, p, n uint32) []byte {
	want := make([]byte, n)
	if off := p * pageBytes; int(off) < len(tmpl) {
		copy(want, tmpl[off:])
	}
	return want
}
