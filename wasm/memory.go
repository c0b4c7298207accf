package wasm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

	tracking   bool         // writes are tracked (TrackWrites)
	registered bool         // the mapping is registered with uffd
	owned      []uint64     // bitmap of the pages the guest owns, while tracking
	regions    []pageRegion // PAGEMAP_SCAN's output, reused
	wdirty     []uint32     // WrittenPages' result, reused
	listed     listedPages  // the unprotected pages as of the last scan
	pdirty     []uint32     // ProtectRange's scan result, reused
	scans      int          // WrittenPages' walks of the page tables, for tests
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
	if _, err := openPagemap(); err != nil {
		return nil, fmt.Errorf("wasm: dirty pages: %w", err)
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
	buf   []byte // the reservation; the guest sees buf[:size]
	whole []byte // buf with an inaccessible guard page on each side
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
	reserve = (reserve + pageSize - 1) / pageSize * pageSize
	// The guard pages fault a host overrun instead of letting it reach a
	// neighbour, and keep the kernel from merging the mapping with an
	// adjacent one (so /proc/self/smaps accounts for it alone).
	whole, err := unix.Mmap(-1, 0, int(reserve+2*pageSize), unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return err
	}
	if err := unix.Mprotect(whole[:pageSize], unix.PROT_NONE); err != nil {
		unix.Munmap(whole)
		return err
	}
	if err := unix.Mprotect(whole[pageSize+reserve:], unix.PROT_NONE); err != nil {
		unix.Munmap(whole)
		return err
	}
	b := whole[pageSize : pageSize+reserve : pageSize+reserve]
	if im := m.opts.Image; im != nil && im.size > 0 {
		n := uintptr((im.size + pageSize - 1) / pageSize * pageSize)
		_, err := unix.MmapPtr(int(im.f.Fd()), 0, unsafe.Pointer(&b[0]), n,
			unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_FIXED)
		if err != nil {
			unix.Munmap(whole)
			return err
		}
	}
	m.buf, m.whole = b, whole
	return nil
}

// Free implements experimental.LinearMemory. wazero calls it when the
// module closes, and a module also closes itself from inside a call: WASI
// proc_exit (os._exit in CPython) closes it while the host still holds
// slices of the memory and is about to return through its own code. So a
// memory with a Handle stays mapped until the Handle's Release, which the
// owner calls once it has stopped using the module; only a memory nobody
// holds a handle to is unmapped here.
func (m *mmapMemory) Free() {
	if m.opts.Handle != nil {
		return
	}
	m.unmap()
}

func (m *mmapMemory) unmap() {
	if m.whole != nil {
		// Munmap of a mapping we made cannot fail but for a bug of ours;
		// leaking it then is better than taking the host down.
		_ = unix.Munmap(m.whole)
	}
	m.buf, m.whole = nil, nil // a memory of another engine is not ours to unmap
}

// Release unmaps the memory. Call it after the module is closed, when no
// host code uses the module's memory any more; the memory must not be used
// after it. Release is idempotent.
func (h *MemoryHandle) Release() {
	if h != nil && h.m != nil {
		h.m.unmap()
	}
}

// ResidentPages is how many 4 KiB pages among the first size bytes the
// instance holds privately: the pages DirtyPages reports. Pages it shares
// with its image (read but not written) are not counted.
func (h *MemoryHandle) ResidentPages(size uint32) (int, error) {
	d, err := h.DirtyPages(size)
	return len(d), err
}

// AnonymousBytes is the memory's private resident bytes as the kernel
// counts them (the Anonymous lines of /proc/self/smaps over the mapping),
// for tests and diagnostics: it reads the whole smaps file.
func (h *MemoryHandle) AnonymousBytes() (int64, error) {
	if h == nil || h.m == nil || h.m.buf == nil {
		return 0, fmt.Errorf("wasm: anonymous bytes: no memory")
	}
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("wasm: anonymous bytes: %w", err)
	}
	lo := uint64(uintptr(unsafe.Pointer(&h.m.buf[0])))
	hi := lo + uint64(len(h.m.buf))
	var total int64
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		var start, end uint64
		if n, _ := fmt.Sscanf(line, "%x-%x", &start, &end); n == 2 && strings.Contains(line, " ") {
			in = start >= lo && end <= hi
			continue
		}
		var kb int64
		if in && strings.HasPrefix(line, "Anonymous:") {
			if _, err := fmt.Sscanf(line, "Anonymous: %d kB", &kb); err == nil {
				total += kb << 10
			}
		}
	}
	return total, nil
}

// Discard gives the pages wholly inside [off, off+n) back to the OS: they
// read afterwards as the image maps them (or zero past it), as if never
// written. The caller promises that the guest does not care what they hold
// (free memory of its allocator). It returns how many bytes it discarded:
// while writes are tracked (TrackWrites), only the guest's own pages in
// the range are given back (the others already read as the image or
// zero), so discarding a large range the guest left alone costs nothing.
func (h *MemoryHandle) Discard(off, n uint64) (uint64, error) {
	return h.DiscardPages(off, n, nil)
}

