package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/runtimes"
)

// Session is one agent's state: a session root and, per language, an
// instance whose state persists across cells and requests. Eval runs one
// request at a time; concurrent calls wait their turn, except while a cell
// waits in agent() or tool(): an Eval then runs at once, inside that cell
// (see Eval).
type Session struct {
	sb   *Sandbox
	opts SessionOptions
	sem  chan struct{} // held by the running Eval
	// calls answers the guests' host calls (files, tool, llm, agent).
	calls *hostcalls.Dispatcher
	// labels are the host's notes on the session (labels.go).
	labels sessionLabels

	// Guarded by sem, and by imu for the nested evals under it.
	imu       sync.Mutex
	instances map[string]runtimes.Instance
	fuelUsed  int64 // by all cells, against SessionOptions.FuelBudget; mu
	// nest is the running cells, for nested evals (nest.go).
	nest nesting
	// clocks are the timers of the cells, reused (cellclock.go).
	clocks cellClocks

	outputs outputStore

	mu      sync.Mutex
	closed  bool
	cancel  context.CancelCauseFunc // the running Eval's, or nil
	cleaned bool                    // instances closed

	resident atomic.Int64 // ResidentBytes as last measured

	fresh []string // languages a Fork could not copy (FreshLanguages)

	persist *sessionStore // its record in the manager's store, or nil (persist.go)

	bound *boundary // clocks, randomness and host calls (record.go)
}

// errCellTimeout is the cause of a cell's own deadline.
var errCellTimeout = errors.New("sandbox: cell timed out")

// errCellHardLimit is the cause of a cell stopped at its hard limit.
var errCellHardLimit = errors.New("sandbox: cell reached its hard time limit")

// Hard limits of a cell's run time, whatever its status events and host
// calls: HardLimitFactor times its timeout, at most MaxHardLimitSeconds.
const (
	HardLimitFactor     = 10
	MaxHardLimitSeconds = 600
)

// CellHardLimit is how long a cell whose timeout is timeoutSeconds may run
// in all: the timeout is an inactivity budget that status events restart
// and host calls hold, so without this limit a cell that logs in a loop
// would never end. It is HardLimitFactor times the timeout, at most
// MaxHardLimitSeconds, and never less than the timeout.
func CellHardLimit(timeoutSeconds int) time.Duration {
	secs := max(timeoutSeconds, min(HardLimitFactor*timeoutSeconds, MaxHardLimitSeconds))
	return time.Duration(secs) * time.Second
}

// Root returns the session root as an absolute path.
func (s *Session) Root() string { return s.opts.Root }

// Eval runs the request's cells in order and returns their result. Guest
// failures (an exception, a timeout) are data in the Result: the failing
// cell has status "error", the cells after it stay "pending", and
// Details.IsError is set. When ctx is cancelled while a cell runs, that
// cell ends as "cancelled" and Eval still returns the Result.
//
// A cell's timeout is an inactivity budget: each status event (log,
// phase, agent progress) starts it afresh and a host call in flight holds
// it. Whatever it does, a cell is stopped at CellHardLimit of its timeout.
//
// # Errors
//
// An invalid request is a *RequestError. Otherwise an error means the host
// could not run a cell: a runtime that failed to start (for Python in a
// binary built without the CPython artifact), an instance that failed, or a
// session used after Close (ErrClosed). The instance that failed is
// dropped, so the language starts afresh at its next cell. If ctx is done
// before Eval starts, or ends while Eval waits for another Eval of the
// session, Eval returns ctx.Err().
//
// # Nested evals
//
// While a cell of the session waits in agent() or tool(), an Eval does not
// wait for its turn: it runs at once inside that cell, one agent level
// deeper (as a sub-agent that shares its parent's session runs code). A
// cell in the waiting cell's language runs in its runtime state (its
// globals are there when agent() returns); it has its own timeout and is
// cancelled when the waiting cell ends. Evals nest at most
// hostcalls.MaxAgentDepth deep: one deeper fails with ErrNestedTooDeep.
func (s *Session) Eval(ctx context.Context, req Request) (*Result, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	parent, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	if parent != nil {
		return s.evalNestedTaped(ctx, req, parent) // record.go
	}
	defer s.release()

	evalCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	s.cancel = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cancel = nil
		s.mu.Unlock()
	}()
	n := s.tapeRequest(req)
	res, err := s.evalCells(evalCtx, req, s.opts.AgentDepth)
	s.endRequest(evalCtx) // per-call kernels end with their request
	s.finishRequest(n, res, err)
	return s.persistAfterEval(evalCtx, res, err) // saved before the answer (persist.go)
}

