package python

import "github.com/wasmeval/wasmeval/runtimes"

// TakeCheckpointForTest takes a checkpoint of inst now, for benchmarks.
func TakeCheckpointForTest(inst runtimes.Instance) {
	in := inst.(*Instance)
	in.waitCheckpoint()
	in.takeCheckpoint(in.writes())
}

// CheckpointBytesForTest is how many bytes inst's checkpoint holds.
func CheckpointBytesForTest(inst runtimes.Instance) int {
	return inst.(*Instance).ckpt.copied()
}

// AnonymousBytesForTest is the private resident memory of inst's guest
// memory as the kernel counts it.
func AnonymousBytesForTest(inst runtimes.Instance) (int64, error) {
	in := inst.(*Instance)
	in.waitCheckpoint() // the work between cells gives pages back
	return in.mem.AnonymousBytes()
}
