package python_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/python"
)

const mib = 1 << 20

func sizer(t *testing.T, checkpoints bool) (runtimes.Instance, runtimes.Sizer) {
	t.Helper()
	inst := newExitInstance(t, checkpoints, nil)
	s, ok := inst.(runtimes.Sizer)
	if !ok {
		t.Fatal("the Python instance is not a runtimes.Sizer")
	}
	return inst, s
}

func mustRun(t *testing.T, inst runtimes.Instance, code string) *rec {
	t.Helper()
	r, o := run(t, inst, code)
	if o.Failed {
		t.Fatalf("%q failed: %s", code, r.out.String())
	}
	return r
}

func anon(t *testing.T, inst runtimes.Instance) int64 {
	t.Helper()
	n, err := python.AnonymousBytesForTest(inst)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTrimAfterFree: a session that used and freed 200 MiB gives it back:
// after Trim it holds (by its own account and by the kernel's) far less,
// and its state is intact. Before, the written pages stayed resident and
// the checkpoint copied them too.
func TestTrimAfterFree(t *testing.T) {
	inst, s := sizer(t, true)
	mustRun(t, inst, "kept = {i: str(i) for i in range(10000)}")
	base := s.ResidentBytes()
	mustRun(t, inst, "big = bytearray(200 << 20)\nfor i in range(0, len(big), 4096): big[i] = 1")
	if held := s.ResidentBytes(); held < base+190*mib {
		t.Fatalf("holding 200 MiB: ResidentBytes %d MiB (base %d MiB)", held/mib, base/mib)
	}
	mustRun(t, inst, "del big")
	after := s.Trim(context.Background())
	real := anon(t, inst)
	t.Logf("base %d MiB, after Trim %d MiB (kernel: %d MiB private in the guest memory)", base/mib, after/mib, real/mib)
	if after > base+8*mib || real > base+8*mib {
		t.Fatalf("after Trim: ResidentBytes %d MiB, kernel %d MiB; want near the %d MiB before the allocation", after/mib, real/mib, base/mib)
	}
	r := mustRun(t, inst, "print(len(kept), kept[9999], sum(len(v) for v in kept.values()))")
	if r.out.String() != "10000 9999 38890\n" {
		t.Fatalf("state after Trim: %q", r.out.String())
	}
	// The heap is consistent: it hands the memory out again.
	mustRun(t, inst, "big = bytearray(200 << 20); big[-1] = 7; assert big[-2:] == b'\\x00\\x07' and big[100 << 20] == 0; del big")
}

// TestTrimFragmentedHeap: free chunks in the middle of the heap (a live
// object after them keeps them out of the top chunk), and ones smaller than
// what is given back after every cell, are given back by Trim.
func TestTrimFragmentedHeap(t *testing.T) {
	inst, s := sizer(t, false)
	// 512 KiB blocks with a live 64 KiB one after each: freed, they stay
	// apart, each below what is given back after every cell.
	mustRun(t, inst, "blocks = []\nfor i in range(100):\n    b = bytearray(512 << 10); b[::4096] = b'x' * 128; blocks.append(b)\n    blocks.append(bytearray(b'y' * (64 << 10)))")
	held := s.ResidentBytes()
	mustRun(t, inst, "del blocks[::2]")
	before := anon(t, inst)
	after := s.Trim(context.Background())
	real := anon(t, inst)
	t.Logf("holding %d MiB; freed half: kernel %d MiB before Trim, %d MiB after (ResidentBytes %d MiB)", held/mib, before/mib, real/mib, after/mib)
	if before < held-8*mib || before-real < 40*mib || after > held-40*mib {
		t.Fatalf("Trim gave back %d MiB of the 50 MiB freed in the middle of the heap (ResidentBytes %d -> %d MiB)", (before-real)/mib, held/mib, after/mib)
	}
	r := mustRun(t, inst, "print(len(blocks), all(b == bytearray(b'y' * (64 << 10)) for b in blocks))")
	if r.out.String() != "100 True\n" {
		t.Fatalf("state after Trim: %q", r.out.String())
	}
}

// TestTrimKeepsLiveZeroPages: pages a live object holds as zeros are given
// back too (they read as zero afterwards), and the object is unchanged.
func TestTrimKeepsLiveZeroPages(t *testing.T) {
	inst, s := sizer(t, false)
	mustRun(t, inst, "z = bytearray(64 << 20)")
	held := s.ResidentBytes()
	after := s.Trim(context.Background())
	if after > held-56*mib {
		t.Fatalf("ResidentBytes %d -> %d MiB after Trim; the 64 MiB of zeros stayed", held/mib, after/mib)
	}
	r := mustRun(t, inst, "z[12345] = 9\nprint(len(z), z.count(0), z[12345])")
	if r.out.String() != "67108864 67108863 9\n" {
		t.Fatalf("after Trim: %q", r.out.String())
	}
}

// TestTrimThenRollback: Trim drops an idle session's checkpoint; the next
// cell takes it again before it runs, so a cell that ends its interpreter
// still rolls back to the state before it.
func TestTrimThenRollback(t *testing.T) {
	inst, s := sizer(t, true)
	mustRun(t, inst, "kept = list(range(100000))")
	python.TakeCheckpointForTest(inst)
	if python.CheckpointBytesForTest(inst) == 0 {
		t.Fatal("no checkpoint to drop")
	}
	s.Trim(context.Background())
	if n := python.CheckpointBytesForTest(inst); n != 0 {
		t.Fatalf("the checkpoint holds %d bytes after Trim", n)
	}
	var r rec
	if o, err := inst.Run(context.Background(), "kept.clear(); import os; os._exit(0)", &r); err != nil || !strings.Contains(r.out.String(), "rolled back to before this cell") {
		t.Fatalf("%+v %v %q", o, err, r.out.String())
	}
	if out := mustRun(t, inst, "print(len(kept), kept[-1])").out.String(); out != "100000 99999\n" {
		t.Fatalf("after rollback: %q", out)
	}
}
