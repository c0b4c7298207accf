package sandbox

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
)

// SessionInfo describes a session of a Manager, as serve's
// GET /v1/sessions and GET /v1/sessions/{id} report it.
type SessionInfo struct {
	ID       string    `json:"id"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"lastUsed"`
	// Busy reports whether an eval is running (or waiting for its turn).
	Busy bool `json:"busy"`
	// Languages are the languages whose state is live: those that ran a
	// cell since the session began or was last reset.
	Languages []string `json:"languages"`
	// FuelUsed is the fuel every Python cell of the session has used.
	FuelUsed int64 `json:"fuelUsed"`
	// ResidentBytes is the session's memory as last measured.
	ResidentBytes int64 `json:"residentBytes"`
	// RootBytes and RootFiles are what the session root holds (file
	// sizes, and entries of every kind), measured on request by Info;
	// List leaves them out.
	RootBytes int64 `json:"rootBytes,omitempty"`
	RootFiles int64 `json:"rootFiles,omitempty"`
}

// ErrNotRunning is returned by Interrupt when the session runs no cell.
var ErrNotRunning = errors.New("sandbox: no cell is running")

// errInterrupted is the cause of a cell stopped by Interrupt.
var errInterrupted = errors.New("sandbox: interrupted")

// Interrupt stops the cell the session is running, as a cancelled context
// would: the cell ends "cancelled", the cells after it stay "pending", and
// the session keeps its state (what a rollback restores, for Python). It
// returns ErrNotRunning when no cell runs.
func (s *Session) Interrupt() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.cancel == nil {
		return ErrNotRunning
	}
	s.cancel(errInterrupted)
	return nil
}

// Files is the session root as the files helpers see it: every path is
// confined to the root by the guest's rules, and writes count against the
// session's disk quota.
func (s *Session) Files() *hostcalls.FS { return s.calls.FS() }

// liveLanguages are the languages with an instance, sorted.
func (s *Session) liveLanguages() []string {
	s.imu.Lock()
	defer s.imu.Unlock()
	langs := make([]string, 0, len(s.instances)+1)
	for l := range s.instances {
		langs = append(langs, l)
	}
	if p := s.persist; p != nil && p.jsPending.Load() {
		if _, ok := s.instances["js"]; ok {
			p.jsPending.Store(false) // rebuilt (or reset): the instance says it now
		} else {
			langs = append(langs, "js") // loaded, rebuilt by its first JS cell
		}
	}
	slices.Sort(langs)
	return langs
}

// List describes the sessions of owner, oldest first. It does not count as
// use for idle eviction.
func (m *Manager) List(owner string) []SessionInfo {
	m.mu.Lock()
	var mine []*managed
	for _, s := range m.byID {
		if s.owner == owner {
			mine = append(mine, s)
		}
	}
	infos := make([]SessionInfo, 0, len(mine))
	for _, s := range mine {
		infos = append(infos, m.infoLocked(s))
	}
	m.mu.Unlock()
	for i, s := range mine {
		infos[i].Languages = s.sess.liveLanguages()
		infos[i].FuelUsed = s.sess.fuelUsedNow()
	}
	slices.SortFunc(infos, func(a, b SessionInfo) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return infos
}

// Info describes the session id of owner, with what its root holds
// (measured now: a walk of the root, at most maxInfoEntries entries). It
// does not count as use for idle eviction.
func (m *Manager) Info(ctx context.Context, owner, id string) (SessionInfo, error) {
	m.mu.Lock()
	s, ok := m.byID[id]
	if !ok || s.owner != owner {
		m.mu.Unlock()
		return SessionInfo{}, ErrNoSession
	}
	info := m.infoLocked(s)
	m.mu.Unlock()
	info.Languages = s.sess.liveLanguages()
	info.FuelUsed = s.sess.fuelUsedNow()
	info.RootBytes, info.RootFiles = rootUsage(ctx, s.root)
	return info, nil
}

// Interrupt stops the running cell of the session id of owner; see
// Session.Interrupt.
func (m *Manager) Interrupt(owner, id string) error {
	sess, err := m.Session(owner, id)
	if err != nil {
		return err
	}
	return sess.Interrupt()
}

func (m *Manager) infoLocked(s *managed) SessionInfo {
	return SessionInfo{
		ID: s.id, Created: s.created, LastUsed: s.lastUsed, Busy: s.busy > 0,
		ResidentBytes: s.sess.lastResident(),
	}
}

// maxInfoEntries bounds the walk of Info: a root may hold many files, and
// an info request must stay cheap.
const maxInfoEntries = 1 << 20

// rootUsage sums the sizes of the files under root and counts its entries,
// without following links, stopping at maxInfoEntries or when ctx ends.
func rootUsage(ctx context.Context, root string) (bytes, entries int64) {
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return nil
		}
		entries++
		if entries >= maxInfoEntries || ctx.Err() != nil {
			return filepath.SkipAll
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				bytes += fi.Size()
			}
		}
		return nil
	})
	return bytes, entries
}
