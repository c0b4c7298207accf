package sandbox

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/callorder"
	"github.com/wasmeval/wasmeval/runtimes/js"
	"github.com/wasmeval/wasmeval/tape"
	"github.com/wasmeval/wasmeval/wasm"
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
	// Start is the recorded session's time when it started (what file
	// changes are stamped with until the guest reads a clock); zero when
	// the tape does not say.
	Start() time.Time
	// Stop says whether the cell of that index was stopped when recorded
	// (by its time limit, an interrupt, a cancellation), and where: a
	// cell of the request being replayed (request 0), or of the nested
	// request of that number (an eval run inside a waiting cell, replayed
	// with a context from WithReplayedRequest).
	Stop(request, cell int) (ReplayStop, bool)
}

// ReplayOrdered is a ReplayFeed that answers a host call knowing its
// number among its cell's calls (made, from 1), and tells matched,
// before it answers, which of the request's recorded calls it is (its
// index, -1 for none): the runtime hands the guest the answers in the
// order the tape recorded them, which is the order the recorded guest
// took them (package callorder).
type ReplayOrdered interface {
	CallOrdered(ctx context.Context, request []byte, made int, serve func(context.Context, []byte) []byte, matched func(index int)) []byte
}

// ReplayTaken is a ReplayOrdered that is told when the replayed guest
// took the answer of the recorded call of that index (ReplayOrdered's
// matched), and in which of its cell's waits for host calls (a Python
// cell's call_wait, from 1; 0 for JavaScript, or an answer it never
// took), to compare with the wait the tape recorded.
type ReplayTaken interface {
	Taken(index, wait int)
}

// ReplayStopped is a ReplayFeed that is told where a replayed cell's
// stop came (Outcome.Interrupt: the fuel check or sleep, and the fuel
// used then), to compare it with the recorded one; request is as for
// ReplayFeed.Stop.
type ReplayStopped interface {
	Stopped(request, cell int, at runtimes.InterruptPoint)
}

// tapeRequestKey carries, in the context of a nested eval's cells, the
// number of its request on the tape (recorded or replayed), by which
// its cells' stops are recorded and looked up.
type tapeRequestKey struct{}

// WithReplayedRequest returns a context for the Eval that replays the
// tape's nested request n (a replay's ReplayFeed runs those): its cells'
// stops are those the tape recorded for request n (ReplayFeed.Stop).
func WithReplayedRequest(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, tapeRequestKey{}, n)
}

// ReplayedRequestOf is the number on the tape of the nested request
// (WithReplayedRequest) whose cell runs with ctx, or made a host call
// with it, or 0 for the request being replayed.
func ReplayedRequestOf(ctx context.Context) int { return tapeRequestOf(ctx) }

// tapeRequestOf is the number of the nested request whose cell runs with
// ctx, or 0 for a cell of the top-level request.
func tapeRequestOf(ctx context.Context) int {
	n, _ := ctx.Value(tapeRequestKey{}).(int)
	return n
}

// ReplayStop is where and why a recorded cell was stopped.
type ReplayStop struct {
	// At is where the runtime delivered the interrupt; zero where it
	// meters no fuel (JavaScript).
	At runtimes.InterruptPoint
	// Cause is one of tape's Cause constants.
	Cause string
	// Bytes is the output the cell had written when it was stopped, and
	// ByOutput says whether the tape recorded it: a cell without fuel is
	// then stopped once it has written as much, else by its real timers.
	Bytes    int64
	ByOutput bool
	// BeforeStart says the cell was stopped before any of its code ran,
	// while its runtime was still starting: the replay does not run it
	// (replayBeforeStart).
	BeforeStart bool
}

// boundary is what the session's instances read the world through.
type boundary struct {
	// free keeps the frozen requests and results of a recording
	// session's tape for reuse (record_free.go).
	free frozenFree

	now      func() time.Time
	nanotime func() int64
	sleep    func(ns int64) bool
	rand     io.Reader
	call     func(ctx context.Context, request []byte) []byte
	// of gives each runtime instance its clocks, by its language
	// (recordclock.go); nil: every instance reads now, nanotime and rand.
	of func(lang string) clocks

	tape     *tape.Writer // nil when not recording
	mu       sync.Mutex
	requests int // requests recorded so far, nested ones included
	// full is set once the tape has reached its limit
	// (SessionOptions.RecordLimitBytes), and fullNoted once a result has
	// said so; under mu.
	full, fullNoted bool
	// last is the wall time the guest read last (Unix nanoseconds), or the
	// session's start: in a deterministic, recorded or replayed session,
	// what the guest changes in the root is stamped with it, the same on
	// replay (wasm.SetRootClock). unstamp undoes that at close.
	last    atomic.Int64
	unstamp func()
	// history keeps a copy of the tape written to a writer that cannot
	// be read back, so that a fork's tape can start with it; nil when the
	// tape is the session's own file (read back by name) or too long.
	history *historyWriter
	// det are a deterministic session's virtual clocks and seeded random
	// streams, one of each by instance (recordclock.go), saved with it
	// (cluster_clock.go); nil when it is not deterministic.
	det map[string]*detInstance
}

// maxHistory bounds the copy of a tape a session keeps for its forks
// (boundary.history): the tape of a longer session is not copied, and a
// fork of it records only its own events (replay refuses such a tape,
// saying why).
const maxHistory = 32 << 20

// historyWriter passes a tape on to w and keeps a copy, up to maxHistory.
type historyWriter struct {
	w    io.Writer
	mu   sync.Mutex
	buf  []byte
	over bool
}

