package wasm

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Write tracking: which pages of a guest memory were written since the
// last look, so that a checkpoint copies only those instead of every page
// the guest ever wrote.
//
// The kernel keeps the record (Linux 6.7 and later): the memory is
// registered with a userfaultfd in asynchronous write-protect mode
// (UFFD_FEATURE_WP_ASYNC), under which the first write to a protected page
// takes a fault that the kernel resolves by itself, clearing the page's
// protection, with no thread of ours involved; the PAGEMAP_SCAN ioctl of
// /proc/self/pagemap then lists the pages whose protection is gone
// (WrittenPages), or protects them again (ProtectAll), in one call over
// the memory's page tables. Every write counts, whoever makes it: the
// guest's code, the host's Go code, the kernel copying a read(2) into
// guest memory. Soft-dirty bits (/proc/self/clear_refs) would do the same,
// but clearing them walks every mapping of the process and resets every
// memory's bits at once, and kernels do not always have them
// (CONFIG_MEM_SOFT_DIRTY is off on the test machine's).
//
// A write fault costs 1 to 6 µs on a virtual machine (BenchmarkWrittenPages:
// its page table updates are slow), so the caller decides when to protect
// pages again: the checkpoint leaves the pages cells keep writing
// unprotected for a while and compares them with their copies instead.
//
// Where the kernel cannot (an older kernel, userfaultfd forbidden by
// seccomp or by vm.unprivileged_userfaultfd without UFFD_USER_MODE_ONLY),
// TrackWrites fails and the caller copies every written page, as before.
// WASMEVAL_NO_WRITE_TRACKING=1 in the environment turns tracking off the
// same way, to compare the two and to test the fallback on any machine.

// Constants of linux/userfaultfd.h and linux/fs.h (PAGEMAP_SCAN).
const (
	uffdUserModeOnly   = 1
	uffdAPI            = 0xaa
	uffdFeatureWPAsync = 1 << 15
	uffdioAPI          = 0xc018aa3f // _IOWR(0xaa, 0x3f, struct uffdio_api)
	uffdioRegister     = 0xc020aa00 // _IOWR(0xaa, 0x00, struct uffdio_register)
	uffdRegisterModeWP = 1 << 1

	pagemapScan        = 0xc0606610 // _IOWR('f', 16, struct pm_scan_arg)
	pmScanWPMatching   = 1 << 0
	pmScanCheckWPAsync = 1 << 1
	pageIsWritten      = 1 << 1
	pageIsFile         = 1 << 2
	pageIsPresent      = 1 << 3
	pageIsSwapped      = 1 << 4
	pageIsPFNZero      = 1 << 5
)

type uffdioAPIArg struct{ api, features, ioctls uint64 }

type uffdioRegisterArg struct{ start, len, mode, ioctls uint64 }

type pageRegion struct{ start, end, categories uint64 }

type pmScanArg struct {
	size, flags, start, end, walkEnd, vec, vecLen, maxPages uint64
	categoryInverted, categoryMask, categoryAnyofMask       uint64
	returnMask                                              uint64
}

// uffd is the process's userfaultfd for write tracking: one for every
// memory (a registration is a property of the mapping, and goes with it
// when the memory is unmapped). Nothing ever reads from it: in
// asynchronous mode no fault reaches it.
var uffd struct {
	once sync.Once
	fd   int
	err  error
}

func openUffd() (int, error) {
	if os.Getenv("WASMEVAL_NO_WRITE_TRACKING") == "1" {
		return -1, errors.New("write tracking is off (WASMEVAL_NO_WRITE_TRACKING=1)")
	}
	var errs []error
	// UFFD_USER_MODE_ONLY first: it needs no privilege whatever
	// vm.unprivileged_userfaultfd says, and asynchronous write-protect
	// faults never reach the handler, whichever mode they come from.
	for _, flags := range []uintptr{unix.O_CLOEXEC | unix.O_NONBLOCK | uffdUserModeOnly, unix.O_CLOEXEC | unix.O_NONBLOCK} {
		fd, _, errno := unix.Syscall(unix.SYS_USERFAULTFD, flags, 0, 0)
		if errno != 0 {
			errs = append(errs, fmt.Errorf("userfaultfd: %w", errno))
			continue
		}
		api := uffdioAPIArg{api: uffdAPI, features: uffdFeatureWPAsync}
		if err := ioctlPtr(int(fd), uffdioAPI, unsafe.Pointer(&api)); err != nil {
			unix.Close(int(fd))
			errs = append(errs, fmt.Errorf("UFFDIO_API with UFFD_FEATURE_WP_ASYNC: %w", err))
			continue
		}
		return int(fd), nil
	}
	return -1, errors.Join(errs...)
}

