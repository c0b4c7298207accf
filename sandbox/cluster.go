package sandbox

import (
	"context"
	"os"
)

// Unload closes the session id and removes its folder without deleting
// anything from a store: for a server that is one node of several, when
// another node has taken the session over (its copy here is stale) or
// when this node gives it up. It reports whether the manager held the
// session. A cell running in it is cancelled.
func (m *Manager) Unload(ctx context.Context, id string) bool {
	m.mu.Lock()
	s, ok := m.byID[id]
	if ok {
		delete(m.byID, id)
	}
	m.mu.Unlock()
	if !ok {
		return false
	}
	if err := s.sess.Close(ctx); err != nil {
		m.sb.opts.Logger.Warn("unloading a session", "session", id, "err", err)
	}
	os.RemoveAll(s.root)
	return true
}

// Holds reports whether the manager holds the session id in memory now.
func (m *Manager) Holds(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.byID[id]
	return ok
}

// Detach removes the session id from the manager at once, so that the
// next request for it loads it from the store, and closes it in the
// background once the eval running in it (if any) has ended. Its folder
// stays: that load makes it hold exactly the stored files. It is Unload
// for a caller inside the session's own eval (its save failed: the copy
// in memory is ahead of the store, which holds the last answered eval),
// where Unload would wait for that eval to end. It reports whether the
// manager held the session.
func (m *Manager) Detach(id string) bool {
	m.mu.Lock()
	s, ok := m.byID[id]
	if ok {
		delete(m.byID, id)
	}
	m.mu.Unlock()
	if !ok {
		return false
	}
	go func() {
		if err := s.sess.Close(context.Background()); err != nil {
			m.sb.opts.Logger.Warn("detaching a session", "session", id, "err", err)
		}
	}()
	return true
}
