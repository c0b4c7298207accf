package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/callorder"
)

// Nested evals. The seed's agent() promises that a sub-agent shares its
// parent's session: while a cell waits in agent() (or tool()), an eval of
// the same session, which is how the sub-agent runs code, runs at once
// inside the waiting cell's runtime state, and what it defines is there
// when agent() returns. See docs/design.md, "Nested evals".
//
// Each running cell is a frame. A frame whose cell has an agent or tool
// call in flight is waiting; an Eval that arrives while a frame waits (the
// one its context came from, when the Host passed the agent call's context
// on, else the innermost) runs nested in it, one agent level deeper, with
// no turn to wait for. A cell of a nested eval whose language's instance is
// running (the waiting cell's, or one further out) runs inside that cell
// (runtimes.Reentrant); a cell of another language runs on its instance
// as usual. A frame ends only after the nested evals in it have: they are
// cancelled when its cell ends, and stopped when its cell is (its timeout,
// its hard limit, a cancel); the time they run spends the cell's timeout
// (nestclock.go); a stopped cell calls no more agents or tools.

// ErrNestedTooDeep is the error of an Eval that would nest deeper than
// hostcalls.MaxAgentDepth, as the seed caps sub-agent recursion.
var ErrNestedTooDeep = errors.New("sandbox: evals nest too deep")

// errParentEnded is the cause that stops a nested eval whose waiting cell
// ended first.
var errParentEnded = errors.New("sandbox: the cell this eval ran inside ended")

// errParentStopped is the cause that stops a nested eval whose waiting
// cell timed out or reached its hard limit (a parentStop).
var errParentStopped = errors.New("sandbox: the cell this eval ran inside was stopped")

// parentStop is errParentStopped with the waiting cell's cause. It does
// not unwrap to that cause: the nested cell itself did not time out (its
// tape records no stop of its own, as for errParentEnded).
type parentStop struct{ cause error }

func (e *parentStop) Error() string        { return errParentStopped.Error() + ": " + e.cause.Error() }
func (e *parentStop) Is(target error) bool { return target == errParentStopped }

// stoppedCall is the error of an agent or tool call (what it would start)
// made by a cell that is stopped, or nil: a cell whose timeout passed may
// catch its KeyboardInterrupt, but it starts no more sub-agents, whose
// evals would run inside it.
func stoppedCall(ctx context.Context, what string) error {
	if ctx.Err() == nil {
		return nil
	}
	return fmt.Errorf("this cell %s, and it starts no more %s", stopReason(context.Cause(ctx)), what)
}

// parentStoppedNote is the note of a nested cell stopped by cause, an
// errParentStopped.
func parentStoppedNote(cause error) string {
	var p *parentStop
	if errors.As(cause, &p) {
		cause = p.cause
	}
	return "cancelled: the cell this eval ran inside (it waited in agent() or tool()) " + stopReason(cause)
}

// stopReason says why a cell stopped by cause was.
func stopReason(cause error) string {
	switch {
	case errors.Is(cause, errCellTimeout):
		return "timed out"
	case errors.Is(cause, errCellHardLimit):
		return "reached its hard time limit"
	}
	return "was stopped"
}

// frame is a running cell, as nested evals see it.
type frame struct {
	n     *nesting
	depth int // the agent depth of the cell
	lang  string
	ctx   context.Context // done when the cell ends
	// waiting counts the cell's agent and tool calls in flight; guarded by
	// n.mu.
	waiting  int
	children sync.WaitGroup // nested evals running in the frame
	// end is when the cell ends at the latest (its hard limit, or that of
	// the cell it is nested in); guarded by n.mu. Zero until it starts.
	end time.Time
	// stop is done when the cell is stopped, before it ends; act is its
	// inactivity timer, which nested evals spend. Both are set by started,
	// under n.mu.
	stop context.Context
	act  *activity
	// turn is held by the eval nested in the cell that runs now, in a
	// recorded session (takeTurn); nil until asked for, under n.mu.
	turn chan struct{}
	// progress is where the cell is in its waits for host calls, in a
	// recorded or replayed session (record.go).
	progress atomic.Pointer[callorder.Progress]
}

// setProgress keeps the progress of the frame's cell. A nil f does
// nothing.
func (f *frame) setProgress(p *callorder.Progress) {
	if f != nil {
		f.progress.Store(p)
	}
}

// orderProgress is the progress of the frame's cell, or nil.
func (f *frame) orderProgress() *callorder.Progress { return f.progress.Load() }

