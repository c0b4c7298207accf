package sandbox

import (
	"context"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/tape"
	"github.com/wasmeval/wasmeval/wasm/python"
)

// This file is the session's boundary with the world, for deterministic
// runs, recording and replay (SessionOptions.Deterministic, Record and
// Replay): every clock the guest reads, every random byte and every host
// call passes through it.

// DeterministicEpoch is where a deterministic session's wall clock starts.
var DeterministicEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// DeterministicStep is how far a deterministic session's clocks advance
// at each read of either (wall or monotonic).
const DeterministicStep = time.Millisecond

// deterministicSeed seeds a deterministic session's randomness.
var deterministicSeed = [32]byte([]byte("wasmeval deterministic seed v1.."))

// ReplayFeed feeds a replayed session what its guest read when it was
// recorded. The replay package implements it; SessionOptions.Replay takes
// it. Its methods may be called from several goroutines.
type ReplayFeed interface {
	// Now is the guest's next read of the wall clock.
	Now() time.Time
	// Nanotime is the guest's next read of the monotonic clock.
	Nanotime() int64
	// Read gives the guest's next random bytes.
	Read(p []byte) (int, error)
	// Call answers a host call: from the tape when it reached out of the
	// sandbox (tool, llm, agent), else by serve (files, output), checked
	// against the tape.
	Call(ctx context.Context, request []byte, serve func(context.Context, []byte) []byte) []byte
	// Stop says whether the request's cell of that index was interrupted
	// by its time limit when recorded: where (zero where the runtime
	// meters no fuel) and why (tape.CauseTimeout, tape.CauseHardLimit).
	Stop(cell int) (at runtimes.InterruptPoint, cause string, ok bool)
}

// boundary is what the session's instances read the world through.
type boundary struct {
	now      func() time.Time
	nanotime func() int64
	sleep    func(ns int64) bool
	rand     io.Reader
	call     func(ctx context.Context, request []byte) []byte

	tape     *tape.Writer // nil when not recording
	mu       sync.Mutex
	requests int // requests recorded so far, nested ones included
}

// virtualClock is a deterministic session's clock: each read of either
// clock advances both by DeterministicStep.
type virtualClock struct {
	mu    sync.Mutex
	reads int64
	slept time.Duration // by the guest's sleeps, which do not wait
}

func (c *virtualClock) tick() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	return time.Duration(c.reads)*DeterministicStep + c.slept
}

// sleep moves the clock on by a guest's sleep instead of waiting.
func (c *virtualClock) sleep(ns int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept += time.Duration(max(ns, 0))
	return true
}

func (c *virtualClock) now() time.Time { return DeterministicEpoch.Add(c.tick()) }
func (c *virtualClock) nanotime() int64 {
	return int64(c.tick())
}

// lockedReader makes a reader safe for concurrent use.
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}

