package python_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes/python"
)

// TestSizeBoundCoversResident: SizeBound, known without measuring (issue
// 15: the sandbox charges a session it after each eval instead of reading
// the page map), is never less than what ResidentBytes measures next,
// right after a cell (the work between cells pending: the checkpoint's
// take may still grow) and at rest, with checkpoints and without, as a
// session grows, churns, frees and is trimmed.
func TestSizeBoundCoversResident(t *testing.T) {
	cells := []struct{ name, code string }{
		{"trivial", "x = 1"},
		{"grow 48 MiB", "big = bytearray(48 << 20)\nfor i in range(0, len(big), 4096): big[i] = 1"},
		{"rewrite it", "for i in range(0, len(big), 4096): big[i] = 2"},
		{"churn", "tmp = [bytearray(1 << 20) for _ in range(40)]\nfor b in tmp: b[::4096] = b'\\x01' * len(b[::4096])\ndel tmp"},
		{"free", "del big"},
		{"grow again", "big = bytearray(64 << 20)\nfor i in range(0, len(big), 4096): big[i] = 3"},
	}
	for _, checkpoints := range []bool{true, false} {
		t.Run(fmt.Sprintf("checkpoints=%v", checkpoints), func(t *testing.T) {
			inst, s := sizer(t, checkpoints)
			sawPending := false
			for _, c := range cells {
				// Right after the cell, before anything settles it; the
				// timer may settle it first on a loaded machine, so the
				// growing cells run until the bound is taken while pending
				// at least once (checkpoints on).
				for try := 0; ; try++ {
					mustRun(t, inst, c.code)
					bound, pending := python.SizeBoundForTest(inst)
					got := s.ResidentBytes()
					if got > bound {
						t.Errorf("%s (pending %v): ResidentBytes %d MiB (%d bytes) > SizeBound %d MiB (%d bytes)", c.name, pending, got/mib, got, bound/mib, bound)
					}
					if again, _ := python.SizeBoundForTest(inst); again < got {
						t.Errorf("%s, at rest: ResidentBytes %d bytes > SizeBound %d bytes", c.name, got, again)
					}
					sawPending = sawPending || pending
					if pending || try == 20 || c.name == "free" || c.name == "trivial" {
						break
					}
				}
			}
			if checkpoints && !sawPending {
				t.Error("no bound was taken while the work between cells was pending")
			}
			after := s.Trim(context.Background())
			if bound, _ := python.SizeBoundForTest(inst); bound < after {
				t.Errorf("after Trim: ResidentBytes %d bytes > SizeBound %d bytes", after, bound)
			}
			mustRun(t, inst, "big[-1] = 4")
			bound, _ := python.SizeBoundForTest(inst)
			if got := s.ResidentBytes(); got > bound {
				t.Errorf("the cell after Trim: ResidentBytes %d bytes > SizeBound %d bytes", got, bound)
			}
		})
	}
}
