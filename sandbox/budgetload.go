package sandbox

import (
	"cmp"
	"context"
	"slices"
	"sync/atomic"
)

// chargeAdded charges the session id, which the manager has just added
// from the store (load) or by a fork, what it measures to hold now: its
// Python memory, its JavaScript VM's size bound from a walk, its cut
// outputs, and for a loaded session whose VM its first JavaScript cell
// rebuilds from the journal, the VM's size as last saved
// (pendingJSBytes). Without it such a session counted 0 bytes until its
// first eval (its JavaScript part until its first JavaScript cell), so
// that loads and forks could fill the server past its memory budget
// (issue 9). When the charges then pass the budget, idle sessions are
// trimmed, largest first, while they do, and only then evicted by bytes,
// as the sweep does (memoryLocked); id itself is kept, as an eval that
// would run alone always runs.
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
	m.trimForBudget(ctx)
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

// trimForBudget trims idle sessions not trimmed since their last eval,
// largest first, while the sessions' charges pass the budget: a trim gives
// back Python's free pages and its checkpoint, which may leave nothing to
// evict.
func (m *Manager) trimForBudget(ctx context.Context) {
	m.mu.Lock()
	if m.mem.sizes <= m.opts.MemoryBudgetBytes {
		m.mu.Unlock()
		return
	}
	var idle []*managed
	for _, s := range m.byID {
		if s.busy == 0 && !s.trimmed {
			idle = append(idle, s)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(idle, func(a, b *managed) int { return cmp.Compare(b.mem.size, a.mem.size) })
	for _, s := range idle {
		m.mu.Lock()
		over := m.mem.sizes > m.opts.MemoryBudgetBytes
		m.mu.Unlock()
		if !over {
			return
		}
		trims.Add(1)
		m.trim(ctx, s)
	}
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

// pendingJSBytes is what a loaded session's JavaScript state is charged
// before its first JavaScript cell rebuilds the VM from the journal: the
// VM's size when the session was last saved (persistedMeta.JSBytes).
// Once the VM is rebuilt (or the rebuild gave up and JavaScript started
// afresh) the journal is no longer pending and the VM itself is measured.
// The caller holds the session's turn.
func (s *Session) pendingJSBytes() int64 {
	p := s.persist
	if p == nil || len(p.jrnl.pending) == 0 {
		return 0
	}
	s.imu.Lock()
	_, live := s.instances["js"]
	s.imu.Unlock()
	if live {
		return 0
	}
	return max(p.jsBytes, 0)
}

// jsSaveBytes is the JavaScript size a save records (persistedMeta.
// JSBytes): the VM's size bound, known without walking it (runtimes/js
// SizeBound: never less than what it holds), or the estimate a load
// brought while the VM waits to be rebuilt. The caller holds the turn.
func (s *Session) jsSaveBytes() int64 {
	s.imu.Lock()
	inst := s.instances["js"]
	s.imu.Unlock()
	if b, ok := inst.(boundedSizer); ok {
		n, _ := b.SizeBound()
		return max(n, 0)
	}
	return s.pendingJSBytes()
}

// trims counts the sessions trimForBudget trimmed, for tests.
var trims atomic.Int64