func (h *historyWriter) Write(p []byte) (int, error) {
	n, err := h.w.Write(p)
	h.mu.Lock()
	if !h.over {
		if len(h.buf)+n > maxHistory {
			h.over, h.buf = true, nil
		} else {
			h.buf = append(h.buf, p[:n]...)
		}
	}
	h.mu.Unlock()
	return n, err
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
		if r, ok := o.Replay.(ReplayReaders); ok {
			// Each instance its own recorded reads (tape format 8).
			b.of = func(lang string) clocks { return replayClocks(r, lang) }
		}
		b.sleep = func(int64) bool { return true } // the clocks come from the tape
		feed, serve := o.Replay, s.calls.Call
		b.call = func(ctx context.Context, req []byte) []byte {
			// As sessionHost does: while tool() or agent() waits, evals of
			// the session (the tape's nested requests) run inside the cell.
			if f := frameOf(ctx); f != nil && waitsForEvals(req) {
				defer f.hold()()
			}
			if t := callorder.TicketOf(ctx); t != nil {
				if o, ok := feed.(ReplayOrdered); ok {
					return o.CallOrdered(ctx, req, t.Made(), serve, replayMatched(feed, t))
				}
			}
			return feed.Call(ctx, req, serve)
		}
	case o.Deterministic:
		b.deterministic(o.Now, o.Rand) // each instance its own (recordclock.go)
	}
	s.bound = b
	if o.Record == nil {
		s.startStamps(time.Time{})
		return nil
	}
	return s.startTape(o.Record, nil)
}

// startStamps keeps the session's clock on the files its guest changes,
// in a deterministic, recorded or replayed session: from start (zero: the
// replay's recorded start, the virtual clock's epoch or now), then at the
// wall time the guest read last.
func (s *Session) startStamps(start time.Time) {
	o, b := &s.opts, s.bound
	if b.unstamp != nil || (!o.Deterministic && o.Replay == nil && o.Record == nil) {
		return // started already, or not wanted
	}
	switch {
	case !start.IsZero():
	case o.Replay != nil:
		start = o.Replay.Start()
		if start.IsZero() {
			start = DeterministicEpoch // a tape that does not say
		}
	case o.Deterministic && o.Now == nil:
		start = DeterministicEpoch
	default:
		start = b.now().Round(0)
	}
	b.last.Store(start.UnixNano())
	stamped := func(now func() time.Time) func() time.Time {
		return func() time.Time {
			t := now()
			b.last.Store(t.UnixNano())
			return t
		}
	}
	if of := b.of; of != nil {
		b.of = func(lang string) clocks {
			c := of(lang)
			c.now = stamped(c.now)
			return c
		}
	}
	b.now = stamped(b.now)
	b.unstamp = wasm.SetRootClock(o.Root, func() time.Time { return time.Unix(0, b.last.Load()).UTC() })
	call := b.call
	b.call = func(ctx context.Context, req []byte) []byte {
		ans := call(ctx, req)
		s.stampHelperWrite(req, ans)
		return ans
	}
}

// stampHelperWrite stamps a file the write or append helper changed with
// the session's clock, as the guest's own writes are.
func (s *Session) stampHelperWrite(req, ans []byte) {
	if !bytes.Contains(req, []byte(`"write"`)) && !bytes.Contains(req, []byte(`"append"`)) {
		return // most calls: not worth decoding
	}
	var r struct {
		Op   string `json:"op"`
		Path string `json:"path"`
	}
	if json.Unmarshal(req, &r) != nil || (r.Op != "write" && r.Op != "append") || bytes.Contains(ans, []byte(`"error"`)) {
		return
	}
	rel, err := s.calls.FS().Resolve(r.Op, r.Path)
	if err != nil {
		return
	}
	root, err := os.OpenRoot(s.opts.Root)
	if err != nil {
		return
	}
	defer root.Close()
	t := time.Unix(0, s.bound.last.Load())
	if fi, err := root.Lstat(rel); err == nil && fi.Mode().IsRegular() {
		root.Chtimes(rel, t, t)
		root.Chtimes(filepath.Dir(rel), t, t)
	}
}

