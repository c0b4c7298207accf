package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	jsrt "github.com/wasmeval/wasmeval/runtimes/js"
	"github.com/wasmeval/wasmeval/runtimes/python"
)

// The memory budget holds for running cells too. A session is measured
// only while idle, and a running cell may grow its session up to its
// memory limit, so a budget that counted sessions as last measured let
// six cells of 150 MB each run at once under a 512 MiB budget. Each
// Manager.Eval therefore reserves, before its cells run, what its session
// may hold by their end: the memory limit of each language the request
// runs (twice for Python with checkpoints, which keep a copy of its
// pages), or what the session was last measured to hold if that is more.
// Running sessions count at their reservation, idle ones at their last
// measurement. An eval that does not fit has idle sessions trimmed and
// evicted to make room, when that can make it fit, then waits for running
// evals to end, up to memoryWait or until its context ends, in the order
// the evals came; then it fails with ErrMemoryBudget. (The sweep still
// evicts idle sessions when the sessions as measured pass the budget.) An
// eval of a session that holds a reservation already (a nested eval, or
// one queued behind the running one) shares it, grown by the languages it
// adds. An eval that would run alone always runs, even when its session's
// limit alone passes the budget: the budget then lets one cell run at a
// time. JavaScript's limit is a measured one, which a cell can pass before
// it is stopped, so a JavaScript session can briefly hold more than it
// reserved.

// ErrMemoryBudget is the error of a Manager.Eval that the memory budget
// cannot hold while other sessions' cells run (ManagerOptions.
// MemoryBudgetBytes): it waited for them and no room came.
var ErrMemoryBudget = errors.New("sandbox: the server's memory budget is in use by running cells")

// memoryWait is how long an eval waits for room in the memory budget.
var memoryWait = 10 * time.Second

// memoryBudgetError says how much room an eval needed and for how long it
// waited; it is an ErrMemoryBudget.
type memoryBudgetError struct {
	budget, need int64
	waited       time.Duration
	cause        error // the context's error, when it ended the wait
}

func (e *memoryBudgetError) Error() string {
	msg := fmt.Sprintf("sandbox: the server's memory budget of %s is in use by running cells; try again later (this eval needs %s, what its session may hold by the end of its cells, and waited %v for room)",
		sizeText(e.budget), sizeText(e.need), e.waited.Round(100*time.Millisecond))
	if e.cause != nil {
		msg += ": " + e.cause.Error()
	}
	return msg
}

func (e *memoryBudgetError) Unwrap() []error {
	if e.cause != nil {
		return []error{ErrMemoryBudget, e.cause}
	}
	return []error{ErrMemoryBudget}
}

// sizeText is n bytes for people: in MiB, or in bytes below one MiB.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// memReserve is the manager's reservations of its memory budget, guarded
// by Manager.mu.
type memReserve struct {
	holds   map[*managed]*memHold
	outside map[*Session]*managed // the keys of EvalOutside's sessions in holds
	queue   []*memWaiter          // evals waiting for room, oldest first
	changed chan struct{}         // closed at the next release; nil until asked for
}

// memHold is a session's reservation, shared by its evals in flight.
type memHold struct {
	evals int
	bytes int64
	langs map[string]bool // the languages bytes covers
}

// cover grows h by the languages of need that it does not cover yet (an
// eval nested in the running one, of another language).
func (h *memHold) cover(need map[string]int64) {
	for lang, n := range need {
		if !h.langs[lang] {
			h.langs[lang] = true
			h.bytes += n
		}
	}
}

type memWaiter struct{ need int64 }

func (r *memReserve) changedLocked() <-chan struct{} {
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return r.changed
}