// evalCells runs the request's cells at agent depth depth.
func (s *Session) evalCells(evalCtx context.Context, req Request, depth int) (*Result, error) {
	cells := req.normalized()
	results := make([]CellResult, len(cells))
	sinks := make([]*cellSink, len(cells))
	bud := newBudget()
	for i, c := range cells {
		results[i] = CellResult{
			Index: i, Title: c.Title, Language: c.Language, Code: c.Code,
			Status: StatusPending, StatusEvents: []StatusEvent{},
		}
	}
	var truncs []Truncation
	for i, c := range cells {
		sink := newCellSink(i, bud)
		sinks[i] = sink
		r := &results[i]
		cellStarted(evalCtx, i, r)
		status, dur, err := s.runCell(evalCtx, c, sink, depth)
		r.Status = status
		r.DurationMs = dur.Milliseconds()
		if err != nil {
			cellEnded(evalCtx, i, r, sink.noted, err)
			return nil, fmt.Errorf("sandbox: cell %d: %w", i, err)
		}
		if status == StatusComplete {
			if note := cellVerdict(evalCtx, i); note != "" { // WithCellVerdict
				sink.note(note)
				status, r.Status = StatusError, StatusError
			}
		}
		r.ExitCode = intPtr(1)
		if status == StatusComplete {
			r.ExitCode = intPtr(0)
		}
		if sink.out.needsCut() {
			id := s.outputs.nextID()
			shown, tr := sink.out.cut(id)
			s.outputs.add(sink.out.full())
			tr.Cell = i
			truncs = append(truncs, tr)
			r.Output = shown
		} else {
			r.Output = string(sink.out.keep)
		}
		r.Markdown = sink.markdownText()
		r.StatusEvents = append(r.StatusEvents, sink.events...)
		cellEnded(evalCtx, i, r, sink.noted, nil)
		if status != StatusComplete {
			break
		}
	}
	return assemble(cells, results, sinks, truncs, bud), nil
}

// runCell runs one cell at agent depth depth. A returned error is a host
// failure. The cell is a frame that evals may nest in while it waits in
// agent() or tool(); it ends after they have.
func (s *Session) runCell(ctx context.Context, c Cell, sink *cellSink, depth int) (CellStatus, time.Duration, error) {
	// A language the sandbox or the session disables fails its cell
	// before any runtime starts.
	if note := s.disabledNote(c.Language); note != "" {
		sink.note(note)
		return StatusError, 0, nil
	}
	if depth == s.opts.AgentDepth { // a cell of a request, not nested: no other cell runs
		s.bound.cellStarts() // a deterministic session's clocks agree (recordclock.go)
	}
	ctx = s.beforeCell(ctx, c, sink) // the JavaScript journal, state a load could not bring back (persist.go)
	ctx, c = asRuntimeCell(ctx, c)
	fctx, fcancel := context.WithCancelCause(ctx)
	f := &frame{n: &s.nest, depth: depth, lang: c.Language, ctx: fctx}
	s.nest.push(f)
	defer func() {
		fcancel(errParentEnded)
		f.children.Wait()
		s.nest.pop(f)
	}()
	return s.runFrame(context.WithValue(fctx, frameKey{}, f), c, sink)
}