// startTape records the session to out. A session made by a fork of src
// starts its tape with src's tape so far and a fork record (when src's
// tape can be had), so that its tape replays on its own; otherwise with
// its header and its root's entries.
func (s *Session) startTape(out io.Writer, src *Session) error {
	o := &s.opts
	b := s.bound
	var hist []byte
	if src != nil {
		hist = src.tapeSoFar()
	}
	if !o.ownRecord {
		b.history = &historyWriter{w: out}
		out = b.history
	}
	w, err := tape.NewWriter(out)
	if err != nil {
		return err
	}
	w.SetLimit(o.recordLimit())
	if b.now == nil {
		b.now = time.Now
	}
	// Before the clock is recorded: the start is the header's, not a read.
	s.startStamps(time.Time{})
	if b.nanotime == nil {
		start := time.Now()
		b.nanotime = func() int64 { return int64(time.Since(start)) }
	}
	if b.rand == nil {
		b.rand = crand.Reader
	}
	b.tape = w
	// Each instance's reads are recorded as its own (recordclock.go);
	// what reads the session's clocks but not through an instance reads
	// as the default reader.
	b.shared()
	b.of = recordedClocks(w, b.of)
	def := b.of(tape.DefaultReader)
	b.now, b.nanotime, b.rand = def.now, def.nanotime, def.rand
	call := b.call
	b.call = func(ctx context.Context, req []byte) []byte {
		ans := call(ctx, req)
		rec := tape.Record{Type: tape.TypeCall, Call: compactJSON(req), Answer: compactJSON(ans)}
		if t := callorder.TicketOf(ctx); t != nil {
			// Written when the guest takes its answer, so that the tape
			// holds the calls in the order the guest saw their answers,
			// which its replay hands them over in (in the same waits).
			rec.Made = t.Made()
			t.WhenTaken(func() {
				rec.Wait = t.Wait()
				w.Write(rec)
			})
			return ans
		}
		w.Write(rec)
		return ans
	}
	h := s.tapeHeader()
	h.Start = b.last.Load()
	if hist != nil {
		// The fork's requests go on numbering the source's.
		b.requests = src.bound.countRequests()
		if err := w.Append(hist); err != nil {
			return err
		}
		if err := w.Write(tape.Record{Type: tape.TypeFork, Header: h}); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := w.Write(tape.Record{Type: tape.TypeHeader, Header: h}); err != nil {
		return err
	}
	if err := tape.WriteRoot(w, o.Root, 0); err != nil {
		return err
	}
	if src != nil {
		// Without the source's tape, the fork's starting state is not on
		// it: replay refuses it, saying why.
		if err := w.Write(tape.Record{Type: tape.TypeFork}); err != nil {
			return err
		}
	}
	return w.Flush()
}

// tapeHeader is the header of the session's tape.
func (s *Session) tapeHeader() *tape.Header {
	o := &s.opts
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
	if fi, err := os.Stat(o.Root); err == nil {
		h.RootMTime = fi.ModTime().UnixNano()
	}
	if dir, preload := s.layer(); dir != "" {
		l, err := layerDigest(dir, preload)
		if err != nil {
			s.sb.opts.Logger.Warn("recording the package layer", "err", err)
		}
		h.Packages = l
	}
	return h
}

// layer is the package layer the session's Python runs on, and its
// preload list (SessionOptions.Packages and Preload over the Sandbox's).
func (s *Session) layer() (string, []string) {
	o := &s.opts
	switch {
	case o.Packages == "" && o.Preload == nil:
		return s.sb.opts.Packages, s.sb.opts.Preload
	case o.Packages == "":
		return s.sb.opts.Packages, o.Preload
	}
	return o.Packages, o.Preload
}

// layerDigests caches tape.LayerDigest by layer and preload list: a layer
// is read once per process, not at each recorded session.
var layerDigests sync.Map // string -> *tape.Layer

func layerDigest(dir string, preload []string) (*tape.Layer, error) {
	key := dir + "\x00" + strings.Join(preload, ",")
	if l, ok := layerDigests.Load(key); ok {
		return l.(*tape.Layer), nil
	}
	l, err := tape.LayerDigest(dir, preload)
	if err != nil {
		return nil, err
	}
	layerDigests.Store(key, l)
	return l, nil
}

// countRequests is how many requests the boundary has recorded.
func (b *boundary) countRequests() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.requests
}

