package wasm

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// trackedMemory is a 64-page memory over a 4-page image, its writes
// tracked.
func trackedMemory(t *testing.T) (*MemoryHandle, []byte) {
	t.Helper()
	img := make([]byte, 4*pageSize)
	for i := range img {
		img[i] = 'i'
	}
	im, err := NewImage(img)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { im.Close() })
	const size = 64 * pageSize
	m := &mmapMemory{opts: MemoryOptions{Limit: size, Image: im}, limit: size}
	buf := m.Reallocate(size)
	if buf == nil {
		t.Fatal("cannot map the memory")
	}
	h := &MemoryHandle{m: m}
	m.opts.Handle = h
	t.Cleanup(h.Release)
	if err := h.TrackWrites(size); err != nil {
		if os.Getenv("WASMEVAL_NO_WRITE_TRACKING") == "1" {
			t.Skip("write tracking is off (WASMEVAL_NO_WRITE_TRACKING=1)")
		}
		t.Fatalf("TrackWrites: %v (set WASMEVAL_NO_WRITE_TRACKING=1 on a kernel older than 6.7)", err)
	}
	return h, buf
}

// TestWrittenPagesWithoutFaults: WrittenPages walks the page tables again
// only when the process took a page fault since its last walk (none, no
// page can have lost its protection), and lists the same pages either
// way: after writes to pages left unprotected (no fault, no walk), after
// a write to a protected page by the host's code and by the kernel (a
// fault each: walked), after a Discard and a ProtectRange (no walk: both
// are the handle's own doing).
func TestWrittenPagesWithoutFaults(t *testing.T) {
	h, buf := trackedMemory(t)
	const size = 64 * pageSize
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, []byte("from the kernel"), 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(file, unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	// step does something to the memory, then lists the written pages:
	// they must be want, and the page tables must have been walked or not
	// as walk says (unless the test's own Go code took a page fault
	// meanwhile, which it may now and then: then the walk proves nothing).
	step := func(what string, do func(), walk bool, want ...uint32) {
		t.Helper()
		before, scans := h.listed.faults, h.scans
		do()
		got, err := h.WrittenPages(size)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !slices.Equal(got, want) && (len(got) != 0 || len(want) != 0) {
			t.Fatalf("%s: written pages %v, want %v", what, got, want)
		}
		switch walked := h.scans != scans; {
		case walk && !walked:
			t.Fatalf("%s: the page tables were not walked, though a protected page was written", what)
		case !walk && walked && h.listed.faults == before:
			t.Fatalf("%s: the page tables were walked, though no page fault was taken", what)
		case !walk && walked:
			t.Logf("%s: a page fault meanwhile, the walk cannot be checked", what)
		}
		// Listed again with no page fault in between, the same pages
		// come without a walk.
		for try := 0; ; try++ {
			before, scans := h.listed.faults, h.scans
			again, err := h.WrittenPages(size)
			if err != nil {
				t.Fatalf("%s, again: %v", what, err)
			}
			if !slices.Equal(again, want) && (len(again) != 0 || len(want) != 0) {
				t.Fatalf("%s, again: written pages %v, want %v", what, again, want)
			}
			if h.scans == scans {
				break
			}
			if h.listed.faults == before {
				t.Fatalf("%s, again: the page tables were walked, though no page fault was taken", what)
			}
			if try == 100 {
				t.Fatalf("%s, again: a page fault every time", what)
			}
		}
	}
	nothing := func() {}
	step("right after TrackWrites", nothing, true)
	buf[1*pageSize] = 'w'
	buf[9*pageSize] = 'w'
	step("after host writes", nothing, true, 1, 9)
	step("nothing since", nothing, false, 1, 9)
	step("unprotected pages written again", func() { buf[1*pageSize+8]++; buf[9*pageSize+8]++ }, false, 1, 9)
	step("a protected page written", func() { buf[12*pageSize] = 'w' }, true, 1, 9, 12)
	step("a read(2) into a protected page", func() {
		if n, err := unix.Pread(fd, buf[20*pageSize:20*pageSize+4], 0); n != 4 || err != nil {
			t.Fatalf("pread into guest memory: %d %v", n, err)
		}
	}, true, 1, 9, 12, 20)
	step("after Discard of an unprotected page", func() {
		if n, err := h.Discard(9*pageSize, pageSize); n != pageSize || err != nil {
			t.Fatalf("Discard: %d %v", n, err)
		}
	}, false, 1, 12, 20)
	step("after ProtectRange", func() {
		if err := h.ProtectRange(10, 13); err != nil {
			t.Fatal(err)
		}
	}, false, 1, 20)
	step("the protected page written again", func() { buf[12*pageSize+1] = 'x' }, true, 1, 12, 20)
	step("after ProtectAll", func() {
		if err := h.ProtectAll(size); err != nil {
			t.Fatal(err)
		}
	}, false)
	step("a discarded page written again", func() { buf[9*pageSize] = 'x' }, true, 9)
}

// TestOwnFaults: the page faults a function run by OwnFaults takes on its
// own thread (first touches of host memory, as a checkpoint's copies
// take) do not make the next WrittenPages walk the page tables, which
// lists the same pages; a guest page another thread writes meanwhile
// makes it walk, and is listed.
func TestOwnFaults(t *testing.T) {
	h, buf := trackedMemory(t)
	const size = 64 * pageSize
	// touch maps n fresh pages of host memory and writes each: n faults.
	touch := func(n int) {
		m, err := unix.Mmap(-1, 0, n*pageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			m[i*pageSize] = 1
		}
		unix.Munmap(m)
	}
	list := func(what string, want ...uint32) {
		t.Helper()
		got, err := h.WrittenPages(size)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: written pages %v, want %v", what, got, want)
		}
	}
	buf[3*pageSize] = 'w'
	list("after a write", 3)
	// Another thread of the process (the Go runtime's) may fault now and
	// then, and then the walk is right: try again.
	for try := 0; ; try++ {
		scans := h.scans
		var own int64
		err := h.OwnFaults(func() error {
			t0, _ := threadFaults()
			touch(8)
			t1, _ := threadFaults()
			own = t1 - t0
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if own == 0 { // fewer than 8 where the kernel maps larger folios
			t.Fatal("writing 8 fresh pages of host memory took no page fault")
		}
		list("after OwnFaults", 3)
		if h.scans == scans {
			break
		}
		if try == 100 {
			t.Fatal("the page tables were walked after every OwnFaults of 100, though only its own thread faulted")
		}
	}
	// A protected page written by another thread while f runs (its
	// fault, among f's own, not f's): listed, by a walk.
	others := []uint32{20, 30, 40}
	for i, p := range others {
		err := h.OwnFaults(func() error {
			touch(i + 1)
			done := make(chan struct{})
			go func() { // on another thread: OwnFaults holds this one
				buf[p*pageSize] = 'o'
				close(done)
			}()
			<-done
			touch(4)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		list(fmt.Sprintf("after another thread wrote page %d", p), append([]uint32{3}, others[:i+1]...)...)
	}
}