// takeTurn waits until no other eval runs nested in the frame's cell and
// holds the turn until release is called: a recorded session runs the
// evals nested in one waiting cell one at a time (two sub-agents whose
// hosts eval at once), so that each one's records (its request, the
// clocks and random bytes its guest reads, its calls, its result) are
// one stretch of the tape, in the order they ran, which replay runs them
// in; run at once, their reads would interleave on the tape by timing.
// Evals nested in one of them (a sub-agent's sub-agent) wait for no
// turn of this frame: theirs is their own cell's. When the frame's cell
// ends meanwhile the eval goes on without a turn (evalNested stops it at
// once); when ctx ends, err is ctx's.
func (f *frame) takeTurn(ctx context.Context) (release func(), err error) {
	f.n.mu.Lock()
	if f.turn == nil {
		f.turn = make(chan struct{}, 1)
	}
	turn := f.turn
	f.n.mu.Unlock()
	select {
	case turn <- struct{}{}:
		return func() { <-turn }, nil
	case <-f.ctx.Done():
		return func() {}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// started records the running cell's context and clock, which nested
// evals in it answer to. A nil f does nothing.
func (f *frame) started(stop context.Context, act *activity) {
	if f == nil {
		return
	}
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	f.stop, f.act = stop, act
}

// outerKey carries, in a nested eval's context, the frame it runs in.
type outerKey struct{}

// outerOf returns the frame the nested eval of ctx runs in, or nil.
func outerOf(ctx context.Context) *frame {
	f, _ := ctx.Value(outerKey{}).(*frame)
	return f
}

// setEnd records when the frame's cell ends at the latest: at end, or
// when outer's does if that is sooner. It returns the time recorded.
func (f *frame) setEnd(end time.Time, outer *frame) time.Time {
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	if outer != nil && !outer.end.IsZero() && outer.end.Before(end) {
		end = outer.end
	}
	f.end = end
	return end
}

type frameKey struct{}

// frameOf returns the frame of the cell whose context ctx derives from.
func frameOf(ctx context.Context) *frame {
	f, _ := ctx.Value(frameKey{}).(*frame)
	return f
}

// nesting is a session's running cells.
type nesting struct {
	mu      sync.Mutex
	frames  []*frame       // outermost first
	running map[string]int // cells running, by language
	changed chan struct{}  // closed at the next change; nil until asked for
}

// notifyLocked wakes what waits for a change.
func (n *nesting) notifyLocked() {
	if n.changed != nil {
		close(n.changed)
		n.changed = nil
	}
}

func (n *nesting) changedLocked() <-chan struct{} {
	if n.changed == nil {
		n.changed = make(chan struct{})
	}
	return n.changed
}

// waitingLocked is the frame an eval runs in now, or nil: pref when it
// waits, else the innermost frame that waits. (One whose cell was stopped
// still waits until its call returns: an eval nested in it is stopped at
// once, rather than left to wait for the session's turn, which the cell
// holds until that call returns.)
func (n *nesting) waitingLocked(pref *frame) *frame {
	if pref != nil && pref.waiting > 0 && pref.ctx.Err() == nil {
		for _, f := range n.frames {
			if f == pref {
				return f
			}
		}
	}
	for i := len(n.frames) - 1; i >= 0; i-- {
		if f := n.frames[i]; f.waiting > 0 && f.ctx.Err() == nil {
			return f
		}
	}
	return nil
}

func (n *nesting) push(f *frame) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.frames = append(n.frames, f)
}

func (n *nesting) pop(f *frame) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, g := range n.frames {
		if g == f {
			n.frames = append(n.frames[:i], n.frames[i+1:]...)
			break
		}
	}
	n.notifyLocked()
}

// hold marks f as waiting for a host call until the returned function is
// called.
func (f *frame) hold() func() {
	n := f.n
	n.mu.Lock()
	f.waiting++
	n.notifyLocked()
	n.mu.Unlock()
	return func() {
		n.mu.Lock()
		f.waiting--
		n.notifyLocked()
		n.mu.Unlock()
	}
}

// NestedReady reports whether a cell of the session waits in agent() or
// tool(), so that an Eval now runs inside it at once rather than waiting
// for the running Eval to end; changed is closed at the next change of
// that. Servers use it to let a sub-agent's eval past the session's turn.
func (s *Session) NestedReady() (ready bool, changed <-chan struct{}) {
	s.nest.mu.Lock()
	defer s.nest.mu.Unlock()
	return s.nest.waitingLocked(nil) != nil, s.nest.changedLocked()
}