// tapeSoFar is the session's tape up to its last finished request, or nil
// when it is not recorded or cannot be had (a writer that cannot be read
// back, past maxHistory).
func (s *Session) tapeSoFar() []byte {
	b := s.bound
	if b == nil || b.tape == nil {
		return nil
	}
	if err := b.tape.Flush(); err != nil {
		return nil
	}
	n := b.tape.Complete()
	if b.history != nil {
		b.history.mu.Lock()
		defer b.history.mu.Unlock()
		if b.history.over || int64(len(b.history.buf)) < n {
			return nil
		}
		return slices.Clone(b.history.buf[:n])
	}
	f, ok := s.opts.Record.(*os.File)
	if !ok {
		return nil
	}
	r, err := os.Open(f.Name()) // the session writes it write-only
	if err != nil {
		s.sb.opts.Logger.Warn("reading the tape for a fork", "err", err)
		return nil
	}
	defer r.Close()
	data := make([]byte, n)
	if _, err := io.ReadFull(r, data); err != nil {
		s.sb.opts.Logger.Warn("reading the tape for a fork", "err", err)
		return nil
	}
	return data
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

// instanceOptions are the options of a new instance of the session, of
// the runtime language lang ("py", "js"): its clocks and randomness are
// its own (recordclock.go).
func (s *Session) instanceOptions(lang string) runtimes.InstanceOptions {
	b := s.bound
	c := b.clocksOf(lang)
	if c.sleep == nil {
		c.sleep = b.sleep
	}
	return runtimes.InstanceOptions{
		Root:             s.opts.Root,
		Env:              s.opts.Env,
		Now:              c.now,
		Nanotime:         c.nanotime,
		Sleep:            c.sleep,
		Rand:             c.rand,
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

// evalNestedTaped runs req inside the waiting cell parent (evalNested),
// recorded as a nested request of its own when the session records: its
// number on the tape goes with its cells (withTapeRequest), and it runs
// when the evals nested in parent before it have ended (frame.takeTurn).
func (s *Session) evalNestedTaped(ctx context.Context, req Request, parent *frame) (*Result, error) {
	if b := s.bound; b != nil && b.tape != nil {
		release, err := parent.takeTurn(ctx)
		if err != nil {
			parent.children.Done() // as evalNested would have
			return nil, err
		}
		defer release() // once its result is on the tape
	}
	n := s.tapeNestedRequest(req)
	spot := s.nestedSpot(ctx, n, parent)
	if spot != nil {
		ctx = context.WithValue(callorder.WithEntered(ctx, spot.entered), nestSpotKey{}, spot)
	}
	res, err := s.evalNested(ctx, req, parent, n)
	wait, beside := spot.recorded()
	s.finishRequestAs(n, res, err, true, wait, beside)
	return res, err
}

// nestSpot is where a nested eval ran in the cell it ran inside: the
// number of that cell's wait for host calls (callorder.Progress) in which
// the first of its cells that ran inside that cell's runtime began
// (runtimes.Reentrant; callorder.Entered). A recording writes it with the
// eval's result; a replay runs that cell in the recorded wait
// (gateNested) and tells its feed where it ran (ReplayNested). An eval
// none of whose cells ran inside (a JavaScript eval in a Python cell)
// has the wait in which its first cell began beside the waiting cell, on
// an instance of its own, instead (beginBeside; tape format 9).
type nestSpot struct {
	n      int // on the tape
	parent *frame
	feed   ReplayNested // replaying; nil recording
	first  atomic.Int64 // the wait it entered first, 0 until then
	gated  atomic.Bool
	// begun is set when its first cell begins, inside the waiting cell's
	// runtime or beside it; beside is the waiting cell's wait then, when
	// it began beside it (0 until then, or for none).
	begun  atomic.Bool
	beside atomic.Int64
}

type nestSpotKey struct{}

// ReplayNested is a ReplayFeed that knows the wait of its waiting cell in
// which each nested request ran when recorded (format 5), so that the
// replay runs it there, and is told where it ran.
type ReplayNested interface {
	// NestedWait is the recorded wait of nested request n, 0 where the
	// tape does not say.
	NestedWait(n int) int
	// NestedEntered says in which wait of its waiting cell the replayed
	// nested request n began to run.
	NestedEntered(n, wait int)
}

// ReplayHeld is a ReplayNested that says how many of a cell's calls it
// holds until the nested request n has begun or ended (their answers
// come after its result on the tape, or in its wait or later), so that a
// cell waiting only for those is known to wait for the eval: a tape that
// names a wait the cell cannot reach then runs the eval where the cell
// is, at once, instead of holding both until the cell's timeout.
type ReplayHeld interface {
	// NestedHeld is how many calls of the cell (its progress) the feed
	// holds for nested request n now, and a channel closed when that
	// may have changed.
	NestedHeld(n int, cell *callorder.Progress) (int, <-chan struct{})
}

// nestedSpot is the spot of the nested eval numbered n (recorded, or
// replayed: its number from WithReplayedRequest), or nil in a session
// that neither records nor replays such evals' waits.
func (s *Session) nestedSpot(ctx context.Context, n int, parent *frame) *nestSpot {
	if n != 0 {
		return &nestSpot{n: n, parent: parent}
	}
	if f, ok := s.opts.Replay.(ReplayNested); ok {
		if n = tapeRequestOf(ctx); n != 0 {
			return &nestSpot{n: n, parent: parent, feed: f}
		}
	}
	return nil
}

// entered notes the wait a cell of the eval entered (callorder.Entered).
func (sp *nestSpot) entered(wait int) {
	if wait <= 0 || !sp.first.CompareAndSwap(0, int64(wait)) {
		return
	}
	if sp.feed != nil {
		sp.feed.NestedEntered(sp.n, wait)
	}
}

// recorded are the waits to record with the eval's result, 0 for none:
// the one its first cell run inside its waiting cell entered, or, when
// none of its cells ran inside, the one its first cell began beside.
func (sp *nestSpot) recorded() (wait, beside int) {
	if sp == nil || sp.feed != nil {
		return 0, 0
	}
	if wait = int(sp.first.Load()); wait != 0 {
		return wait, 0
	}
	return 0, int(sp.beside.Load())
}

// ReplayBeside is a ReplayNested that knows, for a nested request none of
// whose cells ran inside its waiting cell's runtime (format 9), the wait
// of that cell in which the eval's first cell began beside it, on an
// instance of its own, so that the replay begins it there, and is told
// where it began.
type ReplayBeside interface {
	// BesideWait is the recorded wait of nested request n's first cell,
	// begun beside its waiting cell; 0 where the tape does not say.
	BesideWait(n int) int
	// BesideBegan says in which wait of its waiting cell the replayed
	// nested request n's first cell began beside it (besideWait).
	BesideBegan(n, wait int)
}

// gateNested holds a replayed nested eval's first cell that runs inside
// its waiting cell's runtime until that cell is in the recorded wait, so
// that it enters there and not in an earlier one. It stops holding it
// when that cannot come: the cell ended, or it waits with no answer to
// take but this eval's call's and those the feed holds until the eval
// has run (ReplayHeld; a tape that names a later wait than the cell
// reaches: the eval then runs where it can, and the feed reports the
// divergence, naming both waits).
func (s *Session) gateNested(ctx context.Context) {
	sp, _ := ctx.Value(nestSpotKey{}).(*nestSpot)
	if sp == nil {
		return
	}
	sp.begun.Store(true)
	if sp.feed == nil || sp.gated.Swap(true) {
		return
	}
	sp.holdUntil(ctx, sp.feed.NestedWait(sp.n))
}

// beginBeside is where a nested eval's cell that runs on an instance of
// its own, beside its waiting cell (a JavaScript cell in a Python cell's
// wait), begins: when it is the eval's first, a recording notes the
// waiting cell's wait then (besideWait), and a replay holds it until that
// cell is in the recorded wait (as gateNested does) and tells its feed
// where it began (ReplayBeside). Its place among the waiting cell's
// waits says what it can see of that cell's work: the files it wrote
// between two waits, the answers it took.
func (s *Session) beginBeside(ctx context.Context) {
	if b := s.bound; b == nil || b.tape == nil && s.opts.Replay == nil {
		return // no spots (nestedSpot): a cell's context is not searched
	}
	sp, _ := ctx.Value(nestSpotKey{}).(*nestSpot)
	if sp == nil || sp.begun.Swap(true) {
		return
	}
	p := sp.parent.orderProgress()
	if p == nil {
		return
	}
	if sp.feed == nil {
		sp.beside.Store(int64(besideWait(p)))
		return
	}
	bf, ok := sp.feed.(ReplayBeside)
	if !ok {
		return
	}
	want := bf.BesideWait(sp.n)
	if want <= 0 {
		return
	}
	sp.holdUntil(ctx, want)
	bf.BesideBegan(sp.n, besideWait(p))
}

// besideWait is the wait of the cell of p that a cell beginning beside
// it now begins in: the one it is in, or, between two, the one it goes on
// to (its calls in flight, the cell computes, or has not yet begun to
// wait for their answers); 0 once it ended.
func besideWait(p *callorder.Progress) int {
	wait, in, _, ended, _ := p.Now()
	switch {
	case ended:
		return 0
	case in:
		return wait
	}
	return wait + 1
}

// holdUntil holds the replayed nested eval's cell until its waiting cell
// is in wait want or past it, or cannot get there (gateNested).
func (sp *nestSpot) holdUntil(ctx context.Context, want int) {
	p := sp.parent.orderProgress()
	if want <= 0 || p == nil {
		return
	}
	hf, _ := sp.feed.(ReplayHeld)
	for {
		wait, in, open, ended, changed := p.Now()
		held, heldChanged := 0, (<-chan struct{})(nil)
		if hf != nil {
			held, heldChanged = hf.NestedHeld(sp.n, p)
		}
		if ended || wait >= want || in && open-held <= 1 {
			return
		}
		select {
		case <-changed:
		case <-heldChanged:
		case <-ctx.Done():
			return
		}
	}
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
	// Encoded when the tape's frame ends, off the request's path; the
	// cells are copied, the caller may reuse them. Held until its result
	// (finishRequest): a frame holds whole requests.
	f := b.free.request()
	f.Cells = cloneInto(f.cells[:0], req.Cells)
	rec := tape.Deferred(tape.Record{Type: tape.TypeRequest, N: n, Nested: nested}, f)
	if err := b.tape.HoldWrite(rec); err != nil {
		s.tapeFailed("recording a request", err)
	}
	return n
}

// finishRequest ends a top-level request: in a deterministic session the
// cells' durations (wall-clock time) are zero; when recording, the result
// of request n is recorded, and the tape's frame ended within
// tape.FlushDelay, so that what is recorded survives a crash of the
// process.
func (s *Session) finishRequest(n int, res *Result, evalErr error) {
	s.finishRequestAs(n, res, evalErr, false, 0, 0)
}

// finishRequestAs is finishRequest for a top-level or a nested request;
// wait and beside are a nested one's (nestSpot), 0 for none.
func (s *Session) finishRequestAs(n int, res *Result, evalErr error, nested bool, wait, beside int) {
	if res != nil && (s.opts.Deterministic || s.opts.Replay != nil) {
		for i := range res.Details.Cells {
			res.Details.Cells[i].DurationMs = 0
		}
	}
	if n == 0 {
		return
	}
	w := s.bound.tape
	rec := tape.Record{Type: tape.TypeResult, N: n, Nested: nested, Wait: wait, Beside: beside}
	switch {
	case evalErr != nil:
		rec.Error = evalErr.Error()
	case wait != 0 || beside != 0:
		// A nested eval's, rare: encoded now (a deferred record has no
		// wait), as the deferred one would be.
		data, err := MarshalResult(res)
		if err != nil {
			rec.Error = fmt.Sprintf("the result could not be encoded: %v", err)
		} else {
			rec.Result = data
		}
	default:
		// Encoded when the tape's frame ends, off the request's path
		// (what recording a small request cost was mostly this JSON),
		// from a copy: the caller owns res.
		f := freeze(&s.bound.free, res)
		for i := range f.Details.Cells {
			f.Details.Cells[i].DurationMs = 0 // as MarshalResult, on f's own cells
		}
		rec = tape.Deferred(rec, f) // record_json.go
	}
	// Released, and for a top-level request the frame ended soon, under
	// the tape's one lock; a nested one's enclosing request's end flushes.
	if err := w.WriteRelease(rec, !nested); err != nil {
		s.tapeFailed("recording a result", err)
	}
	if nested {
		return
	}
	if res != nil {
		s.noteTapeFull(res)
	}
}

// DefaultRecordLimitBytes is the limit of a session's tape when
// SessionOptions.RecordLimitBytes is zero: the default disk quota of its
// root. A guest's reads of clocks and random bytes are recorded as read
// (64 MiB of crypto.getRandomValues is a tape of 85 MiB), so without a
// limit one cell could fill the disk that holds the tapes.
const DefaultRecordLimitBytes = hostcalls.DefaultDiskQuotaBytes

// recordLimit is the tape's limit in bytes (tape.Writer.SetLimit), 0 for
// none.
func (o *SessionOptions) recordLimit() int64 {
	switch {
	case o.RecordLimitBytes == 0:
		return DefaultRecordLimitBytes
	case o.RecordLimitBytes < 0:
		return 0
	}
	return o.RecordLimitBytes
}

// tapeFailed logs a failed write to the tape; one that reached the tape's
// limit is logged once, and marks the tape full for the next result's
// note (noteTapeFull).
func (s *Session) tapeFailed(what string, err error) {
	if !errors.Is(err, tape.ErrLimit) {
		s.sb.opts.Logger.Warn(what, "err", err)
		return
	}
	b := s.bound
	b.mu.Lock()
	first := !b.full
	b.full = true
	b.mu.Unlock()
	if first {
		s.sb.opts.Logger.Warn("the session's tape reached its limit; the session goes on unrecorded", "limit", s.opts.recordLimit())
	}
}

// noteTapeFull adds a status event to the first result after the tape
// reached its limit, saying that the session is no longer recorded.
func (s *Session) noteTapeFull(res *Result) {
	b := s.bound
	b.mu.Lock()
	note := b.full && !b.fullNoted
	b.fullNoted = b.fullNoted || note
	b.mu.Unlock()
	if note {
		res.Details.StatusEvents = append(res.Details.StatusEvents, StatusEvent{Cell: max(len(res.Details.Cells)-1, 0), Kind: "recording",
			Message: fmt.Sprintf("recording stopped: this session's tape reached its limit of %d bytes (SessionOptions.RecordLimitBytes; --record-limit); the session goes on, unrecorded, and a replay of its tape ends here", s.opts.recordLimit())})
	}
}

// closeTape ends the tape's zstd frame, and closes a tape file the
// session owns (ManagerOptions.RecordDir).
func (s *Session) closeTape() error {
	if s.bound != nil && s.bound.unstamp != nil {
		s.bound.unstamp()
	}
	if s.bound == nil || s.bound.tape == nil {
		return nil
	}
	err := s.bound.tape.Close()
	if errors.Is(err, tape.ErrLimit) {
		err = nil // the tape is whole up to its limit (noteTapeFull)
	}
	if cerr := closeRecord(s.opts); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sandbox: closing the tape: %w", err)
	}
	return nil
}

// frozen is a copy of a recorded result (freeze) that its caller may
// change afterwards, with room for the usual result (one text, one cell,
// one language): the tape's deferred value (tape.JSONAppender, and, its
// Result embedded, what json.Marshal writes for the result), reused once
// the tape has its JSON (tape.Recycler), so that recording a request
// allocates nothing for it (its session's frozenFree).
type frozen struct {
	Result
	content [1]Content
	cells   [1]CellResult
	langs   [1]string
	code    int
	free    *frozenFree // what Recycle gives it back to
}

// frozenRequest is freeze's frozen for a request's cells.
type frozenRequest struct {
	Request
	cells [1]Cell
	free  *frozenFree
}

// frozenResult is freeze's copy of res.
func frozenResult(res *Result) *Result { return &freeze(nil, res).Result }

// freeze copies res deeply enough that its caller may change anything in
// res afterwards: every slice and pointer of the result is copied
// (strings and json.RawMessage bytes are shared: nothing writes to them).
// TestFrozenResultCopiesAll keeps it in step with Result. The copy is
// free's, to be recycled to it (nil: to none).
func freeze(free *frozenFree, res *Result) *frozen {
	f := free.result()
	f.Result = *res
	cp := &f.Result
	cp.Content = cloneInto(f.content[:0], res.Content)
	d := &cp.Details
	d.Cells = cloneInto(f.cells[:0], d.Cells)
	d.Languages = cloneInto(f.langs[:0], d.Languages)
	for i := range d.Cells {
		c := &d.Cells[i]
		if c.ExitCode != nil {
			code := &f.code
			if i > 0 {
				code = new(int)
			}
			*code = *c.ExitCode
			c.ExitCode = code
		}
		c.StatusEvents = slices.Clone(c.StatusEvents)
	}
	d.JSONOutputs = slices.Clone(d.JSONOutputs)
	d.Images = slices.Clone(d.Images)
	d.StatusEvents = slices.Clone(d.StatusEvents)
	d.Meta.Truncated = slices.Clone(d.Meta.Truncated)
	if d.Meta.Dropped != nil {
		dropped := *d.Meta.Dropped
		d.Meta.Dropped = &dropped
	}
	return f
}

// cloneInto is slices.Clone(s) in buf's room when it fits (buf has length
// 0): nil stays nil, empty stays empty, as JSON tells them apart.
func cloneInto[T any](buf, s []T) []T {
	if s == nil || len(s) > cap(buf) {
		return slices.Clone(s)
	}
	return append(buf[:0:len(s)], s...)
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

// replayStop arms a replayed cell's recorded stop: in Python, the
// interrupt comes at the recorded fuel instead of by the clock, so the
// same traceback comes out, and the real timers are stopped; in
// JavaScript (no fuel), once the cell has written the output it had when
// stopped (or, on a tape that does not say, by its real timers). It
// returns the context to run the cell with and the cause to give the cell
// once it stopped.
//
// Recording, it counts a cell's output where the runtime meters no fuel,
// so that tapeStop can record how much it had written when stopped.
func (s *Session) replayStop(ctx context.Context, cell int, lang string, timers ...*time.Timer) (context.Context, error) {
	ctx = s.orderCalls(ctx, cell, lang)
	if s.opts.Replay == nil {
		if b := s.bound; b != nil && b.tape != nil && lang != "py" {
			// No context.AfterFunc: its goroutine, started when every
			// cell's context ends, cost more than the rest of this. No
			// allocation either: the watch is the cell's activity's.
			if w := watchOf(ctx); w != nil {
				w.on, w.bytes, w.ctx = true, -1, ctx
			}
		}
		return ctx, nil
	}
	st, ok := s.opts.Replay.Stop(tapeRequestOf(ctx), cell)
	if !ok {
		return ctx, nil
	}
	err := stopCauses[st.Cause]
	if err == nil {
		return ctx, nil
	}
	switch {
	case lang == "py" && !st.At.IsZero():
		ctx = runtimes.WithInterruptAt(ctx, st.At)
	case lang != "py" && st.ByOutput:
		wctx, cancel := context.WithCancelCause(ctx)
		w := watchOf(ctx)
		if w == nil {
			w = new(stopWatch) // a cell without an activity: not counted
		}
		w.on, w.bytes, w.cancel = true, st.Bytes, cancel
		if st.Bytes == 0 {
			cancel(errReplayedStop)
		}
		ctx = wctx
	default:
		if st.Cause == tape.CauseTimeout || st.Cause == tape.CauseHardLimit {
			return ctx, nil // the cell's real timers stop it
		}
		// Stopped by an interrupt, at a point the tape cannot say: at once.
		wctx, cancel := context.WithCancelCause(ctx)
		cancel(errReplayedStop)
		ctx = wctx
	}
	for _, t := range timers {
		t.Stop()
	}
	return ctx, err
}

// orderCalls returns the context of cell cell (in lang) whose host calls
// are recorded in the order its guest takes their answers, or replayed in
// the recorded order (callorder.With), when the session records or
// replays, and whose JavaScript event loop's wakes are recorded or
// replayed (jsorder.go's cellOrders); its frame keeps the progress of its
// waits for the evals nested in it.
func (s *Session) orderCalls(ctx context.Context, cell int, lang string) context.Context {
	switch _, ordered := s.opts.Replay.(ReplayOrdered); {
	case ordered:
		ctx = s.cellOrders(ctx, true, cell, lang)
	case s.opts.Replay == nil && s.bound != nil && s.bound.tape != nil:
		ctx = s.cellOrders(ctx, false, cell, lang)
	default:
		if o := s.tapeWakes(ctx, cell, lang); o != nil {
			return js.WithWakeOrder(ctx, o)
		}
		return ctx
	}
	frameOf(ctx).setProgress(callorder.ProgressOf(ctx))
	return ctx
}

// replayMatched is the matched function of a replayed call of ticket t
// (ReplayOrdered): it gives the call its rank, and has feed told, if it
// wants to be (ReplayTaken), when and in which wait the guest took the
// answer.
func replayMatched(feed ReplayFeed, t *callorder.Ticket) func(int) {
	rt, ok := feed.(ReplayTaken)
	if !ok {
		return t.SetRank
	}
	return func(index int) {
		t.SetRank(index)
		if index >= 0 {
			t.WhenTaken(func() { rt.Taken(index, t.Wait()) })
		}
	}
}

// errReplayedStop stops a replayed cell where its recording was stopped.
var errReplayedStop = errors.New("sandbox: stopped where the recorded cell was")

// stopCauses are the errors that stop a cell, by the tape's name for them.
var stopCauses = map[string]error{
	tape.CauseTimeout:   errCellTimeout,
	tape.CauseHardLimit: errCellHardLimit,
	tape.CauseInterrupt: errInterrupted,
	tape.CauseCancel:    context.Canceled,
	tape.CauseClosed:    ErrClosed,
}

// stopWatch counts a cell's output, where the runtime meters no fuel
// (on): replayed, it stops the cell once it has written bytes; recorded
// (bytes -1), it notes what the cell had written before its context
// ended (ctx). It is the cell's activity's (activity.watch), and the
// cell's activitySink counts.
//
// The runtime calls a sink from the goroutine that called Run (runtimes.
// Sink), which reads the counts once Run has returned: they need no
// atomics, whose cost every write of a recorded JavaScript cell paid.
type stopWatch struct {
	on      bool
	bytes   int64
	written int64
	atStop  int64
	cancel  context.CancelCauseFunc
	ctx     context.Context
	// s and cell are the session and the index of a recorded JavaScript
	// cell whose wakes tapeWakeOrder writes (jsorder.go).
	s    *Session
	cell int
}

// watchOf is the stop watch of the cell whose context is ctx.
func watchOf(ctx context.Context) *stopWatch {
	if a, _ := ctx.Value(activityKey{}).(*activity); a != nil {
		return &a.watch
	}
	return nil
}

// Stdout and Stderr write the cell's output, counted by its watch.
func (a *activitySink) Stdout(text string) { a.cellSink.Stdout(text); a.act.watch.add(len(text)) }
func (a *activitySink) Stderr(text string) { a.cellSink.Stderr(text); a.act.watch.add(len(text)) }

func (w *stopWatch) add(n int) {
	if !w.on {
		return
	}
	if w.bytes < 0 {
		// Recording: what the runtime writes once the context ended
		// (its lines about the stop) is not the cell's.
		if w.ctx.Err() == nil {
			w.atStop += int64(n)
		}
		return
	}
	if w.written += int64(n); w.written >= w.bytes {
		w.cancel(errReplayedStop)
	}
}

// tapeStop records a stopped cell (with where the interrupt came, and the
// output it had written), or, replaying, gives the cell the recorded
// cause once the replayed stop stopped it: its own context for a time
// limit, the request's for an interrupt or a cancellation.
func (s *Session) tapeStop(ctx context.Context, cancel context.CancelCauseFunc, sink *cellSink, out runtimes.Outcome, replayed error) {
	if replayed != nil {
		if r, ok := s.opts.Replay.(ReplayStopped); ok {
			r.Stopped(tapeRequestOf(ctx), sink.index, out.Interrupt)
		}
		if !out.Interrupted {
			return
		}
		if replayed == errCellTimeout || replayed == errCellHardLimit {
			cancel(replayed)
			return
		}
		s.mu.Lock()
		if s.cancel != nil {
			s.cancel(replayed)
		}
		s.mu.Unlock()
		return
	}
	b := s.bound
	if b == nil || b.tape == nil || out.Interrupt.IsZero() && !out.Interrupted {
		return // most cells: not stopped
	}
	cause := stopCause(ctx)
	if cause == "" {
		return
	}
	p := out.Interrupt
	rec := tape.Record{Type: tape.TypeStop, N: tapeRequestOf(ctx), Cell: sink.index, Cause: cause, Checks: p.Checks, Sleeps: p.Sleeps, Waits: p.Waits, Fuel: p.Fuel}
	if w := watchOf(ctx); w != nil && w.on && out.Interrupt.IsZero() {
		rec.Bytes = w.atStop // the runtime's own lines about the stop come after
	}
	if err := b.tape.Write(rec); err != nil {
		s.sb.opts.Logger.Warn("recording a stop", "err", err)
	}
}

// stopCause is the tape's name for what stopped a cell whose context is
// ctx, or "" when it is none of the stops a tape records.
func stopCause(ctx context.Context) string {
	cause := ""
	for name, err := range stopCauses {
		if errors.Is(context.Cause(ctx), err) {
			cause = name
		}
	}
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		cause = tape.CauseCancel // the Eval's own deadline
	}
	return cause
}

// tapeStopBeforeStart records a cell stopped (interrupted, cancelled,
// closed) while its runtime was still starting, before any of its code
// ran: a stop before the start (before_start, at no fuel check, sleep,
// fuel or output). Replayed, such a cell is not run (replayBeforeStart):
// it ends as recorded, with the same note and no output, in every
// language (a JavaScript runtime given a done context would write that it
// was interrupted, which the recorded cell did not). A tape of format 2
// has such stops at position zero, without before_start: a Python Run
// given the done context returns before running anything, so those
// replay too (replayStop).
func (s *Session) tapeStopBeforeStart(ctx context.Context, sink *cellSink) {
	b := s.bound
	if b == nil || b.tape == nil || s.opts.Replay != nil {
		return
	}
	cause := stopCause(ctx)
	if cause == "" {
		return
	}
	if err := b.tape.Write(tape.Record{Type: tape.TypeStop, N: tapeRequestOf(ctx), Cell: sink.index, Cause: cause, BeforeStart: true}); err != nil {
		s.sb.opts.Logger.Warn("recording a stop", "err", err)
	}
}

// replayBeforeStart replays a cell whose recording was stopped before any
// of its code ran (tapeStopBeforeStart): its runtime is neither started
// nor run, the request is cancelled with the recorded cause (the cell's
// own context only, for a cell nested in a waiting one), and the cell
// gets the recorded note. It says whether the cell was such a one.
func (s *Session) replayBeforeStart(ctx context.Context, sink *cellSink) bool {
	if s.opts.Replay == nil {
		return false
	}
	st, ok := s.opts.Replay.Stop(tapeRequestOf(ctx), sink.index)
	if !ok || !st.BeforeStart {
		return false
	}
	err := stopCauses[st.Cause]
	if err == nil {
		return false
	}
	if f := frameOf(ctx); f == nil || f.depth <= s.opts.AgentDepth {
		s.mu.Lock()
		if s.cancel != nil {
			s.cancel(err)
		}
		s.mu.Unlock()
	}
	if !errors.Is(context.Cause(ctx), err) {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		cancel(err)
	}
	sink.note(stopNote(ctx))
	return true
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

// forkBoundary sets up the boundary of cp, made by a fork of s whose
// files it holds: in a deterministic, recorded or replayed fork the copies
// keep their times; a recorded fork's tape (out, the fork's
// SessionOptions.Record) starts with s's tape so far.
func (cp *Session) forkBoundary(s *Session, out io.Writer, own bool) error {
	if cp.bound.unstamp != nil || out != nil {
		copyTimes(s.opts.Root, cp.opts.Root)
	}
	if out == nil {
		return nil
	}
	cp.opts.Record, cp.opts.ownRecord = out, own
	return cp.startTape(out, s)
}

// copyTimes gives the entries of the copy dst of the folder src the times
// of the originals, where both are there and neither is a link.
func copyTimes(src, dst string) {
	from, err := os.OpenRoot(src)
	if err != nil {
		return
	}
	defer from.Close()
	to, err := os.OpenRoot(dst)
	if err != nil {
		return
	}
	defer to.Close()
	var dirs []string
	fs.WalkDir(from.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		if d.IsDir() {
			dirs = append(dirs, p) // after what is in them
			return nil
		}
		if fi, err := d.Info(); err == nil {
			to.Chtimes(p, fi.ModTime(), fi.ModTime())
		}
		return nil
	})
	for _, p := range slices.Backward(dirs) {
		if fi, err := from.Stat(p); err == nil {
			to.Chtimes(p, fi.ModTime(), fi.ModTime())
		}
	}
}

// withTapeRequest returns the context of the cells of the nested eval
// recorded as request n (tapeNestedRequest), which Eval passes on: its
// stops are recorded by that number (tapeRequestOf). A replayed nested
// eval's context has its number from the replay (WithReplayedRequest);
// n 0 (not recorded) leaves ctx as it is.
func withTapeRequest(ctx context.Context, n int) context.Context {
	if n == 0 {
		return ctx
	}
	return context.WithValue(ctx, tapeRequestKey{}, n)
}
