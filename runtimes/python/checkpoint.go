package python

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/bits"

	"github.com/wasmeval/wasmeval/wasm"
)

// checkpoint is a copy of the pages an instance's guest has written (its
// memory is the template plus those pages), taken between cells, for
// rolling back a cell stopped hard.
//
// It is kept up to date a page at a time: the instance's memory tracks
// writes (wasm.MemoryHandle.TrackWrites), so after a cell only the pages
// that cell wrote are copied, over their older copies, and the copies of
// pages given back since (trimHeap) are dropped. A page a cell wrote is
// left unprotected for a while (see update), so a checkpoint costs about
// what the last few cells wrote, whatever the session holds. Where the kernel cannot track writes, or the memory is
// not the one the checkpoint follows (a restart), the checkpoint is taken
// whole: every page the guest ever wrote, about 0.1 ms a MiB.
type checkpoint struct {
	valid bool
	// mem is the memory whose writes the checkpoint follows; nil when the
	// next take must be whole.
	mem  *wasm.MemoryHandle
	size uint32 // the memory's size
	// slot[p] is 1 + the index of page p's copy in buf, or 0 when page p
	// reads as the template (or zero past it); has is the same as a
	// bitmap, so that dropping the copies of a large range the guest gave
	// back skips 64 pages at a time.
	slot []int32
	has  []uint64
	free []int32 // indexes of copies in buf no page uses
	next int     // copies buf has handed out (used or free)
	// hot decides which written pages stay unprotected.
	hot  wasm.HotPages
	buf  wasm.HostPages
	data []byte // buf's memory
	// The last take's work, for tests: pages copied, and whether it was
	// whole.
	lastCopied int
	lastWhole  bool
	// changed marks the pages changed since the last persist, counted
	// from the persist since names (0: not known); see persisttrack.go.
	changed []uint64
	since   uint64
}

// takeCheckpoint brings the checkpoint up to the instance at rest, given
// the pages written since the last one (writes: ok false when they are not
// known); failing to leaves none (a hard stop then restarts Python).
func (in *Instance) takeCheckpoint(written []uint32, ok bool) {
	in.ckptStale = false
	if err := in.ckpt.take(in, written, ok); err != nil {
		in.ckpt.valid = false
	}
}

// writes returns the pages of the instance's memory written since the last
// call, starting to track its writes when it does not yet: ok is false
// when they are not known (not tracked until now, or the kernel cannot).
func (in *Instance) writes() (written []uint32, ok bool) {
	if !in.live() || in.mem == nil {
		return nil, false
	}
	size := in.mod.Memory().Size()
	if !in.mem.Tracking() {
		_ = in.mem.TrackWrites(size) // without it: whole checkpoints, whole discards
		return nil, false
	}
	w, err := in.mem.WrittenPages(size)
	return w, err == nil
}

// take brings the checkpoint up to date: the pages in written (the writes
// since the last take, when ok) copied, or, when that cannot be trusted,
// every page the guest ever wrote.
func (c *checkpoint) take(in *Instance, written []uint32, ok bool) error {
	if !in.live() {
		c.valid = false
		return errExited
	}
	mem := in.mod.Memory()
	size := mem.Size()
	all, _ := mem.Read(0, size)
	// Whole when the copies are mostly unused (the session gave back much
	// of what it had written): the whole copy is compact again.
	sparse := c.next > 256 && 2*(c.next-len(c.free)) < c.next
	if ok && c.valid && c.mem == in.mem && !sparse {
		update := func() error { return c.update(in.mem, all, written) }
		var err error
		if c.newCopies(in.mem, written) > len(c.free) {
			// Copies into host memory not touched before fault, which
			// is no reason for the next take to walk the page tables
			// (OwnFaults: it costs 4 getrusage calls, so only then).
			err = in.mem.OwnFaults(update)
		} else {
			err = update()
		}
		if err == nil {
			return nil
		}
	}
	return c.whole(in, all)
}

// maxUnprotected is the most pages a take leaves unprotected: a cell
// that wrote more (megabytes) has them all protected again at once, not
// compared a few more times each (see wasm.HotPages).
const maxUnprotected = 1024

// update copies the pages in written that are still the guest's own (not
// given back since) and changed over their copies.
func (c *checkpoint) update(h *wasm.MemoryHandle, all []byte, written []uint32) error {
	c.resize(uint32(len(all)))
	c.lastCopied, c.lastWhole = 0, false
	for _, p := range written {
		if int(p) >= len(c.slot) || !h.Owned(p) {
			continue // given back after the cell: forget dropped its copy
		}
		off := int(p) * 4096
		src := all[off:min(off+4096, len(all))]
		s := c.slot[p]
		if s == 0 {
			i, err := c.alloc()
			if err != nil {
				c.valid = false
				return err
			}
			s = int32(i + 1)
			c.slot[p] = s
			c.has[p/64] |= 1 << (p % 64)
		} else if bytes.Equal(c.data[int(s-1)*4096:int(s-1)*4096+len(src)], src) {
			c.hot.Listed(p, false)
			continue // unchanged (or changed and changed back)
		}
		copy(c.data[int(s-1)*4096:], src)
		c.lastCopied++
		c.mark(p)
		c.hot.Listed(p, true)
	}
	c.size = uint32(len(all))
	// The pages listed stay unprotected, but for those found unchanged a
	// while (wasm.HotPages): the next cell likely writes them again, and
	// comparing them costs less than its write faults would. When there
	// are many (a cell wrote megabytes), they are all protected again.
	var err error
	if len(written) > maxUnprotected {
		err = h.ProtectAll(c.size)
	} else {
		err = c.hot.Protect(h, written)
	}
	if err != nil {
		c.mem = nil // the next take is whole
	}
	return nil
}

