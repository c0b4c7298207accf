package wasm

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/tetratelabs/wazero/api"
)

// Snapshot is a guest's linear memory taken at rest (no guest frames
// live), from which new instances of the same module start: their memory
// is mapped copy-on-write from the snapshot's Image, so starting one copies
// nothing, and the pages an instance only reads stay shared.
//
// The module must be instantiated without anything writing to its memory
// before the snapshot is in place: no start functions, and no data
// segments (StripData).
type Snapshot struct {
	image *Image
	size  uint32
}

// TakeSnapshot freezes mem, which must be at rest.
func TakeSnapshot(mem api.Memory) (*Snapshot, error) {
	size := mem.Size()
	all, ok := mem.Read(0, size)
	if !ok {
		return nil, fmt.Errorf("wasm: snapshot: cannot read %d bytes of memory", size)
	}
	im, err := NewImage(all)
	if err != nil {
		return nil, err
	}
	return &Snapshot{image: im, size: size}, nil
}

// SnapshotFromImage makes a snapshot of an image of size bytes (see
// OpenImage).
func SnapshotFromImage(im *Image) *Snapshot {
	return &Snapshot{image: im, size: uint32(im.size)}
}

// Bytes returns a copy of the snapshot's memory, for SaveImage.
func (s *Snapshot) Bytes() ([]byte, error) {
	b := make([]byte, s.size)
	if _, err := s.image.f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("wasm: snapshot: %w", err)
	}
	return b, nil
}

// View maps the snapshot's memory read-only, without copying it; call
// release when done with it.
func (s *Snapshot) View() (b []byte, release func(), err error) {
	if s.size == 0 {
		return nil, func() {}, nil
	}
	b, err = unix.Mmap(int(s.image.f.Fd()), 0, int(s.size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("wasm: snapshot: %w", err)
	}
	return b, func() { _ = unix.Munmap(b) }, nil
}

// Image is the memory file new instances map (MemoryOptions.Image).
func (s *Snapshot) Image() *Image { return s.image }

// Size is the memory size in bytes the snapshot restores.
func (s *Snapshot) Size() uint32 { return s.size }

// Restore completes the memory of a module instantiated with
// WithMemory(ctx, MemoryOptions{Image: s.Image()}): it grows the memory to
// the snapshot's size, which brings the rest of the image into view.
func (s *Snapshot) Restore(mem api.Memory) error {
	if cur := mem.Size(); cur < s.size {
		pages := (s.size - cur + 65535) / 65536
		if _, ok := mem.Grow(pages); !ok {
			return fmt.Errorf("wasm: restore: cannot grow memory by %d pages", pages)
		}
	}
	return nil
}

// Close releases the snapshot's image; instances mapped from it keep their
// memory.
func (s *Snapshot) Close() error { return s.image.Close() }
