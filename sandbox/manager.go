package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// ManagerOptions configure a Manager. The zero value is usable: sessions in
// a temporary workspace, evicted after 5 minutes idle, at most 1000.
type ManagerOptions struct {
	// Workspace is the folder under which each session gets a root folder
	// of its own, named by its id. Empty means a new temporary folder,
	// removed by Close.
	Workspace string
	// IdleTimeout evicts a session that has not been used for this long.
	// Zero means 5 minutes; negative means never.
	IdleTimeout time.Duration
	// MaxSessions caps the sessions kept; creating one more evicts the
	// least recently used. Zero means 1000.
	MaxSessions int
	// Session is the template for every session's options; its Root is
	// ignored (each session gets its own).
	Session SessionOptions
	// KeepFiles keeps a session's root folder when the session is evicted
	// or deleted. By default the folder is removed with the session.
	KeepFiles bool
}

// ErrNoSession is returned for an id the manager does not hold (never
// created, deleted, or evicted).
var ErrNoSession = errors.New("sandbox: no such session")

// Manager keeps sessions by id for servers: each with its own root folder
// under the workspace, evicted when idle or when there are too many. Its
// methods are safe for concurrent use; a session still runs one Eval at a
// time (others wait).
type Manager struct {
	sb      *Sandbox
	opts    ManagerOptions
	tempWS  bool
	mu      sync.Mutex
	byID    map[string]*managed
	closed  bool
	stop    chan struct{}
	stopped chan struct{}
}

type managed struct {
	id       string
	owner    string
	sess     *Session
	root     string
	lastUsed time.Time
	busy     int // Evals in progress; a busy session is not evicted
}

// NewManager starts a manager of sessions of sb, with a sweep every
// IdleTimeout/4 (at least every second) evicting idle sessions.
func NewManager(sb *Sandbox, o ManagerOptions) (*Manager, error) {
	if o.IdleTimeout == 0 {
		o.IdleTimeout = 5 * time.Minute
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 1000
	}
	m := &Manager{sb: sb, opts: o, byID: map[string]*managed{}, stop: make(chan struct{}), stopped: make(chan struct{})}
	if o.Workspace == "" {
		dir, err := os.MkdirTemp("", "wasmeval-workspace-")
		if err != nil {
			return nil, fmt.Errorf("sandbox: workspace: %w", err)
		}
		m.opts.Workspace, m.tempWS = dir, true
	} else {
		abs, err := filepath.Abs(o.Workspace)
		if err != nil {
			return nil, fmt.Errorf("sandbox: workspace %q: %w", o.Workspace, err)
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, fmt.Errorf("sandbox: workspace: %w", err)
		}
		m.opts.Workspace = abs
	}
	go m.sweeper()
	return m, nil
}

func (m *Manager) sweeper() {
	defer close(m.stopped)
	if m.opts.IdleTimeout < 0 {
		<-m.stop
		return
	}
	every := max(m.opts.IdleTimeout/4, time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			m.Sweep(context.Background())
		}
	}
}

// Create makes a session owned by owner (an opaque string such as a token's
// hash; Get and Delete by another owner see ErrNoSession) and returns its
// id. When the manager is full the least recently used idle session is
// evicted first.
func (m *Manager) Create(ctx context.Context, owner string) (string, error) {
	id, err := newID()
	if err != nil {
		return "", err
	}
	root := filepath.Join(m.opts.Workspace, id)
	if err := os.Mkdir(root, 0o700); err != nil {
		return "", fmt.Errorf("sandbox: session folder: %w", err)
	}
	so := m.opts.Session
	so.Root = root
	sess, err := m.sb.NewSession(ctx, so)
	if err != nil {
		os.RemoveAll(root)
		return "", err
	}
	var evict []*managed
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		sess.Close(ctx)
		os.RemoveAll(root)
		return "", ErrClosed
	}
	for len(m.byID) >= m.opts.MaxSessions {
		victim := m.lruIdleLocked()
		if victim == nil {
			break // all busy: go over the cap rather than kill a running cell
		}
		delete(m.byID, victim.id)
		evict = append(evict, victim)
	}
	m.byID[id] = &managed{id: id, owner: owner, sess: sess, root: root, lastUsed: time.Now()}
	m.mu.Unlock()
	for _, v := range evict {
		m.drop(ctx, v)
	}
	return id, nil
}

func (m *Manager) lruIdleLocked() *managed {
	var victim *managed
	for _, s := range m.byID {
		if s.busy == 0 && (victim == nil || s.lastUsed.Before(victim.lastUsed)) {
			victim = s
		}
	}
	return victim
}

// Eval runs req in the session id of owner.
func (m *Manager) Eval(ctx context.Context, owner, id string, req Request) (*Result, error) {
	s, err := m.acquire(owner, id)
	if err != nil {
		return nil, err
	}
	defer m.release(s)
	return s.sess.Eval(ctx, req)
}

// Session returns the session id of owner, for calls other than Eval
// (Output, Root). It does not count as use for idle eviction.
func (m *Manager) Session(owner, id string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.byID[id]
	if !ok || s.owner != owner {
		return nil, ErrNoSession
	}
	return s.sess, nil
}

func (m *Manager) acquire(owner, id string) (*managed, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.byID[id]
	if !ok || s.owner != owner {
		return nil, ErrNoSession
	}
	s.busy++
	s.lastUsed = time.Now()
	return s, nil
}

func (m *Manager) release(s *managed) {
	m.mu.Lock()
	s.busy--
	s.lastUsed = time.Now()
	m.mu.Unlock()
}

// Delete closes the session id of owner and removes its folder.
func (m *Manager) Delete(ctx context.Context, owner, id string) error {
	m.mu.Lock()
	s, ok := m.byID[id]
	if !ok || s.owner != owner {
		m.mu.Unlock()
		return ErrNoSession
	}
	delete(m.byID, id)
	m.mu.Unlock()
	return m.drop(ctx, s)
}

// Len is the number of sessions held.
func (m *Manager) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byID)
}

// Sweep evicts the sessions idle for longer than IdleTimeout and returns
// how many it evicted. The manager sweeps by itself; Sweep is for tests and
// for servers that want to sweep now.
func (m *Manager) Sweep(ctx context.Context) int {
	if m.opts.IdleTimeout < 0 {
		return 0
	}
	cut := time.Now().Add(-m.opts.IdleTimeout)
	var evict []*managed
	m.mu.Lock()
	for id, s := range m.byID {
		if s.busy == 0 && s.lastUsed.Before(cut) {
			delete(m.byID, id)
			evict = append(evict, s)
		}
	}
	m.mu.Unlock()
	for _, s := range evict {
		m.drop(ctx, s)
	}
	return len(evict)
}

func (m *Manager) drop(ctx context.Context, s *managed) error {
	err := s.sess.Close(ctx)
	if !m.opts.KeepFiles {
		if rerr := os.RemoveAll(s.root); rerr != nil && err == nil {
			err = fmt.Errorf("sandbox: remove session folder: %w", rerr)
		}
	}
	return err
}

// Close closes every session (cancelling running cells) and stops the
// sweep; a temporary workspace is removed.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	all := make([]*managed, 0, len(m.byID))
	for _, s := range m.byID {
		all = append(all, s)
	}
	m.byID = nil
	m.mu.Unlock()
	close(m.stop)
	<-m.stopped
	var errs []error
	for _, s := range all {
		if err := m.drop(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	if m.tempWS {
		if err := os.RemoveAll(m.opts.Workspace); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func newID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("sandbox: session id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