func ioctlPtr(fd int, req uintptr, arg unsafe.Pointer) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
	if errno != 0 {
		return errno
	}
	return nil
}

func openPagemap() (*os.File, error) {
	pagemap.once.Do(func() { pagemap.f, pagemap.err = os.Open("/proc/self/pagemap") })
	return pagemap.f, pagemap.err
}

// ErrNoWriteTracking is returned by WrittenPages for a memory whose writes
// are not tracked (TrackWrites was not called or failed).
var ErrNoWriteTracking = errors.New("wasm: written pages: the memory's writes are not tracked")

// TrackWrites starts tracking which pages of the memory get written, size
// being the memory's size now: from its return WrittenPages lists them
// (every page is protected),
// and the handle knows which pages the guest owns (Owned), so Discard
// gives back only those. It fails when the kernel cannot track writes
// (see the comment at the top of writes.go); the memory works as before
// then. Tracking lasts as long as the mapping; calling it again while it
// does is harmless.
func (h *MemoryHandle) TrackWrites(size uint32) error {
	if h == nil || h.m == nil || h.m.buf == nil {
		return fmt.Errorf("wasm: track writes: no memory")
	}
	if h.Tracking() {
		return nil
	}
	h.listed.valid = false
	uffd.once.Do(func() { uffd.fd, uffd.err = openUffd() })
	if uffd.err != nil {
		return fmt.Errorf("wasm: track writes: %w", uffd.err)
	}
	if _, err := openPagemap(); err != nil {
		return fmt.Errorf("wasm: track writes: %w", err)
	}
	if !h.registered {
		n := uint64(len(h.m.buf)) / pageSize * pageSize
		reg := uffdioRegisterArg{start: uint64(uintptr(unsafe.Pointer(&h.m.buf[0]))), len: n, mode: uffdRegisterModeWP}
		if err := ioctlPtr(uffd.fd, uffdioRegister, unsafe.Pointer(&reg)); err != nil {
			return fmt.Errorf("wasm: track writes: UFFDIO_REGISTER of %d bytes: %w", n, err)
		}
		h.registered = true
	}
	// Protect the pages written so far, so that the first WrittenPages
	// lists only what comes after; then note every page the guest owns
	// (written since the memory was mapped, and not given back).
	if _, err := h.scan(uint64(size), scanProtect); err != nil {
		return fmt.Errorf("wasm: track writes: %w", err)
	}
	owned, err := h.scan(uint64(size), scanOwned)
	if err != nil {
		return fmt.Errorf("wasm: track writes: %w", err)
	}
	clear(h.owned)
	for _, p := range owned {
		h.own(p)
	}
	h.tracking = true
	return nil
}

// Tracking reports whether the memory's writes are tracked (TrackWrites).
func (h *MemoryHandle) Tracking() bool { return h != nil && h.tracking && h.m != nil && h.m.buf != nil }

// WrittenPages returns the indexes of the 4 KiB pages among the first size
// bytes that may have been written since they were last protected
// (ProtectAll, TrackWrites): those written since, which it lists every
// time until they are protected again. A page given
// back since (Discard) and not written again is not listed. The result is
// valid until the next call. After an error the memory is no longer
// tracked (WrittenPages fails until TrackWrites succeeds again), so a
// caller never misses a write: it copies everything once more instead.
//
// Leaving pages that are written again and again unprotected saves the
// faults of their next writes (a few microseconds each in a virtual
// machine, more than comparing the page with a copy costs).
func (h *MemoryHandle) WrittenPages(size uint32) ([]uint32, error) {
	if !h.Tracking() {
		return nil, ErrNoWriteTracking
	}
	faults, counted := processFaults()
	if l := &h.listed; counted && l.valid && l.faults == faults && l.size == size {
		// No page fault anywhere in the process since the last scan, so
		// no page lost its protection since: the pages listed then are
		// the unprotected ones still, but for those given back since.
		d := h.wdirty[:0]
		for _, p := range l.pages {
			if h.Owned(p) {
				d = append(d, p)
			}
		}
		h.wdirty = d
		l.pages = append(l.pages[:0], d...)
		return d, nil
	}
	h.listed.valid = false
	h.scans++
	d, err := h.scan(uint64(size), scanUnprotected)
	if err != nil {
		h.tracking = false
		return nil, err
	}
	for _, p := range d {
		h.own(p)
	}
	if counted {
		h.listed = listedPages{valid: true, faults: faults, size: size, pages: append(h.listed.pages[:0], d...)}
	}
	return d, nil
}

