package js

import (
	"context"
	"testing"
)

// TestMonitorJudgesTheSessionOnly: the memory monitor judges a cell it
// cannot measure (one in native code, or one whose heap grew in a burst)
// by the heap's growth since the cell started (heapSize). The session's
// size when the cell started counts: a session holding 30 MiB of 64 that
// grows by 40 MiB is over its limit, where a fresh one would not be. What
// other sessions are known to have grown by meanwhile does not: the heap's
// growth is theirs (issue 9: one tenant's allocation stopped another
// tenant's non-allocating cell).
func TestMonitorJudgesTheSessionOnly(t *testing.T) {
	const limit = 64 << 20
	freshSize()
	preludeGlobals()
	in, run := testInstance(t, limit)
	run(`globalThis.held = 'x'.repeat(30 << 20)`)
	if in.size < 30<<20 {
		t.Fatalf("the session measures %d bytes after a cell that made 30 MiB", in.size)
	}
	in.vmMu.Lock()
	g := in.startGuard(context.Background())
	defer func() {
		g.stop()
		g.settled()
		in.vmMu.Unlock()
	}()
	known := monitor.known.Load()

	// The cell grows by 40 MiB: over the limit with what the session held.
	if size := g.heapSize(g.startLive+40<<20, known); size <= limit {
		t.Errorf("a session of %d MiB that grew by 40 MiB is judged at %d MiB, within its limit of 64 MiB",
			in.size>>20, size>>20)
	}
	// The heap grows by 50 MiB that another session made and measured:
	// this one holds what it held.
	if size := g.heapSize(g.startLive+50<<20, known+50<<20); size > limit || size < 30<<20 {
		t.Errorf("another session's 50 MiB make this session %d MiB, want its own %d MiB", size>>20, in.size>>20)
	}
}
