package sandbox

import (
	"testing"
	"time"
)

// SetMemoryWaitForTest sets how long an eval waits for room in a
// manager's memory budget, for the test. Tests that call it must not run
// in parallel.
func SetMemoryWaitForTest(t testing.TB, d time.Duration) {
	t.Helper()
	old := memoryWait
	memoryWait = d
	t.Cleanup(func() { memoryWait = old })
}

// MeasuresForTest is how many times the manager's sweeps have measured a
// session (a JavaScript session's measurement walks its VM unless no cell
// has run in it since its last walk).
func MeasuresForTest() int64 { return measures.Load() }

// CommittedForTest is what m's memory budget counts now: the sessions'
// charges, and running evals' reservations where more.
func CommittedForTest(m *Manager) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.committedLocked()
}
