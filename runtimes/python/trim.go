package python

import (
	"encoding/binary"
)

// The guest's allocator is wasi-libc's dlmalloc 2.8.6. CPython is built
// with pymalloc (98f57ee), whose 256 KiB arenas come from dlmalloc too (its
// mmap is wasi-libc's, over malloc) and go back to it when they empty, so
// what the host gives back is the free dlmalloc chunks: larger objects and
// emptied arenas, not the free pools of an arena still in use. WebAssembly
// memory cannot shrink, so dlmalloc never gives memory back: a session that
// once used 200 MiB keeps 200 MiB of written pages. Its free chunks' content
// does not matter to it (only their headers do; calloc clears what it hands
// out), so the host may give the pages inside them back to the OS.
//
// The host finds dlmalloc's state (the static struct malloc_state _gm_) once,
// in the template, where only CPython's start-up has run; after that it
// reads the free chunks' extents from it in a session's memory. Every value
// read from guest memory is checked before use: a guest that corrupted its
// own allocator can at worst lose the content of its own pages, never reach
// the host's.

// Offsets in struct malloc_state of 32-bit dlmalloc without locks.
const (
	msTreemap   = 4
	msDvsize    = 8
	msTopsize   = 12
	msLeastAddr = 16
	msDv        = 20
	msTop       = 24
	msTreebins  = 304 // 40 + 66 small bin pointers
	msSegBase   = 448 // 304 + 32 tree bin pointers + 4 words

	msSegSize = 452
	msSize    = 472
)

const (
	pinuseBit = 1
	cinuseBit = 2
	flagBits  = 7
	// A free tree chunk's header: prev_foot, head, fd, bk, child[2],
	// parent, index. Its pages past it hold nothing dlmalloc reads.
	chunkHeader = 32
	// maxFreeChunks bounds the walk of the tree bins: a heap has far fewer
	// large free chunks, and a corrupt one cannot make the host loop.
	maxFreeChunks = 1 << 16
)

// heapState is where dlmalloc's state lies in the guest's memory; zero
// when it was not found (trimming the heap is then skipped).
type heapState struct {
	addr uint32
}

func le32(b []byte, off uint64) (uint32, bool) {
	if off+4 > uint64(len(b)) || off+4 < off {
		return 0, false
	}
	return binary.LittleEndian.Uint32(b[off:]), true
}

// findHeapState looks for dlmalloc's state in mem, a template's memory: a
// struct whose top chunk has a matching header and lies at the end of its
// one heap segment, which ends inside the memory. It must be unique.
// (wasi-libc starts the heap at __heap_base without counting it in
// footprint, so that field is not checked.)
func findHeapState(mem []byte) heapState {
	var found []uint32
	limit := uint64(len(mem))
	for x := uint64(0); x+msSize <= limit; x += 4 {
		top, _ := le32(mem, x+msTop)
		topsize, _ := le32(mem, x+msTopsize)
		if top == 0 || top%8 != 0 || topsize == 0 || uint64(top) <= x {
			continue
		}
		if head, ok := le32(mem, uint64(top)+4); !ok || head != topsize|pinuseBit {
			continue
		}
		base, _ := le32(mem, x+msSegBase)
		size, _ := le32(mem, x+msSegSize)
		least, _ := le32(mem, x+msLeastAddr)
		end := uint64(base) + uint64(size)
		topEnd := uint64(top) + uint64(topsize)
		if base == 0 || least != base || uint64(base) < x+msSize || uint64(top) < uint64(base) ||
			topEnd > end || end-topEnd > 256 || end > limit {
			continue
		}
		found = append(found, uint32(x))
		if limit > uint64(base) {
			limit = uint64(base) // the state is static data, below the heap
		}
	}
	if len(found) != 1 {
		return heapState{}
	}
	return heapState{addr: found[0]}
}

// freeRange is a span of guest memory inside a free chunk, past its header.
type freeRange struct{ off, n uint64 }