// enter waits until the Eval of ctx may run: nested in a waiting cell
// (its frame is returned, with the eval counted among its children), or
// on its own, holding sem (nil).
func (s *Session) enter(ctx context.Context) (*frame, error) {
	pref := frameOf(ctx)
	if pref != nil && pref.n != &s.nest {
		pref = nil // another session's cell
	}
	for {
		s.nest.mu.Lock()
		if f := s.nest.waitingLocked(pref); f != nil {
			if f.depth >= hostcalls.MaxAgentDepth {
				s.nest.mu.Unlock()
				return nil, fmt.Errorf("%w: a cell at depth %d waits in agent() or tool(), and an eval inside it would run at depth %d; evals and agents nest at most %d deep, so do the work in that cell instead",
					ErrNestedTooDeep, f.depth, f.depth+1, hostcalls.MaxAgentDepth)
			}
			f.children.Add(1)
			s.nest.mu.Unlock()
			return f, nil
		}
		changed := s.nest.changedLocked()
		s.nest.mu.Unlock()
		select {
		case s.sem <- struct{}{}:
			return nil, nil
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// evalNested runs req inside the waiting cell parent, one agent level
// deeper. It ends when parent's cell does, at the latest. n is its number
// on the session's tape (tapeNestedRequest), 0 when not recorded.
func (s *Session) evalNested(ctx context.Context, req Request, parent *frame, n int) (*Result, error) {
	defer parent.children.Done()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// It is stopped when the cell it runs in is, and its time is that
	// cell's too.
	s.nest.mu.Lock()
	pstop, act := parent.stop, parent.act
	s.nest.mu.Unlock()
	if pstop == nil {
		pstop = parent.ctx
	}
	stop := context.AfterFunc(pstop, func() {
		// A close, an interrupt or a cancel of the request stops it as
		// such; the cell's own timeout is the cell's, not this eval's.
		cause := context.Cause(pstop)
		if errors.Is(cause, errCellTimeout) || errors.Is(cause, errCellHardLimit) {
			cause = &parentStop{cause}
		}
		cancel(cause)
	})
	defer stop()
	defer act.nestedRun()()
	// Its cells' budget helper bounds their time by the parent's.
	ctx = context.WithValue(ctx, outerKey{}, parent)
	ctx = withTapeRequest(ctx, n) // record.go: its stops are its own on the tape
	return s.evalCells(ctx, req, parent.depth+1)
}

// errResetNested is the note of a nested cell that asks for a reset of the
// instance that runs the waiting cell.
const errResetNested = "reset is not possible here: this cell runs inside a cell of the same language that waits in agent() or tool(), whose state a reset would destroy"

// use is how a cell runs on its language's instance.
type use struct {
	inst    runtimes.Instance
	reenter bool   // nested in the instance's running cell
	done    func() // ends the use
}

// useInstance decides how cell c runs: on its language's instance
// (started if need be) when no cell of the language runs, or nested in the
// one that does. A note is a failure of the cell, to show in its output.
func (s *Session) useInstance(ctx context.Context, c Cell) (u use, note string, err error) {
	n := &s.nest
	n.mu.Lock()
	if n.running == nil {
		n.running = map[string]int{}
	}
	busy := n.running[c.Language] > 0
	n.running[c.Language]++
	n.mu.Unlock()
	u.done = func() {
		n.mu.Lock()
		n.running[c.Language]--
		n.notifyLocked()
		n.mu.Unlock()
	}
	if !busy {
		u.inst, err = s.instance(ctx, c.Language, c.Reset)
		if err != nil {
			u.done()
			return use{}, "", err
		}
		return u, "", nil
	}
	if c.Reset {
		u.done()
		return use{}, errResetNested, nil
	}
	s.imu.Lock()
	u.inst = s.instances[c.Language]
	s.imu.Unlock()
	if _, ok := u.inst.(runtimes.Reentrant); !ok {
		u.done()
		return use{}, fmt.Sprintf("the %s runtime cannot run a cell inside a cell that waits", c.Language), nil
	}
	u.reenter = true
	return u, "", nil
}

// runIn runs the cell as u says, directly or nested in the instance's
// running cell. A nested run that finds no cell to run in (it ended
// meanwhile, or a sibling's has not started yet) is tried again once
// something changed, on the instance as it is then.
func (s *Session) runIn(ctx context.Context, c Cell, u use, sink runtimes.Sink) (out runtimes.Outcome, reentered bool, note string, err error) {
	for {
		if !u.reenter {
			s.beginBeside(ctx) // record.go: a nested eval's wait, where it begins beside its cell
			out, err = safeRun(ctx, u.inst, c.Code, sink)
			u.done()
			return out, false, "", err
		}
		s.gateNested(ctx) // record.go: a replay's, until the recorded wait
		out, err = safeRunNested(ctx, u.inst.(runtimes.Reentrant), c.Code, sink)
		u.done()
		if !errors.Is(err, runtimes.ErrNoCellWaiting) {
			return out, true, "", err
		}
		// A change missed since is caught by the timer.
		s.nest.mu.Lock()
		changed := s.nest.changedLocked()
		s.nest.mu.Unlock()
		t := time.NewTimer(10 * time.Millisecond)
		select {
		case <-changed:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return runtimes.Outcome{Failed: true, Interrupted: true}, true, "", nil
		}
		t.Stop()
		if u, note, err = s.useInstance(ctx, c); err != nil || note != "" {
			return runtimes.Outcome{}, false, note, err
		}
	}
}

// safeRunNested keeps a panicking runtime from taking the host down.
func safeRunNested(ctx context.Context, inst runtimes.Reentrant, code string, sink runtimes.Sink) (out runtimes.Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panicked: %v", p)
		}
	}()
	return inst.RunNested(ctx, code, sink)
}

// NestedReady is Session.NestedReady for session id of any owner (a
// session that does not exist is never ready): servers that learn only
// the id before they queue an eval ask it.
func (m *Manager) NestedReady(id string) (ready bool, changed <-chan struct{}) {
	m.mu.Lock()
	s, ok := m.byID[id]
	m.mu.Unlock()
	if !ok {
		return false, nil
	}
	return s.sess.NestedReady()
}
