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

	"github.com/wasmeval/wasmeval/store"
)

// ManagerOptions configure a Manager. The zero value is usable: sessions in
// a temporary workspace, evicted after 5 minutes idle, at most 100 per
// owner and 1000 in all, holding at most DefaultMemoryBudget() of host
// memory together.
type ManagerOptions struct {
	// Workspace is the folder under which each session gets a root folder
	// of its own, named by its id. Empty means a new temporary folder,
	// removed by Close.
	Workspace string
	// IdleTimeout evicts a session that has not been used for this long.
	// Zero means 5 minutes; negative means never.
	IdleTimeout time.Duration
	// MaxSessionsPerOwner caps the sessions one owner keeps: creating (or
	// forking) one more evicts that owner's least recently used idle
	// session, never another owner's; when all of them are running a
	// cell, Create fails with ErrTooManySessions. Zero means 100.
	MaxSessionsPerOwner int
	// MaxSessions caps the sessions kept in all; creating one more evicts
	// the least recently used idle session of the owner that holds the
	// most, so that one owner's creates do not evict the others' sessions
	// while it holds more than they do. Zero means 1000.
	MaxSessions int
	// MemoryBudgetBytes caps the host memory that the sessions hold
	// together, as Session.ResidentBytes counts it (Python's written pages
	// and checkpoint; a JavaScript VM's walked size), or, after an eval
	// until it is measured, an upper bound of it (memreserve.go). Over it
	// the manager trims idle sessions, then
	// evicts idle sessions by bytes: the largest of the owner that holds
	// the most. Running sessions count at what they may grow to: each Eval
	// reserves its session's memory limit per language it runs (twice for
	// Python with checkpoints) before its cells run, and one that finds no
	// room within 10 s fails with ErrMemoryBudget (memreserve.go). Zero
	// means DefaultMemoryBudget(); negative means no budget.
	MemoryBudgetBytes int64
	// TrimIdleAfter trims a session (Session.Trim: freed guest pages go
	// back to the OS, the checkpoint is dropped until the next cell) once
	// it has been idle this long. Zero means 10 seconds; negative means
	// only when over MemoryBudgetBytes.
	TrimIdleAfter time.Duration
	// Session is the template for every session's options; its Root is
	// ignored (each session gets its own).
	Session SessionOptions
	// RecordDir, when set, is an existing folder that receives one tape
	// per session, ID.wtape (see SessionOptions.Record); the session
	// finishes and closes it when it closes. Session.Record is ignored.
	RecordDir string
	// KeepFiles keeps a session's root folder when the session is evicted
	// or deleted. By default the folder is removed with the session.
	KeepFiles bool
	// Store, when set, keeps every session's state (persist.go): it is
	// saved when the session is made and after each eval, before Eval
	// returns, and a session the manager does not hold is loaded from it
	// on first use, so sessions outlive the process. Deleting or evicting
	// a session deletes its state. The manager does not close it.
	Store store.Store
	// StoreEpoch, when set, gives the fencing epoch of the manager's saves
	// of a session (store.Store.Save); nil means 1, for a store only this
	// process writes.
	StoreEpoch func(id string) int64
	// JSJournalBytes caps each stored session's JavaScript journal, from
	// which a load rebuilds its JavaScript state (jsjournal.go): its cells,
	// their inputs and the files they found. Past it the journal is
	// dropped, and a load resets JavaScript, saying why. Zero means
	// DefaultJSJournalBytes; negative means no journal.
	JSJournalBytes int64
}

// Defaults of ManagerOptions.
const (
	DefaultMaxSessionsPerOwner = 100
	DefaultMaxSessions         = 1000
	DefaultTrimIdleAfter       = 10 * time.Second
)

// ErrNoSession is returned for an id the manager does not hold (never
// created, deleted, or evicted).
var ErrNoSession = errors.New("sandbox: no such session")

// ErrTooManySessions is returned by Create and Fork when the owner holds
// MaxSessionsPerOwner sessions and every one of them is running a cell, so
// that none can be evicted to make room.
var ErrTooManySessions = errors.New("sandbox: too many sessions")

