package wasm

import (
	"bytes"
	"slices"
	"testing"
)

// TestHotPages: a checkpoint's loop over a tracked memory (list the
// written pages, compare each with its copy, note it in a HotPages,
// protect what it chooses) leaves the pages every take writes
// unprotected, the ones it changes and the ones it writes and restores
// (a reference count taken and dropped) alike, so they cost no write
// fault but now and then; protects a page written once within a few
// takes; and protects the hot pages too once no take writes them any
// more. Before, every page was protected every 32 takes: each hot page
// took a fault every 32 takes.
func TestHotPages(t *testing.T) {
	h, buf := trackedMemory(t)
	const size = 64 * pageSize
	var hp HotPages
	copies := map[uint32][]byte{}
	var last []uint32 // the pages the last take left unprotected
	// take is one checkpoint; it returns the pages listed that the last
	// take did not leave unprotected: writing each took a fault.
	take := func() (written, fresh []uint32) {
		t.Helper()
		w, err := h.WrittenPages(size)
		if err != nil {
			t.Fatal(err)
		}
		written = slices.Clone(w)
		for _, p := range written {
			page := buf[p*pageSize : (p+1)*pageSize]
			old, ok := copies[p]
			changed := !ok || !bytes.Equal(old, page)
			if changed {
				copies[p] = slices.Clone(page)
			}
			hp.Listed(p, changed)
			if !slices.Contains(last, p) {
				fresh = append(fresh, p)
			}
		}
		now := hp.take
		if err := hp.Protect(h, written); err != nil {
			t.Fatal(err)
		}
		last = last[:0]
		for _, p := range written {
			if hp.st[p].protAt != now {
				last = append(last, p)
			}
		}
		return written, fresh
	}
	hot := []uint32{10, 11, 12, 13, 14, 20, 21, 22}
	changing := []uint32{30, 31}
	cell := func(n int) {
		for _, p := range hot {
			buf[p*pageSize+7]++
			buf[p*pageSize+7]--
		}
		for _, p := range changing {
			buf[p*pageSize+9]++
		}
		if n == 0 {
			buf[40*pageSize] = 'c' // written once
		}
	}
	faults := map[uint32]int{}
	for n := range 1200 {
		cell(n)
		written, fresh := take()
		if n == 10 && slices.Contains(written, 40) {
			t.Fatalf("take %d: the page written once at take 0 is still unprotected", n)
		}
		for _, p := range changing {
			if !slices.Contains(written, p) {
				t.Fatalf("take %d: page %d, written every take, not listed", n, p)
			}
		}
		if n >= 200 {
			for _, p := range fresh {
				faults[p]++
			}
		}
	}
	// Over 1,000 takes, a hot page is protected again (and faults) only
	// as its wait doubles (at about 260, 520 and 1,030 takes): at most
	// 3 times, against 31 when every page was protected every 32 takes.
	for _, p := range hot {
		if faults[p] > 3 {
			t.Errorf("hot page %d faulted %d times over 1,000 takes, want at most 3", p, faults[p])
		}
	}
	for _, p := range changing {
		if faults[p] > 0 {
			t.Errorf("page %d, changed every take, faulted %d times over 1,000 takes: it was protected", p, faults[p])
		}
	}
	// No take writes the hot pages any more: they get protected, at the
	// latest idleBase<<maxLevel takes later.
	for n := range idleBase<<maxLevel + 1 {
		for _, p := range changing {
			buf[p*pageSize+9]++
		}
		written, _ := take()
		if n == idleBase<<maxLevel {
			for _, p := range hot {
				if slices.Contains(written, p) {
					t.Fatalf("hot page %d is unprotected still %d takes after the last write", p, n)
				}
			}
			if !slices.Equal(written, changing) {
				t.Fatalf("unprotected at the end: %v, want the changing pages %v", written, changing)
			}
		}
	}
}
