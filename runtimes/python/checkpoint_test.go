package python_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes/python"
)

// writeTracking says whether this machine's kernel tracks writes (Linux
// 6.7 and later: userfaultfd's asynchronous write-protect). The test
// machines do; WASMEVAL_NO_WRITE_TRACKING=1 says a machine does not, and
// the tests then check the whole checkpoints instead.
func writeTracking() bool { return os.Getenv("WASMEVAL_NO_WRITE_TRACKING") != "1" }

// maxTrivialPages bounds the pages a trivial cell's checkpoint copies.
const maxTrivialPages = 160

// TestCheckpointCopiesOnlyWrittenPages: after a trivial cell, the
// checkpoint copies the few pages that cell wrote, not the megabytes the
// session wrote before it (which it did on every cell before: 1 MiB and
// 0.4 ms for an empty session, 0.1 ms more per MiB of state), and the
// checkpoint still holds the session's memory exactly.
func TestCheckpointCopiesOnlyWrittenPages(t *testing.T) {
	inst := newExitInstance(t, true, nil)
	mustRun(t, inst, "data = bytearray(b'd') * (8 << 20)")
	for range 3 {
		mustRun(t, inst, "x = 1")
	}
	pages, whole := python.LastCheckpointForTest(inst)
	if err := python.VerifyCheckpointForTest(inst); err != nil {
		t.Fatal(err)
	}
	held := python.CheckpointBytesForTest(inst)
	if held < 8<<20 {
		t.Fatalf("the checkpoint holds %d bytes, less than the session's 8 MiB", held)
	}
	if !writeTracking() {
		if !whole {
			t.Fatal("without write tracking, a checkpoint that was not whole")
		}
		return
	}
	// A trivial cell writes about 80 pages (reference counts all over the
	// heap, the allocator's chunks, the stack); the session holds 2,000.
	if whole || pages > maxTrivialPages {
		t.Fatalf("a trivial cell's checkpoint copied %d pages (whole: %v), want only the pages it wrote (at most %d)", pages, whole, maxTrivialPages)
	}
	t.Logf("a trivial cell's checkpoint copied %d pages of the %d held", pages, held/4096)
}

// TestCheckpointFollowsTheSession: a checkpoint kept up a cell at a time
// holds the session's memory exactly after every kind of change (a large
// write, a one-byte write, a free that the host gives back, many small
// objects, the memory's growth), and after rollbacks (which must follow
// the new memory's writes from there) and a Trim (which drops it).
func TestCheckpointFollowsTheSession(t *testing.T) {
	inst, s := sizer(t, true)
	verify := func(what string) {
		t.Helper()
		if err := python.VerifyCheckpointForTest(inst); err != nil {
			t.Fatalf("after %s: %v", what, err)
		}
	}
	cells := []string{
		"import hashlib\nblobs = {}",
		"blobs['a'] = bytearray(b'a') * (8 << 20)",
		"x = 1",
		"blobs['a'][123457] = 7",
		"del blobs['a']",
		"blobs['b'] = [str(i) for i in range(200000)]",
		"big = bytes(64 << 20); big = None",
		"blobs['c'] = bytearray(b'c') * (3 << 20); blobs['c'][-1] = 0",
		"blobs['b'] = blobs['b'][::2]",
	}
	for _, code := range cells {
		mustRun(t, inst, code)
		verify(code)
	}
	digest := "print(len(blobs['b']), blobs['b'][-1], hashlib.sha256(blobs['c']).hexdigest()[:16])"
	want := mustRun(t, inst, digest).out.String()
	for round := range 3 {
		var r rec
		o, err := inst.Run(context.Background(), "blobs.clear(); blobs['d'] = bytearray(5 << 20); import os; os._exit(0)", &r)
		if err != nil || !strings.Contains(r.out.String(), "rolled back to before this cell") {
			t.Fatalf("round %d: %+v %v %q", round, o, err, r.out.String())
		}
		if got := mustRun(t, inst, digest).out.String(); got != want {
			t.Fatalf("round %d: after the rollback %q, want %q", round, got, want)
		}
		verify("the rollback")
		if pages, whole := python.LastCheckpointForTest(inst); writeTracking() && (whole || pages > maxTrivialPages) {
			t.Fatalf("round %d: the checkpoint after a rollback copied %d pages (whole: %v): the new memory's writes are not followed", round, pages, whole)
		}
		mustRun(t, inst, "blobs['b'].append('r')")
		mustRun(t, inst, "blobs['b'].pop()")
		verify("cells after the rollback")
		if round == 1 {
			s.Trim(context.Background()) // drops the checkpoint: the next cell takes it whole first
			if n := python.CheckpointBytesForTest(inst); n != 0 {
				t.Fatalf("the checkpoint holds %d bytes after Trim", n)
			}
			mustRun(t, inst, "x = 2")
			verify("Trim")
		}
	}
}