// Manager keeps sessions by id for servers: each with its own root folder
// under the workspace, evicted when idle, when its owner or the manager
// holds too many, or when the sessions hold too much memory. Its methods
// are safe for concurrent use; a session still runs one Eval at a time
// (others wait).
type Manager struct {
	sb      *Sandbox
	opts    ManagerOptions
	tempWS  bool
	mu      sync.Mutex
	byID    map[string]*managed
	closed  bool
	kick    chan struct{} // an Eval ended: account its session's memory
	stop    chan struct{}
	stopped chan struct{}
	sweepMu sync.Mutex // one Sweep at a time
	mem     memReserve // running evals' room in the memory budget (memreserve.go); under mu
	ms      managerStore
}

type managed struct {
	id       string
	owner    string
	sess     *Session
	root     string
	created  time.Time
	lastUsed time.Time
	busy     int  // Evals in progress; a busy session is not evicted
	trimmed  bool // trimmed since it was last used

	mem memAcct // its charge in the memory budget (memreserve.go)
}

// NewManager starts a manager of sessions of sb, with a sweep every second
// (and after each Eval) that evicts idle sessions, trims them and keeps
// the sessions within the memory budget.
func NewManager(sb *Sandbox, o ManagerOptions) (*Manager, error) {
	if o.IdleTimeout == 0 {
		o.IdleTimeout = 5 * time.Minute
	}
	if o.MaxSessionsPerOwner <= 0 {
		o.MaxSessionsPerOwner = DefaultMaxSessionsPerOwner
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MemoryBudgetBytes == 0 {
		o.MemoryBudgetBytes = DefaultMemoryBudget()
	}
	if o.TrimIdleAfter == 0 {
		o.TrimIdleAfter = DefaultTrimIdleAfter
	}
	if err := checkRecordDir(o.RecordDir); err != nil {
		return nil, err
	}
	m := &Manager{
		sb: sb, opts: o, byID: map[string]*managed{},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{}),
	}
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
		if err := checkWorkspace(abs, sb.protected); err != nil {
			return nil, err
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
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			m.Sweep(context.Background())
		case <-m.kick:
			m.sweepMemory(context.Background())
		}
	}
}

// Create makes a session owned by owner (an opaque string such as a token's
// hash; Get and Delete by another owner see ErrNoSession) and returns its
// id. When the owner holds MaxSessionsPerOwner sessions, its least
// recently used idle one is evicted first; when the manager holds
// MaxSessions, the least recently used idle session of the owner that
// holds the most is.
//
// # Errors
//
// ErrTooManySessions when the owner is at its cap and all its sessions are
// running cells; ErrClosed after Close.
func (m *Manager) Create(ctx context.Context, owner string) (string, error) {
	return m.add(ctx, owner, func(so SessionOptions) (*Session, error) { return m.sb.NewSession(ctx, so) })
}

// add makes a session of owner with make and keeps it, evicting to make
// room as Create says.
func (m *Manager) add(ctx context.Context, owner string, make func(SessionOptions) (*Session, error)) (string, error) {
	// Refuse early, before any work, when nothing can be evicted.
	m.mu.Lock()
	err := m.roomLocked(owner)
	m.mu.Unlock()
	if err != nil {
		return "", err
	}
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
	if err := m.recordTo(id, &so); err != nil {
		os.RemoveAll(root)
		return "", err
	}
	sess, err := make(so)
	if err != nil {
		closeRecord(so)
		os.RemoveAll(root)
		return "", err
	}
	if err := m.attachStore(ctx, sess, id, owner); err != nil {
		sess.Close(ctx)
		os.RemoveAll(root)
		m.forgetStored(ctx, id)
		return "", err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		sess.Close(ctx)
		os.RemoveAll(root)
		return "", ErrClosed
	}
	if err := m.roomLocked(owner); err != nil {
		m.mu.Unlock()
		sess.Close(ctx)
		os.RemoveAll(root)
		return "", err
	}
	evict := m.evictForLocked(owner)
	now := time.Now()
	created := now
	if sess.persist != nil {
		created = sess.persist.created // as its record says, and a listing or a load after a restart
	}
	m.byID[id] = &managed{id: id, owner: owner, sess: sess, root: root, created: created, lastUsed: now}
	m.mu.Unlock()
	m.dropAll(ctx, evict, "too many sessions")
	return id, nil
}

