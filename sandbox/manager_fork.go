package sandbox

import (
	"context"
)

// Fork copies the session id of owner (its files and Python state, as
// Session.Fork does) into a new session of the same owner, with a folder of
// its own under the workspace, and returns the new id. It waits for a
// running Eval of the source to finish, and makes room as Create does.
//
// # Errors
//
// ErrNoSession when owner holds no session id; ErrTooManySessions as for
// Create; Session.Fork's errors (a link or special file the copy refuses,
// the disk quota) otherwise. The copy's FreshLanguages (through Session)
// says which languages started afresh.
func (m *Manager) Fork(ctx context.Context, owner, id string) (string, error) {
	src, err := m.acquire(owner, id)
	if err != nil {
		return "", err
	}
	defer m.release(src)
	id, err = m.add(ctx, owner, func(so SessionOptions) (*Session, error) {
		so.SetEnv = src.sess.opts.SetEnv // the source's own variables (CreateWithEnv), over the copy's defaults
		return src.sess.Fork(ctx, so)
	})
	if err == nil {
		m.chargeAdded(ctx, id) // budgetload.go: the copy counts from the start
	}
	return id, err
}

// OwnerLen is the number of sessions owner holds, for per-owner quotas.
func (m *Manager) OwnerLen(owner string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, s := range m.byID {
		if s.owner == owner {
			n++
		}
	}
	return n
}
