package js

import "math/bits"

// marks is the set of memory a walk has counted (walk.go): one bit for
// each 8-byte word of address space, in pages of a bitmap made as the walk
// first touches them. It takes a 64th of the memory it covers (16 KiB a
// MiB), where a Go map of the pointers seen took about as much as the data
// walked: a walk of a session holding 140 MiB of small objects made a map
// of some 130 MiB, and the walks that judge a session over its limit
// doubled the heap (issue 9: a bomb growing an older global peaked near 3x
// the cap). By address, not by type, a struct and its first field are one
// range: whichever is reached first counts its words, the other only the
// words it adds.
type marks struct {
	pages map[uintptr]*markPage
	// recent are pages touched lately, by their number's low bits: a
	// walk goes back and forth between a few (an object's fields, its
	// boxed values and its strings are made together), and a map lookup
	// each time took a seventh of a walk.
	recent [256]struct {
		n uintptr
		p *markPage
	}
}

const (
	markPageShift = 20 // each page covers 1 MiB of address space
	markWords     = 1 << (markPageShift - 3 - 6)
)

type markPage [markWords]uint64

func (m *marks) page(n uintptr, create bool) *markPage {
	r := &m.recent[n%uintptr(len(m.recent))]
	if r.p != nil && r.n == n {
		return r.p
	}
	p := m.pages[n]
	if p == nil {
		if !create {
			return nil
		}
		if m.pages == nil {
			m.pages = make(map[uintptr]*markPage)
		}
		p = new(markPage)
		m.pages[n] = p
	}
	r.n, r.p = n, p
	return p
}

// mark marks the words of [p, p+n) and returns how many of them were not
// marked before. n > 0.
func (m *marks) mark(p, n uintptr) (fresh uintptr) {
	m.each(p, n, func(w *uint64, mask uint64) {
		fresh += uintptr(bits.OnesCount64(mask &^ *w))
		*w |= mask
	}, true)
	return fresh
}

// words returns how many words [p, p+n) covers.
func words(p, n uintptr) uintptr { return (p+n-1)>>3 - p>>3 + 1 }

// clear unmarks the words of [p, p+n).
func (m *marks) clear(p, n uintptr) {
	m.each(p, n, func(w *uint64, mask uint64) { *w &^= mask }, false)
}

// each calls f with each bitmap word that [p, p+n) touches and the mask of
// its bits in it.
func (m *marks) each(p, n uintptr, f func(w *uint64, mask uint64), create bool) {
	first, last := p>>3, (p+n-1)>>3 // word indexes, inclusive
	for i := first; i <= last; {
		pg := m.page(i>>(markPageShift-3), create)
		bit := i & (markWords*64 - 1) // the word's bit in its page
		end := min(last, i|(markWords*64-1))
		if pg == nil {
			i = end + 1
			continue
		}
		for i <= end {
			lo := bit & 63
			cnt := min(64-lo, end-i+1)
			mask := ^uint64(0)
			if cnt < 64 {
				mask = (uint64(1)<<cnt - 1) << lo
			}
			f(&pg[bit>>6], mask)
			i += cnt
			bit += cnt
		}
	}
}