// runFrame is runCell's body.
func (s *Session) runFrame(ctx context.Context, c Cell, sink *cellSink) (CellStatus, time.Duration, error) {
	if s.replayBeforeStart(ctx, sink) { // record.go: recorded stopped before it started
		return StatusCancelled, 0, nil
	}
	use, note, err := s.useInstance(ctx, c)
	if err != nil {
		if ctx.Err() != nil {
			s.tapeStopBeforeStart(ctx, sink) // record.go
			sink.note(stopNote(ctx))
			return StatusCancelled, 0, nil
		}
		return "", 0, err
	}
	if note != "" {
		sink.note(note)
		return StatusError, 0, nil
	}
	// The timeout is an inactivity budget: each status event (log, phase,
	// agent progress) starts it afresh; output does not. The hard limit is
	// not restarted by anything, so a cell that logs in a loop (or keeps a
	// host call in flight) still ends.
	timeout := time.Duration(c.TimeoutSeconds) * time.Second
	cellCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	hardLimit := CellHardLimit(c.TimeoutSeconds)
	clock := s.clocks.take() // the session's reused timers (cellclock.go)
	timer, hard := clock.timeout, clock.hard
	act := &activity{timer: timer, timeout: timeout}
	clock.start(cancel, act, hardLimit)
	defer s.clocks.put(clock)
	defer clock.stop()
	cellCtx = context.WithValue(cellCtx, activityKey{}, act)
	// Evals nested in the cell are stopped with it and spend its timeout.
	frameOf(ctx).started(cellCtx, act)
	// The note is written only when fuel runs out: a Sprintf a cell is
	// not free on the eval line's path.
	fuel, fuelSession := c.Fuel, false
	if b := s.opts.FuelBudget; b > 0 && c.Language == "py" {
		left := b - s.fuelUsedNow()
		if left <= 0 {
			sink.note(fmt.Sprintf("fuel exhausted: the session's budget of %d units is used up", b))
			return StatusError, 0, nil
		}
		if fuel == 0 || left < fuel {
			fuel, fuelSession = left, true
		}
	}
	// Always set: a nested cell's context may carry the budget of the cell
	// it runs in, which is not its own.
	cellCtx = runtimes.WithFuelBudget(cellCtx, fuel)
	cellCtx = withCellLimits(cellCtx, c, s.opts.FuelBudget, s.fuelUsedNow(), hardLimit, timeout)
	cellCtx, replayedStop := s.replayStop(cellCtx, sink.index, c.Language, timer, hard)
	if replayedStop != nil { // the timers are stopped for good
		clock.stoppedByReplay()
	}
	start := time.Now()
	out, reentered, note, err := s.runIn(cellCtx, c, use, statusBundles{observed(ctx, sink.index, &activitySink{cellSink: sink, act: act})})
	dur := time.Since(start)
	if note != "" {
		sink.note(note)
		return StatusError, dur, nil
	}
	if err != nil {
		if cellCtx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			// A runtime that reports the interruption as an error; the
			// instance is still usable.
			out = runtimes.Outcome{Failed: true, Interrupted: true}
		} else {
			if !reentered { // a re-entered instance still runs the waiting cell
				s.dropInstance(c.Language)
			}
			return "", dur, fmt.Errorf("%s runtime: %w", c.Language, err)
		}
	}
	s.mu.Lock()
	s.fuelUsed += out.FuelUsed
	s.mu.Unlock()
	s.tapeStop(cellCtx, cancel, sink, out, replayedStop)
	switch {
	case !out.Failed && !out.Interrupted:
		return StatusComplete, dur, nil
	case out.FuelExhausted:
		if fuelSession {
			sink.note(fmt.Sprintf("fuel exhausted: the session's budget of %d units is used up", s.opts.FuelBudget))
		} else {
			sink.note(fmt.Sprintf("fuel exhausted: the cell used its budget of %d units", c.Fuel))
		}
		return StatusError, dur, nil
	case ctx.Err() != nil:
		sink.note(stopNote(ctx))
		return StatusCancelled, dur, nil
	case errors.Is(context.Cause(cellCtx), errCellTimeout):
		sink.note(fmt.Sprintf("timed out after %d %s%s", c.TimeoutSeconds, plural(c.TimeoutSeconds, "second"), nestedSpentNote(cellCtx)))
		return StatusError, dur, nil
	case errors.Is(context.Cause(cellCtx), errCellHardLimit):
		secs := int(hardLimit / time.Second)
		sink.note(fmt.Sprintf("timed out after %d %s, the hard limit for a cell whose timeout is %d %s (status events and host calls restart or hold the timeout, never this limit)",
			secs, plural(secs, "second"), c.TimeoutSeconds, plural(c.TimeoutSeconds, "second")))
		return StatusError, dur, nil
	}
	return StatusError, dur, nil
}