// listedPages is what the last scan of WrittenPages (or ProtectAll) found
// unprotected, and the process's page fault count read before it.
type listedPages struct {
	valid  bool
	faults int64
	size   uint32
	pages  []uint32
}

// processFaults is how many page faults the process has taken (minor and
// major, every thread's, those of exited threads too). A page loses its
// write protection only through a fault, whoever writes it: the guest's
// code, the host's, the kernel copying into it for a system call (every
// successful fault is counted, get_user_pages' too: mm_account_fault). So
// when the count has not moved since a scan, nothing was unprotected
// since, and the scan need not be done again (it walks the page tables of
// the whole memory: 10 to 15 µs for a 20 MiB one).
func processFaults() (int64, bool) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return ru.Minflt + ru.Majflt, true
}

// OwnFaults runs f, which must not write the guest's memory (it may read
// the pages WrittenPages last listed), so that the page faults f takes on
// its own thread do not make the next WrittenPages walk the page tables:
// a checkpoint copying pages into host memory it touches for the first
// time takes such faults (while a session's heap grows, one every ~15
// cells), and each made the next checkpoint walk the page tables for
// nothing the guest wrote. f's faults are told from the others only when
// no other thread of the process faulted while f ran: the process's count
// is read before and after the thread's, so that the thread's can only
// cover the process's whole difference when no other thread added to it.
// Otherwise the next WrittenPages walks, as before.
func (h *MemoryHandle) OwnFaults(f func() error) error {
	if !h.Tracking() || !h.listed.valid {
		return f()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p0, ok0 := processFaults()
	t0, ok1 := threadFaults()
	err := f()
	t1, ok2 := threadFaults()
	p1, ok3 := processFaults()
	if l := &h.listed; ok0 && ok1 && ok2 && ok3 && l.valid && p1-p0 == t1-t0 {
		// Every fault since p0 was f's; those since the last count
		// (which f's own ProtectAll may have taken after p0) are
		// forgotten.
		l.faults += p1 - max(p0, l.faults)
	}
	return err
}

// threadFaults is how many page faults the calling thread has taken.
func threadFaults() (int64, bool) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0, false
	}
	return ru.Minflt + ru.Majflt, true
}

// Owned reports whether page p (a 4 KiB page index) is the guest's own:
// written since the memory was mapped and not given back, as of the last
// WrittenPages. It is false when writes are not tracked.
func (h *MemoryHandle) Owned(p uint32) bool {
	if !h.Tracking() || int(p/64) >= len(h.owned) {
		return false
	}
	return h.owned[p/64]&(1<<(p%64)) != 0
}

// ProtectAll write-protects every page among the first size bytes, so
// that WrittenPages lists them again only once written.
func (h *MemoryHandle) ProtectAll(size uint32) error {
	if !h.Tracking() {
		return ErrNoWriteTracking
	}
	faults, counted := processFaults()
	h.listed.valid = false
	d, err := h.scan(uint64(size), scanProtect)
	if err != nil {
		h.tracking = false
		return err
	}
	for _, p := range d {
		h.own(p) // written since the last WrittenPages
	}
	if counted {
		h.listed = listedPages{valid: true, faults: faults, size: size, pages: h.listed.pages[:0]}
	}
	return nil
}

// ProtectRange write-protects the pages [first, end) (4 KiB page
// indexes), as ProtectAll does every page: a caller that leaves the pages
// written again and again unprotected protects the others this way, a
// few at a time, once they are no longer written. It does not change
// what WrittenPages last returned.
func (h *MemoryHandle) ProtectRange(first, end uint32) error {
	if !h.Tracking() {
		return ErrNoWriteTracking
	}
	if end <= first {
		return nil
	}
	d, err := h.scanRange(h.pdirty[:0], uint64(first)*pageSize, uint64(end)*pageSize, scanProtect)
	if err != nil {
		h.tracking = false
		return err
	}
	h.pdirty = d
	for _, p := range d {
		h.own(p) // written since the last WrittenPages
	}
	// Those pages are no longer unprotected: the scan is not needed to
	// know it (nothing was unprotected by it).
	if l := &h.listed; l.valid {
		kept := l.pages[:0]
		for _, p := range l.pages {
			if p < first || p >= end {
				kept = append(kept, p)
			}
		}
		l.pages = kept
	}
	return nil
}

