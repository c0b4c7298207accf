package sandbox

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
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
// Running sessions count at their reservation, idle ones at their charge
// (memAcct: their last measurement, or an upper bound of what evals since
// added). An eval that does not fit waits for running evals to end, up to
// memoryWait or until its context ends, in the order the evals came; then
// it fails with ErrMemoryBudget. The sweeper measures, trims and evicts
// idle sessions to make room for the first in line when waiting cannot
// (memRoomLocked), and evicts idle sessions whenever their charges pass
// the budget. An
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

// memReserve is the manager's reservations of its memory budget, and its
// running totals of what the sessions are charged, guarded by Manager.mu.
type memReserve struct {
	holds   map[*managed]*memHold
	outside map[*Session]*managed // the keys of EvalOutside's sessions in holds
	queue   []*memWaiter          // evals waiting for room, oldest first
	// urgent is set by the first eval in line once it has waited
	// sweepGrace with no eval ending meanwhile: the sweep then makes room
	// for it from idle sessions, evicting if need be, rather than let it
	// wait for running evals. released is when an eval last ended.
	urgent   bool
	released time.Time
	// pending are sessions whose charge is their reservation (no bound
	// known without measuring them), for the sweep to measure.
	pending []*managed

	// The totals (memAcct): total is what the budget holds (each listed
	// session at its charge or its reservation if more, each other held
	// session at its reservation), sizes the listed sessions' charges,
	// excess what their charges add to their last measurements, held the
	// reservations. counted are the sessions that add to them.
	total, sizes, excess, held int64
	counted                    map[*managed]bool
}

// memAcct is a managed session's charge in the memory budget, guarded by
// Manager.mu. A session is charged what it was last measured to hold
// while no eval has run in it since (exact); after an eval, until it is
// measured again, an upper bound: its instances' own (a JavaScript VM's
// last walk plus what the process allocated while its cells ran:
// runtimes/js SizeBound; a Python instance's linear memory size and
// checkpoint, with what its pending take may add: runtimes/python
// SizeBound), or, where an instance has none (the Jupyter backend), the
// eval's reservation if that is more than its charge. So what an eval
// grew counts as soon as it ends, without measuring the session then
// (measuring a Python session after every eval was 27% of serve's CPU
// per trivial cell, issue 15).
type memAcct struct {
	size  int64  // its charge while idle
	base  int64  // its last measurement (size-base is what evals since may have added)
	exact bool   // measured, and no eval since
	gen   uint64 // counts its reservations: a measurement taken before one is stale
	// what it adds to memReserve's totals now
	inTotal, inSizes, inExcess, inHeld int64
}

// boundedSizer is an instance that knows an upper bound of the memory it
// holds without measuring it, and whether that bound is its size
// (runtimes/js: its last walk, when no cell has run since).
type boundedSizer interface {
	SizeBound() (n int64, exact bool)
}

// sizeBound is an upper bound of what s holds, from its instances' own
// bounds, known without measuring: ok is false when an eval runs in s or
// one of its instances has no bound (then it must be measured).
func (s *Session) sizeBound() (n int64, exact, ok bool) {
	select {
	case s.sem <- struct{}{}:
	default:
		return 0, false, false
	}
	defer func() { <-s.sem }()
	s.mu.Lock()
	gone := s.cleaned || s.closed
	s.mu.Unlock()
	if gone {
		return 0, true, true
	}
	n, exact = s.outputs.bytes()+s.pendingJSBytes(), true
	for _, inst := range s.instances {
		switch z := inst.(type) {
		case boundedSizer:
			b, e := z.SizeBound()
			n += max(b, 0)
			exact = exact && e
		case runtimes.Sizer:
			return 0, false, false
		}
	}
	return n, exact, true
}

