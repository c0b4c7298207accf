package wasm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"github.com/tetratelabs/wazero/experimental"
	"golang.org/x/sys/unix"
)

const pageSize = 4096

// Image is a frozen copy of a guest's linear memory in a memory file
// (memfd), from which new memories are mapped copy-on-write: a new session
// shares the pages it only reads with every other session started from the
// same image, and pays a page copy only for the pages it writes.
type Image struct {
	f    *os.File
	size uint64
}

// NewImage freezes b (a guest memory at rest) into an Image.
func NewImage(b []byte) (*Image, error) {
	fd, err := unix.MemfdCreate("wasmeval-image", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("wasm: image: memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "wasmeval-image")
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("wasm: image: %w", err)
	}
	return &Image{f: f, size: uint64(len(b))}, nil
}

// OpenImage opens an image saved by SaveImage. The file is mapped
// copy-on-write as it is, so it must not change while the image is open
// (SaveImage replaces files atomically, never in place).
func OpenImage(path string, size uint64) (*Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil || uint64(st.Size()) != size {
		f.Close()
		return nil, fmt.Errorf("wasm: image %s: not %d bytes", path, size)
	}
	return &Image{f: f, size: size}, nil
}

// SaveImage writes b to path atomically (a temporary file renamed into
// place), for OpenImage.
func SaveImage(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Size is the image's size in bytes.
func (im *Image) Size() uint64 { return im.size }

// Close releases the image; memories mapped from it keep their pages.
func (im *Image) Close() error { return im.f.Close() }

// MemoryOptions configure the linear memory WithMemory gives to the
// modules instantiated with its context.
type MemoryOptions struct {
	// Limit caps the memory in bytes: growing past it fails (memory.grow
	// returns -1, so malloc returns NULL and CPython raises MemoryError)
	// instead of taking host memory without bound.
	Limit uint64
	// Image, when set, is mapped copy-on-write at the start of the memory,
	// so the guest starts with the image's content.
	Image *Image
	// Handle, when set, receives the memory, for DirtyPages.
	Handle *MemoryHandle
}

// MemoryHandle refers to a memory made by WithMemory.
type MemoryHandle struct {
	m       *mmapMemory
	entries []byte   // page map entries, reused
	dirty   []uint32 // DirtyPages' result, reused
}

var pagemap struct {
	once sync.Once
	f    *os.File
	err  error
}

// DirtyPages returns the indexes of the 4 KiB pages among the first size
// bytes that the guest has written since the memory was mapped: the pages
// that differ from the image (or from zero past it). It reads the kernel's
// page map (/proc/self/pagemap): a written page of a private mapping is
// anonymous, an untouched or only-read one is not. The result is valid
// until the next call.
func (h *MemoryHandle) DirtyPages(size uint32) ([]uint32, error) {
	if h == nil || h.m == nil || h.m.buf == nil {
		return nil, fmt.Errorf("wasm: dirty pages: no memory")
	}
	pagemap.once.Do(func() { pagemap.f, pagemap.err = os.Open("/proc/self/pagemap") })
	if pagemap.err != nil {
		return nil, fmt.Errorf("wasm: dirty pages: %w", pagemap.err)
	}
	n := (uint64(size) + pageSize - 1) / pageSize
	if uint64(cap(h.entries)) < n*8 {
		h.entries = make([]byte, n*8)
	}
	entries := h.entries[:n*8]
	base := uint64(uintptr(unsafe.Pointer(&h.m.buf[0]))) / pageSize
	if _, err := pagemap.f.ReadAt(entries, int64(base*8)); err != nil {
		return nil, fmt.Errorf("wasm: dirty pages: %w", err)
	}
	const (
		present  = 1 << 63
		swapped  = 1 << 62
		filePage = 1 << 61
	)
	dirty := h.dirty[:0]
	for i := uint64(0); i < n; i++ {
		e := uint64(entries[i*8]) | uint64(entries[i*8+1])<<8 | uint64(entries[i*8+2])<<16 | uint64(entries[i*8+3])<<24 |
			uint64(entries[i*8+4])<<32 | uint64(entries[i*8+5])<<40 | uint64(entries[i*8+6])<<48 | uint64(entries[i*8+7])<<56
		if e&swapped != 0 || (e&present != 0 && e&filePage == 0) {
			dirty = append(dirty, uint32(i))
		}
	}
	h.dirty = dirty
	return dirty, nil
}

// WithMemory returns a context that makes wazero back the linear memory of
// modules instantiated with it by a private mapping (see MemoryOptions).
// The whole limit is reserved as address space up front (MAP_NORESERVE);
// pages are committed only when the guest touches them, and the buffer
// never moves or gets copied when the guest grows its memory.
func WithMemory(ctx context.Context, o MemoryOptions) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(
		func(capacity, max uint64) experimental.LinearMemory {
			m := &mmapMemory{opts: o, limit: min(o.Limit, max)}
			if o.Handle != nil {
				o.Handle.m = m
			}
			return m
		}))
}

type mmapMemory struct {
	opts  MemoryOptions
	limit uint64
	buf   []byte // the whole mapping; the guest sees buf[:size]
}

// Reallocate implements experimental.LinearMemory.
func (m *mmapMemory) Reallocate(size uint64) []byte {
	if size > m.limit {
		return nil
	}
	if m.buf == nil {
		if err := m.mapMemory(); err != nil {
			return nil
		}
	}
	return m.buf[:size]
}

func (m *mmapMemory) mapMemory() error {
	reserve := max(m.limit, pageSize)
	if im := m.opts.Image; im != nil {
		reserve = max(reserve, (im.size+pageSize-1)/pageSize*pageSize)
	}
	b, err := unix.Mmap(-1, 0, int(reserve), unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return err
	}
	if im := m.opts.Image; im != nil && im.size > 0 {
		n := uintptr((im.size + pageSize - 1) / pageSize * pageSize)
		_, err := unix.MmapPtr(int(im.f.Fd()), 0, unsafe.Pointer(&b[0]), n,
			unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_FIXED)
		if err != nil {
			unix.Munmap(b)
			return err
		}
	}
	m.buf = b
	return nil
}

// Free implements experimental.LinearMemory.
func (m *mmapMemory) Free() {
	if m.buf != nil {
		// Munmap of a mapping we made cannot fail but for a bug of ours;
		// leaking it then is better than taking the host down.
		_ = unix.Munmap(m.buf)
		m.buf = nil
	}
}
