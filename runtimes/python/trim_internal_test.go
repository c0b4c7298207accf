package python

import (
	"math/bits"
	"testing"
)

// TestTreebinMin: treebinMin agrees with dlmalloc's compute_tree_index:
// every size lands in the bin whose range holds it, so skipping the bins
// of small chunks never skips a chunk large enough to trim.
func TestTreebinMin(t *testing.T) {
	computeTreeIndex := func(s uint64) uint64 { // dlmalloc 2.8.6, TREEBIN_SHIFT 8
		x := s >> 8
		switch {
		case x == 0:
			return 0
		case x > 0xffff:
			return 31
		}
		k := uint64(bits.Len64(x) - 1)
		return k<<1 + (s>>(k+7))&1
	}
	for s := uint64(256); s < 1<<26; s += 8 + s/97 {
		i := computeTreeIndex(s)
		if s < treebinMin(i) || (i < 31 && s >= treebinMin(i+1)) {
			t.Fatalf("size %d is in bin %d, whose range is [%d, %d)", s, i, treebinMin(i), treebinMin(i+1))
		}
	}
}
