package python

import (
	"bytes"
	"fmt"

	"github.com/wasmeval/wasmeval/runtimes"
)

// LastCheckpointForTest is what inst's last checkpoint took: how many
// pages it copied, and whether it copied every written page (whole) or
// only the last cell's.
func LastCheckpointForTest(inst runtimes.Instance) (pages int, whole bool) {
	in := inst.(*Instance)
	in.waitCheckpoint()
	return in.ckpt.lastCopied, in.ckpt.lastWhole
}

// VerifyCheckpointForTest checks that inst's checkpoint holds its memory
// at rest: every page is either the checkpoint's copy, byte for byte, or
// without a copy and what the template holds there (zero past it).
func VerifyCheckpointForTest(inst runtimes.Instance) error {
	in := inst.(*Instance)
	in.waitCheckpoint()
	c := &in.ckpt
	if !c.valid {
		return fmt.Errorf("no valid checkpoint")
	}
	mem := in.mod.Memory()
	if mem.Size() != c.size {
		return fmt.Errorf("memory of %d bytes, checkpoint of %d", mem.Size(), c.size)
	}
	all, _ := mem.Read(0, mem.Size())
	tmpl, release, err := in.r.template.View()
	if err != nil {
		return err
	}
	defer release()
	var zero [4096]byte
	copies := 0
	for p := 0; p*4096 < len(all); p++ {
		got := all[p*4096 : (p+1)*4096]
		var want []byte
		switch s := int32(0); {
		case p < len(c.slot) && c.slot[p] != 0:
			s = c.slot[p]
			want = c.data[int(s-1)*4096 : int(s)*4096]
			copies++
			if c.has[p/64]&(1<<(p%64)) == 0 {
				return fmt.Errorf("page %d has a copy but not its bit", p)
			}
		case (p+1)*4096 <= len(tmpl):
			want = tmpl[p*4096 : (p+1)*4096]
		default:
			want = zero[:]
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("page %d of %d differs from the checkpoint (copy: %v)", p, len(all)/4096, p < len(c.slot) && c.slot[p] != 0)
		}
	}
	if used := c.next - len(c.free); used != copies {
		return fmt.Errorf("%d copies in use, %d pages have one", used, copies)
	}
	return nil
}