// roomLocked fails when owner is at its cap with every session busy.
func (m *Manager) roomLocked(owner string) error {
	n, idle := 0, false
	for _, s := range m.byID {
		if s.owner == owner {
			n++
			idle = idle || s.busy == 0
		}
	}
	if n >= m.opts.MaxSessionsPerOwner && !idle {
		return fmt.Errorf("%w: this owner holds %d sessions, its limit, and all of them are running cells; wait for one to finish or delete one", ErrTooManySessions, n)
	}
	return nil
}

// evictForLocked removes from byID the sessions to evict so that owner
// may add one: first its own past its cap, then, past the manager's cap,
// those of the owners that hold the most.
func (m *Manager) evictForLocked(owner string) []*managed {
	var evict []*managed
	take := func(v *managed) {
		delete(m.byID, v.id)
		m.recountLocked(v)
		evict = append(evict, v)
	}
	for m.ownerLenLocked(owner) >= m.opts.MaxSessionsPerOwner {
		v := m.lruIdleLocked(owner)
		if v == nil {
			break
		}
		take(v)
	}
	for len(m.byID) >= m.opts.MaxSessions {
		v := m.globalVictimLocked()
		if v == nil {
			break // all busy: go over the cap rather than kill a running cell
		}
		take(v)
	}
	return evict
}

// globalVictimLocked is the least recently used idle session of the owner
// that holds the most sessions (and has an idle one).
func (m *Manager) globalVictimLocked() *managed {
	counts := map[string]int{}
	for _, s := range m.byID {
		counts[s.owner]++
	}
	var victim *managed
	for _, s := range m.byID {
		if s.busy != 0 {
			continue
		}
		if victim == nil || counts[s.owner] > counts[victim.owner] ||
			counts[s.owner] == counts[victim.owner] && s.lastUsed.Before(victim.lastUsed) {
			victim = s
		}
	}
	return victim
}

// lruIdleLocked is owner's least recently used idle session.
func (m *Manager) lruIdleLocked(owner string) *managed {
	var victim *managed
	for _, s := range m.byID {
		if s.owner == owner && s.busy == 0 && (victim == nil || s.lastUsed.Before(victim.lastUsed)) {
			victim = s
		}
	}
	return victim
}

func (m *Manager) ownerLenLocked(owner string) int {
	n := 0
	for _, s := range m.byID {
		if s.owner == owner {
			n++
		}
	}
	return n
}

// Eval runs req in the session id of owner. It first reserves room in the
// memory budget for what the session may grow to (see MemoryBudgetBytes),
// waiting for running evals if need be; an eval that gets none fails with
// ErrMemoryBudget.
func (m *Manager) Eval(ctx context.Context, owner, id string, req Request) (*Result, error) {
	s, err := m.acquire(owner, id)
	if err != nil {
		return nil, err
	}
	defer m.release(s)
	done, err := m.reserveMemory(ctx, s, req) // room for what its cells may grow to
	if err != nil {
		return nil, err
	}
	defer done()
	return s.sess.Eval(ctx, req)
}

// Session returns the session id of owner, for calls other than Eval
// (Output, Root). It does not count as use for idle eviction.
func (m *Manager) Session(owner, id string) (*Session, error) {
	if err := m.loadMissing(owner, id); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.byID[id]
	if !ok || s.owner != owner {
		return nil, ErrNoSession
	}
	return s.sess, nil
}

func (m *Manager) acquire(owner, id string) (*managed, error) {
	if err := m.loadMissing(owner, id); err != nil {
		return nil, err
	}
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
	s.trimmed = false
	m.mu.Unlock()
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// Delete closes the session id of owner and removes its folder.
func (m *Manager) Delete(ctx context.Context, owner, id string) error {
	if err := m.loadMissing(owner, id); err != nil {
		return err
	}
	m.mu.Lock()
	s, ok := m.byID[id]
	if !ok || s.owner != owner {
		m.mu.Unlock()
		return ErrNoSession
	}
	delete(m.byID, id)
	m.recountLocked(s)
	m.mu.Unlock()
	m.forgetStored(ctx, id)
	return m.drop(ctx, s)
}

// Len is the number of sessions held.
func (m *Manager) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byID)
}

