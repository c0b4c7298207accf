package sandbox

import (
	"fmt"
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

// CheckMemoryTotalsForTest counts m's memory budget again from scratch
// (every listed session at its charge or its reservation if more, every
// other held session at its reservation) and returns an error naming the
// running totals that differ from that count.
func CheckMemoryTotalsForTest(m *Manager) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var total, sizes, excess, held int64
	seen := map[*managed]bool{}
	count := func(s *managed) {
		if seen[s] {
			return
		}
		seen[s] = true
		var t int64
		if s.id != "" && m.byID[s.id] == s {
			t = s.mem.size
			sizes += s.mem.size
			if !s.mem.exact {
				excess += max(s.mem.size-s.mem.base, 0)
			}
		}
		if h := m.mem.holds[s]; h != nil {
			t = max(t, h.bytes)
			held += h.bytes
		}
		total += t
	}
	for _, s := range m.byID {
		count(s)
	}
	for s := range m.mem.holds {
		count(s)
	}
	if total != m.mem.total || sizes != m.mem.sizes || excess != m.mem.excess || held != m.mem.held {
		return fmt.Errorf("running totals: committed %d, charges %d, excess %d, held %d; counted again: %d, %d, %d, %d",
			m.mem.total, m.mem.sizes, m.mem.excess, m.mem.held, total, sizes, excess, held)
	}
	return nil
}

// MeasureForTest has m measure its session id now, as its sweep does when
// the budget needs it, and charge it what it found; it reports whether it
// did (the session was idle).
func MeasureForTest(m *Manager, id string) bool {
	m.mu.Lock()
	s := m.byID[id]
	m.mu.Unlock()
	return s != nil && m.measureIdle(s, s.sess.measure, false)
}