// activity is a cell's inactivity timer: each status event starts it
// afresh, and it is held while a host call (tool, llm, agent) is in flight,
// since waiting on the host is not the guest being idle.
type activity struct {
	mu       sync.Mutex
	timer    *time.Timer
	timeout  time.Duration
	inFlight int
	held     bool // stopped by the first call in flight
	// While evals run nested in the cell (nestclock.go).
	deadline time.Time     // when the timer fires, while it runs
	left     time.Duration // what was left when a call held it
	nested   int           // nested evals running in the cell now
	ranNest  bool          // one has run: the timeout is a budget now
	watch    stopWatch     // its output, counted for a tape's stop (record.go)
}

type activityKey struct{}

func (a *activity) touch() {
	a.mu.Lock()
	defer a.mu.Unlock()
	// Once fired, the timer stays fired: the cell is being stopped.
	if a.inFlight == 0 && !a.ranNest && a.timer.Stop() {
		a.restartLocked(a.timeout)
	}
}

// hold stops the timer while a host call is in flight; the returned
// function, called when the call returns, starts it afresh.
func (a *activity) hold() func() {
	a.mu.Lock()
	a.inFlight++
	if a.inFlight == 1 && a.nested == 0 {
		a.pauseLocked()
	}
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.inFlight--
		if a.inFlight == 0 {
			a.resumeLocked()
		}
	}
}

// holdActivity holds the inactivity timer of the cell whose context ctx
// derives from, if any.
func holdActivity(ctx context.Context) func() {
	if a, _ := ctx.Value(activityKey{}).(*activity); a != nil {
		return a.hold()
	}
	return func() {}
}

// activitySink restarts the cell's inactivity timer on each status event.
type activitySink struct {
	*cellSink
	act *activity
}

func (a *activitySink) Status(kind, message string) {
	a.act.touch()
	a.cellSink.Status(kind, message)
}

func stopNote(ctx context.Context) string {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, ErrClosed):
		return "cancelled: the session was closed"
	case errors.Is(cause, errInterrupted):
		return "cancelled: interrupted"
	case errors.Is(cause, errParentEnded):
		return "cancelled: the cell this eval ran inside (it waited in agent() or tool()) ended"
	case errors.Is(cause, errParentStopped):
		return parentStoppedNote(cause)
	}
	return "cancelled"
}

// fuelUsedNow is the fuel all cells have used so far.
func (s *Session) fuelUsedNow() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fuelUsed
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// acquire takes sem, giving up when ctx ends while it waits.
func acquire(ctx context.Context, sem chan struct{}) error {
	select {
	case sem <- struct{}{}:
		return nil
	default:
	}
	select {
	case sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// safeRun keeps a panicking runtime from taking the host down.
func safeRun(ctx context.Context, inst runtimes.Instance, code string, sink runtimes.Sink) (out runtimes.Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panicked: %v", p)
		}
	}()
	return inst.Run(ctx, code, sink)
}

