package python_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/wasmeval/wasmeval/runtimes/python"
)

// processFaults is the page faults this process has taken.
func processFaults(t *testing.T) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Minflt + ru.Majflt
}

// TestCheckpointTrivialCellsFaultLittle: with checkpoints on, a warm
// session's trivial cells seldom take write faults: the pages they write
// again and again stay unprotected (wasm.HotPages). Before, every page
// was protected again every 32 checkpoints, and the next cell took some
// 70 write faults (~3 µs each in a virtual machine). A cell that runs
// CPython's full garbage collection writes hundreds of pages: that one
// faults whatever the checkpoint does. The checkpoint stays exact.
func TestCheckpointTrivialCellsFaultLittle(t *testing.T) {
	if !writeTracking() {
		t.Skip("write tracking is off (WASMEVAL_NO_WRITE_TRACKING=1): every checkpoint is whole")
	}
	inst := newExitInstance(t, true, nil)
	for range 300 {
		mustRun(t, inst, "x = 1")
	}
	const cells = 640
	many := 0 // cells that took more than 30 faults
	for range cells {
		f0 := processFaults(t)
		mustRun(t, inst, "x = 1")
		python.LastCheckpointForTest(inst) // its checkpoint taken
		if processFaults(t)-f0 > 30 {
			many++
		}
	}
	t.Logf("%d of %d trivial cells took more than 30 page faults", many, cells)
	if many > 6 {
		t.Errorf("%d of %d trivial cells took more than 30 page faults with checkpoints on, want at most 6", many, cells)
	}
	if err := python.VerifyCheckpointForTest(inst); err != nil {
		t.Fatal(err)
	}
}
