package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Fork copies the session id of owner (its files and Python state, as
// Session.Fork does) into a new session of the same owner, with a folder of
// its own under the workspace, and returns the new id. It waits for a
// running Eval of the source to finish. It does not evict to make room.
//
// # Errors
//
// ErrNoSession when owner holds no session id; Session.Fork's errors (a
// session with JavaScript state cannot be copied) otherwise.
func (m *Manager) Fork(ctx context.Context, owner, id string) (string, error) {
	src, err := m.acquire(owner, id)
	if err != nil {
		return "", err
	}
	defer m.release(src)
	newID, err := newID()
	if err != nil {
		return "", err
	}
	root := filepath.Join(m.opts.Workspace, newID)
	if err := os.Mkdir(root, 0o700); err != nil {
		return "", fmt.Errorf("sandbox: session folder: %w", err)
	}
	so := m.opts.Session
	so.Root = root
	cp, err := src.sess.Fork(ctx, so)
	if err != nil {
		os.RemoveAll(root)
		return "", err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		cp.Close(ctx)
		os.RemoveAll(root)
		return "", ErrClosed
	}
	m.byID[newID] = &managed{id: newID, owner: owner, sess: cp, root: root, lastUsed: time.Now()}
	m.mu.Unlock()
	return newID, nil
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