// startBoundary sets the session's boundary up from its options and, when
// recording, writes the tape's header and the root's entries.
func (s *Session) startBoundary() error {
	o := &s.opts
	b := &boundary{now: o.Now, rand: o.Rand, call: s.calls.Call}
	switch {
	case o.Replay != nil:
		b.now, b.nanotime, b.rand = o.Replay.Now, o.Replay.Nanotime, o.Replay
		b.sleep = func(int64) bool { return true } // the clocks come from the tape
		feed, serve := o.Replay, s.calls.Call
		b.call = func(ctx context.Context, req []byte) []byte {
			// As sessionHost does: while tool() or agent() waits, evals of
			// the session (the tape's nested requests) run inside the cell.
			if f := frameOf(ctx); f != nil && waitsForEvals(req) {
				defer f.hold()()
			}
			return feed.Call(ctx, req, serve)
		}
	case o.Deterministic:
		c := &virtualClock{}
		if b.now == nil {
			b.now = c.now
		}
		b.nanotime = c.nanotime
		if o.Now == nil {
			b.sleep = c.sleep
		}
		if b.rand == nil {
			b.rand = &lockedReader{r: rand.NewChaCha8(deterministicSeed)}
		}
	}
	if o.Record == nil {
		s.bound = b
		return nil
	}
	w, err := tape.NewWriter(o.Record)
	if err != nil {
		return err
	}
	if b.now == nil {
		b.now = time.Now
	}
	if b.nanotime == nil {
		start := time.Now()
		b.nanotime = func() int64 { return int64(time.Since(start)) }
	}
	if b.rand == nil {
		b.rand = crand.Reader
	}
	b.tape = w
	now, nanotime, rnd, call := b.now, b.nanotime, b.rand, b.call
	b.now = func() time.Time {
		// Without its monotonic reading: the guest's differences of times
		// (JavaScript's performance.now) are then what replay computes.
		t := now().Round(0)
		ns := t.UnixNano()
		w.Write(tape.Record{Type: tape.TypeClock, Clock: tape.ClockWall, NS: &ns})
		return t
	}
	b.nanotime = func() int64 {
		ns := nanotime()
		w.Write(tape.Record{Type: tape.TypeClock, Clock: tape.ClockMono, NS: &ns})
		return ns
	}
	b.rand = readerFunc(func(p []byte) (int, error) {
		n, err := rnd.Read(p)
		if n > 0 {
			w.Write(tape.Record{Type: tape.TypeRand, Data: append([]byte(nil), p[:n]...)})
		}
		return n, err
	})
	b.call = func(ctx context.Context, req []byte) []byte {
		ans := call(ctx, req)
		w.Write(tape.Record{Type: tape.TypeCall, Call: compactJSON(req), Answer: compactJSON(ans)})
		return ans
	}
	s.bound = b
	h := &tape.Header{
		Format:         tape.FormatVersion,
		Wasmeval:       buildVersion(),
		PythonArtifact: python.Sum(),
		PythonInputs:   python.Inputs(),
		Root:           o.Root,
		Env:            o.Env,
		Options: tape.Options{
			Deterministic:    o.Deterministic,
			MemoryLimitBytes: o.MemoryLimitBytes,
			Checkpoints:      o.Checkpoints,
			FuelBudget:       o.FuelBudget,
			AgentDepth:       o.AgentDepth,
			DiskQuotaBytes:   o.DiskQuotaBytes,
			DiskQuotaFiles:   o.DiskQuotaFiles,
			Languages:        o.Languages,
		},
	}
	if h.Env == nil {
		h.Env = map[string]string{}
	}
	if err := w.Write(tape.Record{Type: tape.TypeHeader, Header: h}); err != nil {
		return err
	}
	if err := tape.WriteRoot(w, o.Root, 0); err != nil {
		return err
	}
	return w.Flush()
}

type readerFunc func(p []byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// compactJSON is b without insignificant space, so that a tape line stays
// one line; b itself when it is not JSON (it is then quoted).
func compactJSON(b []byte) json.RawMessage {
	var v json.RawMessage
	if json.Unmarshal(b, &v) == nil {
		if c, err := json.Marshal(v); err == nil {
			return c
		}
	}
	q, _ := json.Marshal(string(b))
	return q
}

// buildVersion is the module version and VCS revision the binary was built
// from, as Go recorded them.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, st := range bi.Settings {
		if st.Key == "vcs.revision" {
			v += " " + st.Value
		}
	}
	return v
}

// instanceOptions are the options of a new instance of the session.
func (s *Session) instanceOptions() runtimes.InstanceOptions {
	b := s.bound
	return runtimes.InstanceOptions{
		Root:             s.opts.Root,
		Env:              s.opts.Env,
		Now:              b.now,
		Nanotime:         b.nanotime,
		Sleep:            b.sleep,
		Rand:             b.rand,
		MemoryLimitBytes: s.opts.MemoryLimitBytes,
		Checkpoints:      s.opts.Checkpoints,
		Call:             b.call,
		DiskQuota:        s.calls.DiskQuota(),
		CallBudget:       s.calls.CallBudget(),
	}
}

// tapeRequest records a top-level request; it returns its number, or 0
// when the session does not record.
func (s *Session) tapeRequest(req Request) int {
	b := s.bound
	if b == nil || b.tape == nil {
		return 0
	}
	return s.tapeRequestAs(req, false)
}

// tapeNestedRequest records a request run inside a waiting cell.
func (s *Session) tapeNestedRequest(req Request) int {
	b := s.bound
	if b == nil || b.tape == nil {
		return 0
	}
	return s.tapeRequestAs(req, true)
}

func (s *Session) tapeRequestAs(req Request, nested bool) int {
	b := s.bound
	b.mu.Lock()
	b.requests++
	n := b.requests
	b.mu.Unlock()
	s.nestedTape.Store(int64(n), nested)
	data, err := json.Marshal(req)
	if err != nil {
		s.sb.opts.Logger.Warn("recording a request", "err", err)
		return n
	}
	if err := b.tape.Write(tape.Record{Type: tape.TypeRequest, N: n, Nested: nested, Request: data}); err != nil {
		s.sb.opts.Logger.Warn("recording a request", "err", err)
	}
	return n
}

