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