// DiscardPages is Discard that calls gone, when not nil, with each run of
// pages [first, end) (4 KiB page indexes) it gave back, once it has: the
// pages whose content a copy of the memory no longer holds.
func (h *MemoryHandle) DiscardPages(off, n uint64, gone func(first, end uint32)) (uint64, error) {
	if h == nil || h.m == nil || h.m.buf == nil {
		return 0, fmt.Errorf("wasm: discard: no memory")
	}
	start := (off + pageSize - 1) / pageSize * pageSize
	end := (off + n) / pageSize * pageSize
	if off+n < off || end > uint64(len(h.m.buf)) {
		return 0, fmt.Errorf("wasm: discard: [%#x, %#x) is outside the memory's %d bytes", off, off+n, len(h.m.buf))
	}
	if end <= start {
		return 0, nil
	}
	if h.Tracking() {
		// Only the guest's own pages hold anything to give back: the
		// others already read as the image or zero.
		var freed uint64
		err := h.ownedRuns(start/pageSize, end/pageSize, func(first, end uint64) error {
			if err := unix.Madvise(h.m.buf[first*pageSize:end*pageSize], unix.MADV_DONTNEED); err != nil {
				return fmt.Errorf("wasm: discard: madvise: %w", err)
			}
			freed += (end - first) * pageSize
			if gone != nil {
				gone(uint32(first), uint32(end))
			}
			return nil
		})
		if err != nil {
			h.tracking = false // the owned pages are no longer known
		}
		return freed, err
	}
	if err := unix.Madvise(h.m.buf[start:end], unix.MADV_DONTNEED); err != nil {
		return 0, fmt.Errorf("wasm: discard: madvise: %w", err)
	}
	if gone != nil {
		gone(uint32(start/pageSize), uint32(end/pageSize))
	}
	return end - start, nil
}

// DiscardClean gives back the written pages among the first size bytes
// whose content is what they would read as if discarded (zero past the
// image, the image's own content within it): a guest that wrote zeros or
// restored a page keeps its memory as it is, for no host memory. It
// returns how many bytes it discarded.
func (h *MemoryHandle) DiscardClean(size uint32) (uint64, error) {
	dirty, err := h.DirtyPages(size)
	if err != nil {
		return 0, err
	}
	m := h.m
	im := m.opts.Image
	var zero, orig [pageSize]byte
	var freed uint64
	runStart, runEnd := uint64(0), uint64(0) // a run of clean pages to discard
	flush := func() error {
		if runEnd > runStart {
			if h.Tracking() {
				_ = h.ownedRuns(runStart, runEnd, func(uint64, uint64) error { return nil })
			}
			if err := unix.Madvise(m.buf[runStart*pageSize:runEnd*pageSize], unix.MADV_DONTNEED); err != nil {
				h.tracking = false
				return fmt.Errorf("wasm: discard: madvise: %w", err)
			}
			freed += (runEnd - runStart) * pageSize
		}
		runStart, runEnd = 0, 0
		return nil
	}
	for _, p := range dirty {
		pg := uint64(p)
		if (pg+1)*pageSize > uint64(size) {
			break // a partial page at the end is kept
		}
		b := m.buf[pg*pageSize : (pg+1)*pageSize]
		want := zero[:]
		if im != nil && pg*pageSize < im.size {
			if (pg+1)*pageSize > im.size {
				continue // the image's partial last page: keep it
			}
			if _, err := im.f.ReadAt(orig[:], int64(pg*pageSize)); err != nil {
				continue // the image is closed: keep what cannot be compared
			}
			want = orig[:]
		}
		if !bytes.Equal(b, want) {
			continue
		}
		if runEnd != pg {
			if err := flush(); err != nil {
				return freed, err
			}
			runStart = pg
		}
		runEnd = pg + 1
	}
	return freed, flush()
}

// HostPages is host memory outside Go's heap for copies of guest pages
// (checkpoints): released, it goes back to the OS at once instead of when
// the garbage collector and the scavenger get to it, and its size is exact.
// The zero value is an empty buffer.
type HostPages struct {
	buf []byte
}

// Resize returns the buffer made n bytes long; its content is undefined.
// It maps a new buffer when the old one is too small or more than twice
// too large (so a buffer that once held a large copy does not stay large).
func (p *HostPages) Resize(n int) ([]byte, error) {
	if n <= 0 {
		p.Release()
		return nil, nil
	}
	if c := len(p.buf); c >= n && c <= 2*n+(1<<20) {
		return p.buf[:n], nil
	}
	p.Release()
	size := (n + pageSize - 1) / pageSize * pageSize
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("wasm: host pages: mmap %d bytes: %w", size, err)
	}
	p.buf = b
	return b[:n], nil
}

// Grow makes the buffer at least n bytes long, keeping its content (the
// kernel moves its pages, copying none), and returns all of it. It grows
// by a quarter more than asked, so that growing a page at a time does not
// remap every time.
func (p *HostPages) Grow(n int) ([]byte, error) {
	if n <= len(p.buf) {
		return p.buf, nil
	}
	size := (n + n/4 + pageSize - 1) / pageSize * pageSize
	if p.buf == nil {
		if _, err := p.Resize(size); err != nil {
			return nil, err
		}
		return p.buf, nil
	}
	b, err := unix.Mremap(p.buf, size, unix.MREMAP_MAYMOVE)
	if err != nil {
		return nil, fmt.Errorf("wasm: host pages: mremap to %d bytes: %w", size, err)
	}
	p.buf = b
	return b, nil
}

// Cap is the bytes of host memory the buffer holds (mapped; the pages it
// was never written are not resident, but a Resize writes them all).
func (p *HostPages) Cap() int { return len(p.buf) }

// Release unmaps the buffer; slices of it must not be used after.
func (p *HostPages) Release() {
	if p.buf != nil {
		_ = unix.Munmap(p.buf)
		p.buf = nil
	}
}