// Sweep evicts the sessions idle for longer than IdleTimeout, trims those
// idle for longer than TrimIdleAfter and, when the sessions hold more than
// MemoryBudgetBytes, trims and then evicts idle sessions until they do
// not. It returns how many sessions it evicted. The manager sweeps by
// itself every second; Sweep is for tests and for servers that want to
// sweep now.
func (m *Manager) Sweep(ctx context.Context) int {
	m.sweepMu.Lock()
	defer m.sweepMu.Unlock()
	var evict []*managed
	if m.opts.IdleTimeout >= 0 {
		cut := time.Now().Add(-m.opts.IdleTimeout)
		m.mu.Lock()
		for id, s := range m.byID {
			if s.busy == 0 && s.lastUsed.Before(cut) {
				delete(m.byID, id)
				m.recountLocked(s)
				evict = append(evict, s)
			}
		}
		m.mu.Unlock()
		m.dropAll(ctx, evict, "idle")
	}
	m.expireStored(ctx) // stored sessions nobody came back for (persist.go)
	return len(evict) + m.memoryLocked(ctx, true)
}

// sweepMemory keeps the memory budget (memoryLocked, memreserve.go); it
// runs after evals and when the first eval waiting for room asks.
func (m *Manager) sweepMemory(ctx context.Context) {
	m.sweepMu.Lock()
	defer m.sweepMu.Unlock()
	m.memoryLocked(ctx, false)
}

// trim trims s and records it.
func (m *Manager) trim(ctx context.Context, s *managed) {
	if !m.measureIdle(s, func() (int64, bool) { return s.sess.trim(ctx) }, true) {
		return // an Eval (or Close) took it meanwhile
	}
	m.mu.Lock()
	if s.busy == 0 {
		s.trimmed = true
	}
	m.mu.Unlock()
}

// residentBytes is the sum of the sessions' charges in the memory budget
// (memreserve.go): their last measurements, or upper bounds of what evals
// since added.
func (m *Manager) residentBytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mem.sizes
}

// bytesVictimLocked is the largest idle session of the owner whose
// sessions hold the most bytes (and who has an idle one).
func (m *Manager) bytesVictimLocked() *managed {
	bytes := map[string]int64{}
	for _, s := range m.byID {
		bytes[s.owner] += s.mem.size
	}
	var victim *managed
	for _, s := range m.byID {
		if s.busy != 0 || s.mem.size == 0 {
			continue
		}
		if victim == nil || bytes[s.owner] > bytes[victim.owner] ||
			bytes[s.owner] == bytes[victim.owner] && s.mem.size > victim.mem.size {
			victim = s
		}
	}
	return victim
}

// ResidentBytes is the host memory the manager's sessions hold together,
// as last measured, or bounded since (see MemoryBudgetBytes).
func (m *Manager) ResidentBytes() int64 { return m.residentBytes() }

// evictedForMemory is dropAll's reason for sessions evicted to keep the
// memory budget.
const evictedForMemory = "over the memory budget"

// dropAll closes evicted sessions, logging why.
func (m *Manager) dropAll(ctx context.Context, evict []*managed, why string) {
	for _, s := range evict {
		// A session evicted for memory is only unloaded: its record stays
		// in the store, which loads it again on its next request (memory
		// is this process's shortage, not the session's end; with several
		// nodes, or concurrent evals reserving room, it came often).
		if why != evictedForMemory {
			m.forgetStored(ctx, s.id)
		}
		m.sb.opts.Logger.Info("session evicted", "session", s.id, "owner", s.owner, "reason", why, "residentBytes", s.sess.lastResident())
		if err := m.drop(ctx, s); err != nil {
			m.sb.opts.Logger.Warn("evicting a session", "session", s.id, "err", err)
		}
	}
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
// sweep. A temporary workspace is removed with everything in it; the
// folders of sessions in a workspace given in ManagerOptions are kept.
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
		// A workspace the operator named is theirs: shutting down closes
		// its sessions but leaves their files for the operator (and a
		// later process) to find. Only a temporary workspace is emptied.
		var err error
		if m.tempWS {
			err = m.drop(ctx, s)
		} else {
			err = s.sess.Close(ctx)
		}
		if err != nil {
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