// instance returns the session's instance of lang, making it on first use.
// With reset, an existing instance is reset first; a failed reset replaces
// the instance with a new one, which is what a reset asks for.
func (s *Session) instance(ctx context.Context, lang string, reset bool) (runtimes.Instance, error) {
	s.imu.Lock()
	defer s.imu.Unlock()
	if inst, ok := s.instances[lang]; ok {
		if !reset {
			return inst, nil
		}
		err := inst.Reset(ctx)
		if err == nil {
			return inst, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		s.sb.opts.Logger.Warn("reset failed; starting a new instance", "language", lang, "err", err)
		s.dropInstanceLocked(lang)
	}
	rt, err := s.sessionRuntime(ctx, lang) // its Python backend's, its package layer's
	if err != nil {
		return nil, err
	}
	inst, err := rt.NewInstance(ctx, s.instanceOptions(lang))
	if err != nil {
		return nil, fmt.Errorf("starting the %s instance: %w", lang, err)
	}
	if u, ok := inst.(hostcalls.RootOwnerUser); ok { // a kernel as another user: the host's new files become its
		u.UseRootOwner(s.calls.FS().RootOwner())
	}
	s.instances[lang] = inst
	return inst, nil
}

func (s *Session) dropInstance(lang string) {
	s.imu.Lock()
	defer s.imu.Unlock()
	s.dropInstanceLocked(lang)
}

func (s *Session) dropInstanceLocked(lang string) {
	inst, ok := s.instances[lang]
	if !ok {
		return
	}
	delete(s.instances, lang)
	if lang == "js" && s.persist != nil {
		s.persist.jsPending.Store(false) // its state is gone, journal or not
	}
	// A fresh context: the cell's may be done, and Close must still run.
	if err := inst.Close(context.WithoutCancel(context.Background())); err != nil {
		s.sb.opts.Logger.Warn("closing an instance", "language", lang, "err", err)
	}
}

// release ends an Eval's hold on the session; after Close it frees the
// instances that Close could not wait for.
func (s *Session) release() {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		s.closeInstances()
	}
	<-s.sem
}

// closeInstances closes all instances; the caller holds sem.
func (s *Session) closeInstances() error {
	s.mu.Lock()
	if s.cleaned {
		s.mu.Unlock()
		return nil
	}
	s.cleaned = true
	s.mu.Unlock()
	var errs []error
	for lang, inst := range s.instances {
		if err := inst.Close(context.Background()); err != nil {
			errs = append(errs, fmt.Errorf("sandbox: closing the %s instance: %w", lang, err))
		}
		delete(s.instances, lang)
	}
	if err := s.calls.Close(); err != nil {
		errs = append(errs, fmt.Errorf("sandbox: closing the session root: %w", err))
	}
	errs = append(errs, s.closeTape())
	return errors.Join(errs...)
}

// Output returns the full text of a cut output, by the id that the cut
// output's marker line and Meta.Truncated give. Outputs are kept per
// session, up to a cap; past it the oldest are dropped and Output returns
// an error wrapping ErrOutputNotFound.
func (s *Session) Output(id string) (string, error) {
	return s.outputs.get(id)
}

// ResidentBytes is the host memory the session holds: its instances'
// (runtimes.Sizer: for Python its written guest pages and its checkpoint,
// for JavaScript its VM's walked size) and the cut outputs it keeps for
// Output. It measures now when the session is idle; while an Eval runs it
// returns the last measurement.
func (s *Session) ResidentBytes() int64 {
	n, _ := s.measure()
	return n
}

// Trim asks the session's instances to give back what memory they can
// while idle (freed guest pages to the OS; the checkpoint, which the next
// cell takes again) and returns ResidentBytes after it. While an Eval runs
// it does nothing and returns the last measurement. The Manager trims its
// sessions by itself (ManagerOptions.TrimIdleAfter).
func (s *Session) Trim(ctx context.Context) int64 {
	n, _ := s.trim(ctx)
	return n
}