func (r *memReserve) notifyLocked() {
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

func (r *memReserve) dequeueLocked(w *memWaiter) {
	for i, v := range r.queue {
		if v == w {
			r.queue = append(r.queue[:i], r.queue[i+1:]...)
			r.notifyLocked() // the next in line may fit now
			return
		}
	}
}

// evalMemory is what session s may hold by the end of req's cells, by
// language: the memory limit of each language they run (Python's twice
// with checkpoints).
func evalMemory(s *Session, req Request) map[string]int64 {
	need := map[string]int64{}
	for _, c := range req.Cells {
		lang := runtimeLanguage(c.Language)
		limit := s.opts.MemoryLimitBytes
		switch lang {
		case "py":
			if limit == 0 {
				limit = python.DefaultMemoryLimit
			}
			if s.opts.Checkpoints {
				limit *= 2
			}
		default:
			if limit == 0 {
				limit = jsrt.DefaultMemoryLimit
			}
		}
		need[lang] = limit
	}
	return need
}

// committedLocked is what the sessions hold against the budget: idle ones
// as last measured, running ones at their reservation or more.
func (m *Manager) committedLocked() int64 {
	var n int64
	for _, s := range m.byID {
		r := s.sess.lastResident()
		if h := m.mem.holds[s]; h != nil {
			r = max(r, h.bytes)
		}
		n += r
	}
	for s, h := range m.mem.holds {
		if m.byID[s.id] != s { // deleted while running: held until it ends
			n += h.bytes
		}
	}
	return n
}

// overBudget reports whether idle sessions should be trimmed and evicted:
// when the sessions as measured pass the budget (running ones as last
// measured: their reservations bound only what else may start), or to
// make room for the first eval waiting for it, when evictions can.
func (m *Manager) overBudget() bool {
	if m.opts.MemoryBudgetBytes < 0 {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.overBudgetLocked()
}

func (m *Manager) overBudgetLocked() bool {
	budget := m.opts.MemoryBudgetBytes
	if len(m.mem.queue) > 0 {
		need, held := m.mem.queue[0].need, int64(0)
		for _, h := range m.mem.holds {
			held += h.bytes
		}
		if held+need <= budget && m.committedLocked()+need > budget {
			return true
		}
	}
	var n int64
	for _, s := range m.byID {
		n += s.sess.lastResident()
	}
	return n > budget
}

// fitsLocked reports whether s may reserve need now: it is first in line
// (or nobody waits), and the budget holds it beside what the others hold.
// With lone, it fits whenever no other session holds a reservation.
func (m *Manager) fitsLocked(s *managed, w *memWaiter, need int64, lone bool) bool {
	if len(m.mem.queue) > 0 && m.mem.queue[0] != w {
		return false
	}
	if lone {
		for o := range m.mem.holds {
			if o != s {
				return false
			}
		}
		return true
	}
	own := s.sess.lastResident()
	return m.committedLocked()-own+max(own, need) <= m.opts.MemoryBudgetBytes
}

// reserveMemory reserves room in the budget for an eval of s running req
// (see above); the returned function gives it back when the eval ends.
func (m *Manager) reserveMemory(ctx context.Context, s *managed, req Request) (func(), error) {
	if m.opts.MemoryBudgetBytes < 0 {
		return func() {}, nil
	}
	needs := evalMemory(s.sess, req)
	var need int64
	for _, n := range needs {
		need += n
	}
	start := time.Now()
	w := &memWaiter{need: need}
	m.mu.Lock()
	if m.mem.holds == nil {
		m.mem.holds = map[*managed]*memHold{}
	}
	var timeout <-chan time.Time
	for {
		if h := m.mem.holds[s]; h != nil {
			// Its session's reservation stands (a nested eval, or one
			// queued behind the running one): it shares it, grown by the
			// languages it runs that the reservation did not cover. A
			// nested eval cannot wait: the eval it runs inside waits for it.
			h.evals++
			h.cover(needs)
			m.mem.dequeueLocked(w)
			m.mu.Unlock()
			return func() { m.unreserve(s, h) }, nil
		}
		if m.fitsLocked(s, w, need, false) {
			break
		}
		if timeout == nil { // the first miss: join the line
			m.mem.queue = append(m.mem.queue, w)
			t := time.NewTimer(memoryWait)
			defer t.Stop()
			timeout = t.C
		}
		// Trim and evict idle sessions, for the first in line only, and
		// only when that can make room: every waiter sweeping at every
		// release measured and trimmed all idle sessions once per waiter
		// (100 clients on a budget for seven: 1,400 cells/s, not 9,000).
		if m.mem.queue[0] == w && m.overBudgetLocked() {
			m.mu.Unlock()
			m.sweepMemory(ctx)
			m.mu.Lock()
		}
		if m.mem.holds[s] != nil {
			continue
		}
		if m.fitsLocked(s, w, need, false) || m.fitsLocked(s, w, need, true) {
			break
		}
		changed := m.mem.changedLocked()
		m.mu.Unlock()
		var cause error
		expired := false
		select {
		case <-changed:
		case <-timeout:
			expired = true
		case <-ctx.Done():
			cause = ctx.Err()
		case <-m.stop:
			m.mu.Lock()
			m.mem.dequeueLocked(w)
			m.mu.Unlock()
			return nil, ErrClosed
		}
		m.mu.Lock()
		if m.closed {
			m.mem.dequeueLocked(w)
			m.mu.Unlock()
			return nil, ErrClosed
		}
		if (expired || cause != nil) && m.mem.holds[s] == nil && !m.fitsLocked(s, w, need, false) && !m.fitsLocked(s, w, need, true) {
			m.mem.dequeueLocked(w)
			m.mu.Unlock()
			return nil, &memoryBudgetError{budget: m.opts.MemoryBudgetBytes, need: need, waited: time.Since(start), cause: cause}
		}
	}
	m.mem.dequeueLocked(w)
	h := &memHold{evals: 1, langs: map[string]bool{}}
	h.cover(needs)
	m.mem.holds[s] = h
	m.mu.Unlock()
	return func() { m.unreserve(s, h) }, nil
}

// unreserve ends an eval's share of h. The room is given back without
// measuring the session first: a measurement of a JavaScript session walks
// its whole VM (milliseconds), and one after every eval cut serve's
// throughput from about 9,000 cells/s to 70 (BenchmarkLoad). The session
// counts as last measured until the sweep measures it again (it is marked
// dirty when its eval ends), so what an eval grew is seen late, not never.
func (m *Manager) unreserve(s *managed, h *memHold) {
	m.mu.Lock()
	h.evals--
	last := h.evals == 0
	m.mu.Unlock()
	if !last {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if h.evals == 0 && m.mem.holds[s] == h {
		delete(m.mem.holds, s)
		if m.mem.outside[s.sess] == s {
			delete(m.mem.outside, s.sess)
		}
		m.mem.notifyLocked()
	}
}

// EvalOutside runs req in sess, a session the manager does not hold
// (serve's one-shot runs and the profiles' temporary sessions), under the
// manager's memory budget as Eval runs its own: it reserves what sess may
// hold by the end of req's cells, by sess's own limits, and fails with
// ErrMemoryBudget when running cells leave no room. Without this, one-shot
// runs were a way past the budget: each may grow to its memory limit while
// the budget counted none of them.
func (m *Manager) EvalOutside(ctx context.Context, sess *Session, req Request) (*Result, error) {
	m.mu.Lock()
	if m.mem.outside == nil {
		m.mem.outside = map[*Session]*managed{}
	}
	k := m.mem.outside[sess]
	if k == nil {
		k = &managed{sess: sess} // id "": never in byID, so its hold counts
		m.mem.outside[sess] = k
	}
	m.mu.Unlock()
	done, err := m.reserveMemory(ctx, k, req)
	if err != nil {
		m.mu.Lock()
		if m.mem.holds[k] == nil && m.mem.outside[sess] == k {
			delete(m.mem.outside, sess)
		}
		m.mu.Unlock()
		return nil, err
	}
	defer done()
	return sess.Eval(ctx, req)
}

// RunCode is Sandbox.RunCode with the manager's sandbox, under its memory
// budget (EvalOutside): the one-shot run of serve's POST /v1/run.
func (m *Manager) RunCode(ctx context.Context, req RunCodeRequest) (*Execution, error) {
	r, err := req.Request()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(req.TempDir, "wasmeval-run-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: run code: %w", err)
	}
	defer os.RemoveAll(dir)
	sess, err := m.sb.NewSession(ctx, SessionOptions{Root: dir})
	if err != nil {
		return nil, err
	}
	defer sess.Close(context.WithoutCancel(ctx))
	return execute(ctx, r, req.OnOutput, func(ctx context.Context) (*Result, error) { return m.EvalOutside(ctx, sess, r) })
}