// recountLocked brings the totals up to date with s's charge, its
// reservation and whether the manager lists it: O(1), on every change.
func (m *Manager) recountLocked(s *managed) {
	var total, sizes, excess, held int64
	if s.id != "" && m.byID[s.id] == s {
		total, sizes = s.mem.size, s.mem.size
		if !s.mem.exact {
			excess = max(s.mem.size-s.mem.base, 0)
		}
	}
	if h := m.mem.holds[s]; h != nil {
		total, held = max(total, h.bytes), h.bytes
	}
	a, r := &s.mem, &m.mem
	drop := total < a.inTotal
	r.total += total - a.inTotal
	r.sizes += sizes - a.inSizes
	r.excess += excess - a.inExcess
	r.held += held - a.inHeld
	a.inTotal, a.inSizes, a.inExcess, a.inHeld = total, sizes, excess, held
	if total|sizes|excess|held != 0 {
		if r.counted == nil {
			r.counted = map[*managed]bool{}
		}
		r.counted[s] = true
	} else {
		delete(r.counted, s)
	}
	if drop {
		r.notifyLocked() // the first in line may fit now
	}
}

// reconcileLocked counts every session again: sessions a file other than
// this one drops from byID (cluster.go's Unload and Detach) or adds (a
// load from the store) are counted at the next sweep, within a second.
// O(sessions), once a sweep.
func (m *Manager) reconcileLocked() {
	for s := range m.mem.counted {
		m.recountLocked(s)
	}
	for _, s := range m.byID {
		m.recountLocked(s)
	}
}

// chargeLocked sets what s is charged: n as measured now (exact), or an
// upper bound of it.
func (m *Manager) chargeLocked(s *managed, n int64, exact bool) {
	s.mem.size, s.mem.exact = n, exact
	if exact {
		s.mem.base = n
	}
	m.recountLocked(s)
}