// newCopies is how many of the pages in written update would copy for
// the first time: more than c.free holds take copies buf has not handed
// out before, whose memory is touched for the first time.
func (c *checkpoint) newCopies(h *wasm.MemoryHandle, written []uint32) int {
	n := 0
	for _, p := range written {
		if (int(p) >= len(c.slot) || c.slot[p] == 0) && h.Owned(p) {
			n++
		}
	}
	return n
}

// whole takes the checkpoint afresh: every page the guest has written
// since the template, from a new interval of write tracking.
func (c *checkpoint) whole(in *Instance, all []byte) error {
	c.valid, c.mem, c.since = false, nil, 0
	size := uint32(len(all))
	tracked := false
	if in.mem.TrackWrites(size) == nil {
		// From here the next take copies what is written.
		tracked = in.mem.ProtectAll(size) == nil
	}
	pages, err := in.mem.DirtyPages(size)
	if err != nil {
		return err
	}
	clear(c.slot)
	clear(c.has)
	c.resize(size)
	c.free, c.next = c.free[:0], len(pages)
	data, err := c.buf.Resize(len(pages) * 4096)
	if err != nil {
		return err
	}
	c.data = data[:cap(data)]
	for i, p := range pages {
		off := int(p) * 4096
		copy(c.data[i*4096:(i+1)*4096], all[off:min(off+4096, len(all))])
		c.slot[p] = int32(i + 1)
		c.has[p/64] |= 1 << (p % 64)
	}
	if tracked {
		c.mem = in.mem
	}
	c.lastCopied, c.lastWhole = len(pages), true
	c.size = size
	c.valid = true
	return nil
}

// resize makes the page tables cover a memory of size bytes.
func (c *checkpoint) resize(size uint32) {
	n := int((uint64(size) + 4095) / 4096)
	if len(c.slot) < n {
		c.slot = append(c.slot, make([]int32, n-len(c.slot))...)
	}
	if w := (n + 63) / 64; len(c.has) < w {
		c.has = append(c.has, make([]uint64, w-len(c.has))...)
	}
}

// alloc returns the index of a free copy in buf, growing buf if needed.
func (c *checkpoint) alloc() (int, error) {
	if n := len(c.free); n > 0 {
		i := c.free[n-1]
		c.free = c.free[:n-1]
		return int(i), nil
	}
	if (c.next+1)*4096 > len(c.data) {
		data, err := c.buf.Grow((c.next + 1) * 4096)
		if err != nil {
			return 0, err
		}
		c.data = data
	}
	c.next++
	return c.next - 1, nil
}

// forget drops the copies of pages [first, end), which the host gave
// back (they read as the template again).
func (c *checkpoint) forget(first, end uint32) {
	if !c.valid {
		return
	}
	end = min(end, uint32(len(c.slot)))
	for p := first; p < end; {
		w := c.has[p/64] >> (p % 64)
		if w == 0 {
			p = (p/64 + 1) * 64
			continue
		}
		p += uint32(bits.TrailingZeros64(w))
		if p >= end {
			break
		}
		c.free = append(c.free, c.slot[p]-1)
		c.slot[p] = 0
		c.mark(p)
		c.has[p/64] &^= 1 << (p % 64)
		p++
	}
}

// bytes is the host memory the checkpoint's copies take.
func (c *checkpoint) bytes() int { return c.buf.Cap() }

// copied is how many bytes of pages the checkpoint holds.
func (c *checkpoint) copied() int { return (c.next - len(c.free)) * 4096 }

// drop releases the checkpoint's memory.
func (c *checkpoint) drop() {
	c.valid, c.mem, c.since = false, nil, 0
	c.slot, c.has, c.free, c.next, c.data = nil, nil, nil, 0, nil
	c.buf.Release()
}

// rollback replaces the instance's module by one holding the checkpoint:
// the template mapped, then the checkpoint's pages written back. The
// checkpoint then follows the new memory's writes.
func (in *Instance) rollback(ctx context.Context) error {
	c := &in.ckpt
	if !c.valid {
		return errors.New("python: no checkpoint")
	}
	in.close(ctx)
	c.mem, c.since = nil, 0
	if err := in.r.instantiate(ctx, in, wasm.MemoryOptions{Image: in.r.template.Image()}); err != nil {
		return err
	}
	mem := in.mod.Memory()
	if cur := mem.Size(); cur < c.size {
		if _, ok := mem.Grow((c.size - cur + 65535) / 65536); !ok {
			return fmt.Errorf("python: rollback: cannot grow memory to %d bytes", c.size)
		}
	}
	for p, s := range c.slot {
		if s == 0 {
			continue
		}
		off := uint32(p) * 4096
		n := min(4096, c.size-off)
		if !mem.Write(off, c.data[int(s-1)*4096:int(s-1)*4096+int(n)]) {
			return fmt.Errorf("python: rollback: page %d out of range", p)
		}
	}
	// The memory now is the checkpoint: follow it from here.
	if in.mem.TrackWrites(mem.Size()) == nil {
		c.mem = in.mem
	}
	return nil
}