// measure measures the instances if the session is idle; ok is false
// when it was not (the last measurement is returned).
func (s *Session) measure() (n int64, ok bool) {
	return s.sizeIdle(func(z runtimes.Sizer) int64 { return z.ResidentBytes() })
}

func (s *Session) trim(ctx context.Context) (n int64, ok bool) {
	return s.sizeIdle(func(z runtimes.Sizer) int64 { s.dropPersistCache(); return z.Trim(ctx) })
}

// sizeIdle sums f over the instances that are Sizers, holding sem so no
// Eval runs meanwhile; when sem is taken it returns the last sum.
func (s *Session) sizeIdle(f func(runtimes.Sizer) int64) (int64, bool) {
	select {
	case s.sem <- struct{}{}:
	default:
		return s.resident.Load(), false
	}
	defer func() { <-s.sem }()
	s.mu.Lock()
	gone := s.cleaned || s.closed
	s.mu.Unlock()
	if gone {
		s.resident.Store(0)
		return 0, true
	}
	n := s.outputs.bytes()  // cut outputs kept for output(id)
	n += s.pendingJSBytes() // a loaded VM not rebuilt yet (budgetload.go)
	for lang, inst := range s.instances {
		if z, ok := inst.(runtimes.Sizer); ok {
			n += safeSize(s.sb.opts.Logger, lang, z, f)
		}
	}
	s.resident.Store(n)
	return n, true
}

// safeSize keeps a panicking Sizer from taking the host down.
func safeSize(log *slog.Logger, lang string, z runtimes.Sizer, f func(runtimes.Sizer) int64) (n int64) {
	defer func() {
		if p := recover(); p != nil {
			log.Error("measuring an instance panicked", "language", lang, "panic", p)
			n = 0
		}
	}()
	return max(0, f(z))
}

// lastResident is ResidentBytes as last measured, without measuring.
func (s *Session) lastResident() int64 { return s.resident.Load() }

// Close cancels a running Eval, waits for it to end and frees the session's
// instances. If ctx ends first, Close returns ctx.Err() and the instances
// are freed when the Eval ends. Closing again does nothing.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.cancel != nil {
		s.cancel(ErrClosed)
	}
	s.mu.Unlock()
	s.sb.forget(s)
	if err := acquire(ctx, s.sem); err != nil {
		return fmt.Errorf("sandbox: closing a session: %w", err)
	}
	defer func() { <-s.sem }()
	return s.closeInstances()
}

// assemble builds the Result from the cells' records and sinks.
func assemble(cells []Cell, results []CellResult, sinks []*cellSink, truncs []Truncation, bud *budget) *Result {
	d := Details{
		Cells:        results,
		Language:     cells[0].Language,
		Languages:    []string{},
		JSONOutputs:  []json.RawMessage{},
		Images:       []Image{},
		StatusEvents: []StatusEvent{},
		Meta:         Meta{Truncated: truncs},
	}
	if bud.dropped != (Dropped{}) {
		dropped := bud.dropped
		d.Meta.Dropped = &dropped
	}
	imagesPerCell := make([]int, len(cells))
	for i, c := range cells {
		if !contains(d.Languages, c.Language) {
			d.Languages = append(d.Languages, c.Language)
		}
		if st := results[i].Status; st == StatusError || st == StatusCancelled {
			d.IsError = true
		}
		sink := sinks[i]
		if sink == nil {
			continue
		}
		imagesPerCell[i] = len(sink.images)
		d.Images = append(d.Images, sink.images...)
		d.JSONOutputs = append(d.JSONOutputs, sink.jsons...)
		d.StatusEvents = append(d.StatusEvents, sink.events...)
	}
	return &Result{Content: buildContent(results, imagesPerCell, d.Images), Details: d}
}