// freeRanges returns the interiors of dlmalloc's free chunks in mem of at
// least min bytes: the top chunk, the designated victim and the chunks of
// the tree bins (every free chunk of 256 bytes or more is in one of those).
func (h heapState) freeRanges(mem []byte, min uint64) []freeRange {
	if h.addr == 0 {
		return nil
	}
	s := uint64(h.addr)
	least, ok := le32(mem, s+msLeastAddr)
	if !ok {
		return nil
	}
	var out []freeRange
	// chunk adds the free chunk at p of size n (its size from the state or
	// its parent) when its header agrees that it is free and that size.
	chunk := func(p, n uint32, top bool) bool {
		if p < least || p%8 != 0 || n < chunkHeader {
			return false
		}
		head, ok := le32(mem, uint64(p)+4)
		if !ok || head&^flagBits != n || head&cinuseBit != 0 {
			return false
		}
		end := uint64(p) + uint64(n)
		if end > uint64(len(mem)) {
			return false
		}
		if !top {
			// The next chunk records this one as free, with its size.
			foot, ok1 := le32(mem, end)
			next, ok2 := le32(mem, end+4)
			if !ok1 || !ok2 || foot != n || next&pinuseBit != 0 {
				return false
			}
		}
		if uint64(n-chunkHeader) >= min {
			out = append(out, freeRange{uint64(p) + chunkHeader, uint64(n) - chunkHeader})
		}
		return true
	}
	if top, ok := le32(mem, s+msTop); ok && top != 0 {
		size, _ := le32(mem, s+msTopsize)
		chunk(top, size, true)
	}
	if dv, ok := le32(mem, s+msDv); ok && dv != 0 {
		size, _ := le32(mem, s+msDvsize)
		chunk(dv, size, false)
	}
	treemap, _ := le32(mem, s+msTreemap)
	seen := map[uint32]bool{}
	var stack []uint32
	for i := uint64(0); i < 32; i++ {
		if treemap&(1<<i) == 0 {
			continue
		}
		if i < 31 && treebinMin(i+1) <= min+chunkHeader {
			continue // every chunk of bin i is smaller than min wants
		}
		if root, ok := le32(mem, s+msTreebins+4*i); ok && root != 0 {
			stack = append(stack, root)
		}
	}
	for len(stack) > 0 && len(seen) < maxFreeChunks {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[t] {
			continue
		}
		head, ok := le32(mem, uint64(t)+4)
		if !ok || !chunk(t, head&^flagBits, false) {
			continue // not a free chunk: do not follow its links
		}
		seen[t] = true
		// The other chunks of the same size, chained by fd; and a node of
		// the tree (parent set) has children, while the children fields of
		// a chained chunk are stale.
		links := []uint64{8}
		if parent, _ := le32(mem, uint64(t)+24); parent != 0 {
			links = append(links, 16, 20)
		}
		for _, off := range links {
			if c, ok := le32(mem, uint64(t)+off); ok && c != 0 && !seen[c] {
				stack = append(stack, c)
			}
		}
	}
	return out
}

// trimHeap gives the pages inside the guest allocator's free chunks of at
// least min bytes back to the OS. The instance must be at rest.
func (in *Instance) trimHeap(min uint64) uint64 {
	if !in.live() {
		return 0
	}
	in.r.heapOnce.Do(in.r.findHeap)
	mem := in.mod.Memory()
	all, ok := mem.Read(0, mem.Size())
	if !ok {
		return 0
	}
	var freed uint64
	for _, fr := range in.r.heap.freeRanges(all, min) {
		// The checkpoint drops its copies of the pages given back.
		n, err := in.mem.DiscardPages(fr.off, fr.n, in.ckpt.forget)
		if err != nil {
			break
		}
		freed += n
	}
	return freed
}

// findHeap finds the guest allocator's state in the template, where only
// CPython's start-up has run.
func (r *Runtime) findHeap() {
	b, release, err := r.template.View()
	if err != nil {
		return // no trimming
	}
	defer release()
	r.heap = findHeapState(b)
}

// treebinMin is the smallest chunk size dlmalloc's tree bin i holds
// (minsize_for_tree_index, TREEBIN_SHIFT 8); bin i holds sizes up to bin
// i+1's, bin 31 every larger one. The bins of chunks too small to trim
// after a cell (afterCellTrim) are not walked: a session's heap has
// thousands of small free chunks and a few large ones.
func treebinMin(i uint64) uint64 {
	return 1<<((i>>1)+8) | (i&1)<<((i>>1)+7)
}