// measureIdle measures s with f while it is idle (f trims it too, when
// trim), and charges it what f found; it reports whether it did. The sweep
// measures only sessions not measured since their last eval; a trim may
// come after one (it gives Python's pages back).
func (m *Manager) measureIdle(s *managed, f func() (int64, bool), trim bool) bool {
	m.mu.Lock()
	gen, exact := s.mem.gen, s.mem.exact
	m.mu.Unlock()
	if !exact || !trim {
		measures.Add(1)
	}
	n, ok := f()
	if !ok {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.mem.gen != gen || s.busy != 0 {
		return false // an eval came meanwhile: its end charges it
	}
	m.chargeLocked(s, n, true)
	return true
}

// measures counts the measurements of sessions (a trim of one measured
// since its last eval is not one), for tests.
var measures atomic.Int64

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

// memWaiter is an eval waiting for room: need for session s. wake tells
// it to look again.
type memWaiter struct {
	need int64
	s    *managed
	wake chan struct{}
}

func (w *memWaiter) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// notifyLocked wakes the first eval in line: room came back. Only it may
// take room (in order); waking every waiter at every release made each
// release cost a wakeup per waiter (100 clients: tens of thousands a
// second, for nothing).
func (r *memReserve) notifyLocked() {
	if len(r.queue) > 0 {
		r.queue[0].poke()
	}
}

// heldLocked wakes the waiters of s, whose reservation now stands: they
// share it (an eval queued behind its session's running one).
func (r *memReserve) heldLocked(s *managed) {
	for _, w := range r.queue {
		if w.s == s {
			w.poke()
		}
	}
}

func (r *memReserve) dequeueLocked(w *memWaiter) {
	for i, v := range r.queue {
		if v == w {
			r.queue = append(r.queue[:i], r.queue[i+1:]...)
			if i == 0 {
				r.urgent = false
			}
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
// at their charge, running ones at their reservation or more. O(1): a
// running total (recountLocked).
func (m *Manager) committedLocked() int64 { return m.mem.total }

// sweepGrace is how long the first eval in line waits with no running
// eval ending before the sweep evicts idle sessions to make room for it.
var sweepGrace = 250 * time.Millisecond

// memRoomLocked is what the sweep should free: measure (bytes of charges
// that measuring idle sessions may give back) and evict (bytes that
// trimming, then evicting, idle sessions should give back). Three causes:
// the sessions' charges pass the budget (evict); the first eval in line
// does not fit, and waiting for running evals cannot make it fit (without
// them the sessions' charges still leave no room) or none has ended for
// sweepGrace (measure; evict too when evicting every idle session would
// make it fit); or what evals may have added since the last measurements
// passes a quarter of the budget (measure, down to an eighth, so that
// bounds that grow with every eval do not crowd running evals out).
func (m *Manager) memRoomLocked() (measure, evict int64) {
	budget := m.opts.MemoryBudgetBytes
	r := &m.mem
	if r.sizes > budget {
		evict = r.sizes - budget
	}
	if len(r.queue) > 0 {
		w := r.queue[0]
		own, ownSize := w.s.mem.inTotal, w.s.mem.inSizes
		short := r.total - own + max(own, w.need) - budget
		if short > 0 && (r.urgent || r.sizes-ownSize+max(ownSize, w.need) > budget) {
			need := w.need
			measure = max(measure, short)
			if r.held+need <= budget {
				evict = max(evict, short)
			}
		}
	}
	if r.excess > budget/4 {
		measure = max(measure, r.excess-budget/8)
	}
	return max(measure, evict), evict
}

// memoryLocked (sweepMu held) keeps the budget: it measures the sessions
// whose charge is their reservation, trims those idle past TrimIdleAfter
// (when trimIdle, the sweep of every second, which also recounts every
// session), and when memRoomLocked asks,
// measures idle sessions by what their charge may overstate, most first,
// each once, then trims and evicts idle ones by bytes. It returns how many
// it evicted. A session measured since its last eval is never measured
// again (a measurement of a JavaScript session walks its VM).
func (m *Manager) memoryLocked(ctx context.Context, trimIdle bool) int {
	if m.opts.MemoryBudgetBytes < 0 && !trimIdle {
		return 0
	}
	now := time.Now()
	var measure, trim []*managed
	m.mu.Lock()
	if trimIdle {
		m.reconcileLocked()
		for _, s := range m.byID {
			if s.busy != 0 {
				continue
			}
			if m.opts.TrimIdleAfter > 0 && !s.trimmed && now.Sub(s.lastUsed) >= m.opts.TrimIdleAfter {
				trim = append(trim, s)
			}
		}
	}
	measure = append(measure, m.mem.pending...)
	m.mem.pending = nil
	m.mu.Unlock()
	for _, s := range measure {
		m.mu.Lock()
		skip := s.busy != 0 || s.mem.exact || m.byID[s.id] != s
		m.mu.Unlock()
		if !skip {
			m.measureIdle(s, s.sess.measure, false)
		}
	}
	for _, s := range trim {
		m.trim(ctx, s)
	}
	if m.opts.MemoryBudgetBytes < 0 {
		return 0
	}
	m.mu.Lock()
	room, evictRoom := m.memRoomLocked()
	if room <= 0 {
		m.mu.Unlock()
		return 0
	}
	// Measure the idle sessions whose charge may overstate them most.
	var idle []*managed
	for _, s := range m.byID {
		if s.busy == 0 && !s.mem.exact {
			idle = append(idle, s)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(idle, func(a, b *managed) int { return cmp.Compare(b.mem.size-b.mem.base, a.mem.size-a.mem.base) })
	for _, s := range idle {
		m.mu.Lock()
		room, evictRoom = m.memRoomLocked()
		m.mu.Unlock()
		if room <= 0 {
			return 0
		}
		m.measureIdle(s, s.sess.measure, false)
	}
	if evictRoom <= 0 {
		return 0
	}
	// Still short: trim every idle session, largest first, while short.
	m.mu.Lock()
	idle = idle[:0]
	for _, s := range m.byID {
		if s.busy == 0 && !s.trimmed {
			idle = append(idle, s)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(idle, func(a, b *managed) int { return cmp.Compare(b.mem.size, a.mem.size) })
	for _, s := range idle {
		m.mu.Lock()
		_, evictRoom = m.memRoomLocked()
		m.mu.Unlock()
		if evictRoom <= 0 {
			return 0
		}
		m.trim(ctx, s)
	}
	// Still short: evict by bytes, owner first.
	var evict []*managed
	m.mu.Lock()
	for {
		if _, short := m.memRoomLocked(); short <= 0 {
			break
		}
		v := m.bytesVictimLocked()
		if v == nil {
			break
		}
		delete(m.byID, v.id)
		m.recountLocked(v)
		evict = append(evict, v)
	}
	m.mu.Unlock()
	m.dropAll(ctx, evict, evictedForMemory)
	return len(evict)
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
	own := s.mem.inTotal
	return m.committedLocked()-own+max(own, need) <= m.opts.MemoryBudgetBytes
}

// kickSweep asks the sweeper to keep the budget now.
func (m *Manager) kickSweep() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
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
	w := &memWaiter{need: need, s: s, wake: make(chan struct{}, 1)}
	m.mu.Lock()
	if m.mem.holds == nil {
		m.mem.holds = map[*managed]*memHold{}
	}
	var timeout, grace <-chan time.Time
	var graceTimer *time.Timer
	for {
		if h := m.mem.holds[s]; h != nil {
			// Its session's reservation stands (a nested eval, or one
			// queued behind the running one): it shares it, grown by the
			// languages it runs that the reservation did not cover. A
			// nested eval cannot wait: the eval it runs inside waits for it.
			h.evals++
			h.cover(needs)
			s.mem.gen++
			m.recountLocked(s)
			m.mem.dequeueLocked(w)
			m.mu.Unlock()
			return func() { m.unreserve(s, h) }, nil
		}
		if m.fitsLocked(s, w, need, false) || m.fitsLocked(s, w, need, true) && timeout != nil {
			break
		}
		if timeout == nil { // the first miss: join the line
			m.mem.queue = append(m.mem.queue, w)
			t := time.NewTimer(memoryWait)
			defer t.Stop()
			timeout = t.C
			graceTimer = time.NewTimer(sweepGrace)
			defer graceTimer.Stop()
			grace = graceTimer.C
			continue // it may be first in line: then lone may hold
		}
		// The first in line has the sweeper make room from idle sessions
		// when waiting for running evals cannot, or once it has waited
		// sweepGrace (memRoomLocked). The sweep runs on the sweeper's
		// goroutine: a measurement of a JavaScript session walks its VM,
		// and no eval waits for that.
		if m.mem.queue[0] == w {
			m.kickSweep()
		}
		m.mu.Unlock()
		var cause error
		expired := false
		select {
		case <-w.wake:
		case <-grace:
			// Urgent once no eval has ended for sweepGrace: running
			// evals that keep ending make room soon; a long one may not
			// within memoryWait, and evicting idle sessions then does.
			m.mu.Lock()
			if quiet := time.Since(m.mem.released); quiet < sweepGrace {
				graceTimer.Reset(sweepGrace - quiet)
			} else if len(m.mem.queue) > 0 && m.mem.queue[0] == w {
				m.mem.urgent = true
				grace = nil
			} else {
				graceTimer.Reset(sweepGrace)
			}
			m.mu.Unlock()
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
	m.mem.heldLocked(s)
	s.mem.gen++
	m.recountLocked(s)
	m.mu.Unlock()
	return func() { m.unreserve(s, h) }, nil
}

// unreserve ends an eval's share of h. When it was the last, the session
// is charged an upper bound of what it holds now, known without measuring
// it (memAcct): a measurement of a JavaScript session walks its whole VM
// (milliseconds), and one after every eval cut serve's throughput from
// about 9,000 cells/s to 70 (BenchmarkLoad). Its room goes back to the
// budget.
func (m *Manager) unreserve(s *managed, h *memHold) {
	m.mu.Lock()
	h.evals--
	last := h.evals == 0
	m.mu.Unlock()
	if !last {
		return
	}
	var bound int64
	exact, ok := false, false
	if s.id != "" {
		bound, exact, ok = s.sess.sizeBound()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if h.evals != 0 || m.mem.holds[s] != h {
		return // another eval took the reservation meanwhile: its end charges
	}
	if s.id != "" {
		if ok {
			m.chargeLocked(s, bound, exact)
		} else {
			// No bound without measuring: charged its reservation until
			// the sweep measures it.
			m.chargeLocked(s, max(s.mem.size, h.bytes), false)
			m.mem.pending = append(m.mem.pending, s)
		}
	}
	delete(m.mem.holds, s)
	if m.mem.outside[s.sess] == s {
		delete(m.mem.outside, s.sess)
	}
	m.recountLocked(s)
	m.mem.released = time.Now()
	m.mem.notifyLocked()
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