func (h *MemoryHandle) own(p uint32) {
	if w := int(p / 64); w >= len(h.owned) {
		h.owned = append(h.owned, make([]uint64, w+1-len(h.owned))...)
	}
	h.owned[p/64] |= 1 << (p % 64)
}

// ownedRuns calls f for each run of owned pages in [first, end), clearing
// their bits.
func (h *MemoryHandle) ownedRuns(first, end uint64, f func(first, end uint64) error) error {
	end = min(end, uint64(len(h.owned))*64)
	for p := first; p < end; {
		w := h.owned[p/64] >> (p % 64)
		if w == 0 {
			p = (p/64 + 1) * 64
			continue
		}
		p += uint64(bits.TrailingZeros64(w))
		if p >= end {
			break
		}
		q := p
		for q < end && h.owned[q/64]&(1<<(q%64)) != 0 {
			h.owned[q/64] &^= 1 << (q % 64)
			q++
		}
		if err := f(p, q); err != nil {
			return err
		}
		p = q
	}
	return nil
}

// Modes of scan.
const (
	scanOwned       = iota // the guest's own pages
	scanUnprotected        // those of them not write-protected
	scanProtect            // those, protected again
)

// scan lists the guest's own pages among the memory's first size bytes:
// present or swapped, neither the image's page nor the zero page, which a
// read maps. The kernel calls a page written whenever its protection is
// not set, and a page read but never written, or given back (Discard), has
// none: those are filtered out.
func (h *MemoryHandle) scan(size uint64, mode int) ([]uint32, error) {
	d, err := h.scanRange(h.wdirty[:0], 0, size, mode)
	if err != nil {
		return nil, err
	}
	h.wdirty = d
	return d, nil
}

// scanRange is scan over the bytes [from, size) of the memory (from a
// multiple of the page size), appending the pages to dst.
func (h *MemoryHandle) scanRange(dst []uint32, from, size uint64, mode int) ([]uint32, error) {
	base := uint64(uintptr(unsafe.Pointer(&h.m.buf[0])))
	size = min((size+pageSize-1)/pageSize*pageSize, uint64(len(h.m.buf))/pageSize*pageSize)
	if len(h.regions) == 0 {
		h.regions = make([]pageRegion, 128)
	}
	// The image's pages are told from the guest's own by their page
	// structure (PAGE_IS_FILE), which costs a cache miss a page: the
	// scans of write tracking do without, protecting the image's pages
	// too, so that one of them is listed only when the guest reads it for
	// the first time since (then copied once, harmlessly, as the image's
	// content), or writes it.
	var flags, mask uint64 = 0, pageIsFile | pageIsPFNZero
	switch mode {
	case scanUnprotected:
		flags, mask = pmScanCheckWPAsync, pageIsWritten|pageIsPFNZero
	case scanProtect:
		flags, mask = pmScanWPMatching|pmScanCheckWPAsync, pageIsWritten|pageIsPFNZero
	}
	dirty := dst
	for start, end := base+from, base+size; start < end; {
		arg := pmScanArg{
			size:  uint64(unsafe.Sizeof(pmScanArg{})),
			flags: flags,
			start: start, end: end,
			vec:               uint64(uintptr(unsafe.Pointer(&h.regions[0]))),
			vecLen:            uint64(len(h.regions)),
			categoryInverted:  mask &^ pageIsWritten,
			categoryMask:      mask,
			categoryAnyofMask: pageIsPresent | pageIsSwapped,
			returnMask:        pageIsPresent | pageIsSwapped,
		}
		n, _, errno := unix.Syscall(unix.SYS_IOCTL, pagemap.f.Fd(), pagemapScan, uintptr(unsafe.Pointer(&arg)))
		runtime.KeepAlive(h.regions)
		if errno != 0 {
			return nil, fmt.Errorf("wasm: written pages: PAGEMAP_SCAN: %w", errno)
		}
		for _, r := range h.regions[:n] {
			for a := max(r.start, base); a < r.end && a < end; a += pageSize {
				dirty = append(dirty, uint32((a-base)/pageSize))
			}
		}
		if arg.walkEnd <= start || arg.walkEnd > end {
			return nil, fmt.Errorf("wasm: written pages: PAGEMAP_SCAN stopped at %#x of [%#x, %#x)", arg.walkEnd, start, end)
		}
		start = arg.walkEnd
	}
	return dirty, nil
}
