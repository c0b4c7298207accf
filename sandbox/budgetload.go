package sandbox

import "context"

// chargeAdded charges the session id, which the manager has just added
// from the store (load) or by a fork, what it measures to hold now: its
// Python memory, its JavaScript VM's size bound from a walk (a loaded
// session's VM is rebuilt at its first JavaScript cell), its cut outputs.
// Without it such a session counted 0 bytes until its first eval, so that
// loads and forks could fill the server past its memory budget (issue 9).
// When the charges then pass the budget, idle sessions other than id are
// evicted by bytes, as the sweep does for any session; id itself is kept,
// as an eval that would run alone always runs.
func (m *Manager) chargeAdded(ctx context.Context, id string) {
	m.mu.Lock()
	s := m.byID[id]
	m.mu.Unlock()
	if s == nil {
		return
	}
	m.measureIdle(s, s.sess.measure, false)
	if m.opts.MemoryBudgetBytes < 0 {
		return
	}
	var evict []*managed
	m.mu.Lock()
	if m.byID[id] == s {
		s.busy++ // not its own victim
		for m.mem.sizes > m.opts.MemoryBudgetBytes {
			v := m.bytesVictimLocked()
			if v == nil {
				break
			}
			delete(m.byID, v.id)
			m.recountLocked(v)
			evict = append(evict, v)
		}
		s.busy--
	}
	m.mu.Unlock()
	m.dropAll(ctx, evict, evictedForMemory)
}

// chargeLoaded is chargeAdded for a session load has just added; it
// passes load's error through.
func (m *Manager) chargeLoaded(id string, err error) error {
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), persistTimeout)
		defer cancel()
		m.chargeAdded(ctx, id)
	}
	return err
}
