package python

import (
	"math/bits"
	"sync/atomic"
)

// Which pages changed since the last persist, from the checkpoint's write
// tracking: the checkpoint compares every page a cell wrote with its copy
// (checkpoint.update) and drops the copies of pages given back
// (checkpoint.forget), so it knows each page whose content changed; it
// marks them here, and PersistState compresses those pages without reading
// the page map and hashing every written page to find them (about 0.3 ms
// of a light session's persist). The marks count from one persist, named
// by a token that the StateCache of that persist keeps: a persist with
// another cache (a new one, one seeded by a restore), or after the
// checkpoint was taken whole, dropped or rolled back (since is then 0),
// hashes every page instead.

var persistTokens atomic.Uint64

// mark notes that page p's content changed since the last persist.
func (c *checkpoint) mark(p uint32) {
	if c.since == 0 {
		return
	}
	if w := int(p / 64); w >= len(c.changed) {
		c.changed = append(c.changed, make([]uint64, w+1-len(c.changed))...)
	}
	c.changed[p/64] |= 1 << (p % 64)
}

// changes returns the pages marked since the persist named by the token
// it returns, or a zero token when the marks are not complete.
func (c *checkpoint) changes(in *Instance) (pages []uint32, since uint64) {
	if c.since == 0 || !c.valid || c.mem == nil || c.mem != in.mem {
		return nil, 0
	}
	for w, word := range c.changed {
		for word != 0 {
			pages = append(pages, uint32(w*64+bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
	return pages, c.since
}

// restartChanges clears the marks, which count from here on from a new
// persist, whose token it returns (0 when the checkpoint cannot follow
// the memory's writes).
func (c *checkpoint) restartChanges(in *Instance) uint64 {
	clear(c.changed)
	if !c.valid || c.mem == nil || c.mem != in.mem {
		c.since = 0
		return 0
	}
	c.since = persistTokens.Add(1)
	return c.since
}

// holds reports whether the checkpoint has a copy of page p: the page is
// the guest's own, not the template's.
func (c *checkpoint) holds(p uint32) bool { return int(p) < len(c.slot) && c.slot[p] != 0 }
