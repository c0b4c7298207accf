package wasm

// HotPages decides which of the pages a checkpoint finds written stay
// unprotected, page by page, for a checkpoint that follows a memory's
// writes (TrackWrites) and compares each page WrittenPages lists with its
// copy.
//
// A write fault on a protected page costs about 3 µs on a virtual machine
// (BenchmarkWrittenPages), comparing a page with its copy about 0.2 µs. A
// trivial cell writes about 70 pages, mostly the same ones every time,
// and most of them end the cell as they began it (a reference count taken
// and dropped): those are best left unprotected for good. A page no cell
// writes any more is best protected, so that it is not compared for ever.
// The two look the same to the checkpoint (listed, unchanged), so a page
// found unchanged idleBase takes in a row is protected; one that is
// written again within hotAge takes of that is hot, and waits twice as
// long next time (up to idleBase<<maxLevel takes); one written again only
// later waits half as long. So a hot page costs a fault now and then, and
// a page that went cold is compared a few more times, then left alone.
//
// Before, every page was protected again every 32 takes: each time the
// next trivial cell took some 70 faults (~230 µs), 7 µs a cell on average.
type HotPages struct {
	st   []pageHeat
	take uint16 // counts Protect calls, never 0
	n    int    // pages Listed chose to protect this take
}

type pageHeat struct {
	idle   uint16 // takes in a row that listed the page and found it unchanged
	protAt uint16 // the take that protected it for being idle; 0 when none did, or it was listed since
	level  uint8  // it is protected after idleBase<<level idle takes
}

const (
	idleBase = 4
	maxLevel = 8 // idleBase<<8: 1,024 takes
	// hotAge: a page written again within this many takes of being
	// protected costs more in faults than comparing it would have.
	hotAge = 16
)

// Listed notes that the checkpoint found page p listed written (and the
// guest's own), with its content changed or not since the last take.
func (hp *HotPages) Listed(p uint32, changed bool) {
	if hp.take == 0 {
		hp.take = 1
	}
	if int(p) >= len(hp.st) {
		hp.st = append(hp.st, make([]pageHeat, int(p)+1-len(hp.st))...)
	}
	s := &hp.st[p]
	if s.protAt != 0 {
		// Written again since it was protected for being idle.
		if hp.take-s.protAt <= hotAge {
			s.level = min(s.level+1, maxLevel)
		} else if s.level > 0 {
			s.level--
		}
		s.protAt, s.idle = 0, 0
	}
	if changed {
		s.idle = 0
		return
	}
	s.idle++
	if s.idle >= idleBase<<s.level {
		s.idle, s.protAt = 0, hp.take
		hp.n++
	}
}

// Protect write-protects the pages Listed chose this take, among written
// (the pages WrittenPages listed, ascending): one ProtectRange for each
// run of them that no page left unprotected interrupts. Call it once a
// take, after Listed for each page.
func (hp *HotPages) Protect(h *MemoryHandle, written []uint32) error {
	if hp.take == 0 {
		hp.take = 1
	}
	take := hp.take
	hp.take++
	if hp.take == 0 {
		hp.take = 1
	}
	if hp.n == 0 {
		return nil
	}
	hp.n = 0
	var first, end uint32
	run := false
	for _, p := range written {
		if int(p) < len(hp.st) && hp.st[p].protAt == take {
			if !run {
				first, run = p, true
			}
			end = p + 1
			continue
		}
		if run {
			if err := h.ProtectRange(first, end); err != nil {
				return err
			}
			run = false
		}
	}
	if run {
		return h.ProtectRange(first, end)
	}
	return nil
}
