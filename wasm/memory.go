package wasm

import (
	"context"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// WithMemoryLimit returns a context that makes wazero back the linear
// memory of modules instantiated with it by a private anonymous mapping of
// at most limit bytes. Growing past the limit fails (memory.grow returns -1,
// so malloc returns NULL and CPython raises MemoryError) instead of taking
// host memory without bound.
//
// The whole limit is reserved as address space up front (MAP_NORESERVE) and
// pages are committed only when the guest touches them, so the buffer never
// moves or gets copied when the guest grows its memory.
func WithMemoryLimit(ctx context.Context, limit uint64) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(
		func(capacity, max uint64) experimental.LinearMemory {
			return &mmapMemory{limit: min(limit, max)}
		}))
}

type mmapMemory struct {
	limit uint64
	buf   []byte // the whole mapping; the guest sees buf[:size]
}

// Reallocate implements experimental.LinearMemory.
func (m *mmapMemory) Reallocate(size uint64) []byte {
	if size > m.limit {
		return nil
	}
	if m.buf == nil {
		reserve := max(m.limit, 65536)
		b, err := syscall.Mmap(-1, 0, int(reserve), syscall.PROT_READ|syscall.PROT_WRITE,
			syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
		if err != nil {
			return nil
		}
		m.buf = b
	}
	return m.buf[:size]
}

// Free implements experimental.LinearMemory.
func (m *mmapMemory) Free() {
	if m.buf != nil {
		// Munmap of a mapping we made cannot fail but for a bug of ours;
		// leaking it then is better than taking the host down.
		_ = syscall.Munmap(m.buf)
		m.buf = nil
	}
}