// finishRequest ends a top-level request: in a deterministic session the
// cells' durations (wall-clock time) are zero; when recording, the result
// of request n is recorded and the tape flushed, so that what is recorded
// survives a crash of the process.
func (s *Session) finishRequest(n int, res *Result, evalErr error) {
	if res != nil && (s.opts.Deterministic || s.opts.Replay != nil) {
		for i := range res.Details.Cells {
			res.Details.Cells[i].DurationMs = 0
		}
	}
	if n == 0 {
		return
	}
	w := s.bound.tape
	nested, _ := s.nestedTape.LoadAndDelete(int64(n))
	rec := tape.Record{Type: tape.TypeResult, N: n, Nested: nested == true}
	if evalErr != nil {
		rec.Error = evalErr.Error()
	} else if data, err := MarshalResult(res); err == nil {
		rec.Result = data
	} else {
		rec.Error = fmt.Sprintf("the result could not be encoded: %v", err)
	}
	if err := w.Write(rec); err != nil {
		s.sb.opts.Logger.Warn("recording a result", "err", err)
	}
	if nested == true {
		return // the enclosing request's end flushes
	}
	if err := w.Flush(); err != nil {
		s.sb.opts.Logger.Warn("flushing the tape", "err", err)
	}
}

// closeTape ends the tape's zstd frame, and closes a tape file the
// session owns (ManagerOptions.RecordDir).
func (s *Session) closeTape() error {
	if s.bound == nil || s.bound.tape == nil {
		return nil
	}
	err := s.bound.tape.Close()
	if cerr := closeRecord(s.opts); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sandbox: closing the tape: %w", err)
	}
	return nil
}

// MarshalResult is the JSON of a result as a tape holds it and replay
// compares it: the cells' durations, which no replay reproduces, are zero.
func MarshalResult(res *Result) ([]byte, error) {
	cp := *res
	cp.Details.Cells = append([]CellResult(nil), res.Details.Cells...)
	for i := range cp.Details.Cells {
		cp.Details.Cells[i].DurationMs = 0
	}
	return json.Marshal(&cp)
}

// replayStop arms a replayed cell's recorded stop by its time limit: in
// Python, the interrupt comes at the recorded fuel instead of by the
// clock, so the same traceback comes out; the real timers are stopped.
// It returns the cause to give the cell's context once it stopped.
func (s *Session) replayStop(ctx context.Context, cell int, lang string, timers ...*time.Timer) (context.Context, error) {
	if s.opts.Replay == nil {
		return ctx, nil
	}
	at, cause, ok := s.opts.Replay.Stop(cell)
	if !ok || at.IsZero() || lang != "py" {
		return ctx, nil // JavaScript meters no fuel: its timers stay real
	}
	for _, t := range timers {
		t.Stop()
	}
	err := errCellTimeout
	if cause == tape.CauseHardLimit {
		err = errCellHardLimit
	}
	return runtimes.WithInterruptAt(ctx, at), err
}

// tapeStop records a cell interrupted by its time limit (with the fuel at
// which the interrupt came), or, replaying, gives the cell's context the
// recorded cause once the replayed interrupt stopped it.
func (s *Session) tapeStop(ctx context.Context, cancel context.CancelCauseFunc, cell int, out runtimes.Outcome, replayed error) {
	if replayed != nil {
		if out.Interrupted {
			cancel(replayed)
		}
		return
	}
	b := s.bound
	if b == nil || b.tape == nil {
		return
	}
	cause := ""
	switch c := context.Cause(ctx); {
	case errors.Is(c, errCellTimeout):
		cause = tape.CauseTimeout
	case errors.Is(c, errCellHardLimit):
		cause = tape.CauseHardLimit
	default:
		return
	}
	if out.Interrupt.IsZero() && !out.Interrupted {
		return
	}
	if err := b.tape.Write(tape.Record{Type: tape.TypeStop, Cell: cell, Cause: cause, Checks: out.Interrupt.Checks, Sleeps: out.Interrupt.Sleeps, Fuel: out.Interrupt.Fuel}); err != nil {
		s.sb.opts.Logger.Warn("recording a stop", "err", err)
	}
}

// waitsForEvals says whether a host call is one during which evals of the
// session run inside the waiting cell (tool, agent).
func waitsForEvals(req []byte) bool {
	var r struct {
		Op string `json:"op"`
	}
	json.Unmarshal(req, &r)
	return r.Op == "tool" || r.Op == "agent"
}

// tapeFork marks a recorded session made by Fork: its state is not on its
// tape, so replay refuses it with a clear error.
func (s *Session) tapeFork() {
	b := s.bound
	if b == nil || b.tape == nil {
		return
	}
	if err := b.tape.Write(tape.Record{Type: tape.TypeFork}); err != nil {
		s.sb.opts.Logger.Warn("recording a fork", "err", err)
	}
	if err := b.tape.Flush(); err != nil {
		s.sb.opts.Logger.Warn("flushing the tape", "err", err)
	}
}
