package wasm

import (
	"bytes"
	"fmt"

	"github.com/tetratelabs/wazero/api"
)

// chunkSize is the granularity of snapshot diffs. 4 KiB matches the host's
// page size, so unchanged regions cost nothing to skip.
const chunkSize = 4096

// Snapshot is a copy of a guest's linear memory taken at rest (no guest
// frames live), to be restored into fresh instances of the same module.
//
// Restoring writes only the chunks that differ from what a freshly
// instantiated module already holds (its data segments and what its start
// functions wrote), which is most of the cost saved for a large heap.
type Snapshot struct {
	size   uint32  // memory size in bytes
	chunks []chunk // regions that differ from a fresh instance
}

type chunk struct {
	off  uint32
	data []byte
}

// TakeSnapshot copies mem, keeping the chunks that differ from fresh, the
// memory of a module instance that has only been instantiated.
func TakeSnapshot(mem api.Memory, fresh []byte) (*Snapshot, error) {
	size := mem.Size()
	all, ok := mem.Read(0, size)
	if !ok {
		return nil, fmt.Errorf("wasm: snapshot: cannot read %d bytes of memory", size)
	}
	s := &Snapshot{size: size}
	var cur *chunk
	for off := uint32(0); off < size; off += chunkSize {
		end := min(off+chunkSize, size)
		b := all[off:end]
		same := false
		if int(end) <= len(fresh) {
			same = bytes.Equal(b, fresh[off:end])
		} else {
			same = isZero(b)
		}
		if same {
			cur = nil
			continue
		}
		if cur == nil {
			s.chunks = append(s.chunks, chunk{off: off})
			cur = &s.chunks[len(s.chunks)-1]
		}
		cur.data = append(cur.data, b...)
	}
	return s, nil
}

// Size is the memory size in bytes the snapshot restores.
func (s *Snapshot) Size() uint32 { return s.size }

// DirtyBytes is how many bytes a Restore writes.
func (s *Snapshot) DirtyBytes() int {
	n := 0
	for _, c := range s.chunks {
		n += len(c.data)
	}
	return n
}

// Restore writes the snapshot into mem, which must belong to a fresh
// instance of the module the snapshot was taken from.
func (s *Snapshot) Restore(mem api.Memory) error {
	if cur := mem.Size(); cur < s.size {
		pages := (s.size - cur + 65535) / 65536
		if _, ok := mem.Grow(pages); !ok {
			return fmt.Errorf("wasm: restore: cannot grow memory by %d pages", pages)
		}
	}
	for _, c := range s.chunks {
		if !mem.Write(c.off, c.data) {
			return fmt.Errorf("wasm: restore: write of %d bytes at %#x out of range", len(c.data), c.off)
		}
	}
	return nil
}

func isZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}
