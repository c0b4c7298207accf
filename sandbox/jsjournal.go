package sandbox

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/js"
	"github.com/wasmeval/wasmeval/store"
	"github.com/wasmeval/wasmeval/tape"
)

// The JavaScript journal. A goja VM cannot be serialized, so a session
// kept in a store (ManagerOptions.Store) keeps, beside its state, what
// rebuilds its JavaScript state: each JavaScript or TypeScript cell run
// since the VM started (or was reset), with every input from outside the
// VM that the cell consumed — its clock reads, its random bytes, its host
// calls and their answers in the order the guest took them — as tape
// records (tape.Record, the tape's own encoding), and the session's files
// as the cell found them. A session loaded from the store (after a
// restart, on another node) rebuilds its VM at its first JavaScript cell
// by running those cells again on a new VM fed from the journal: no tool,
// llm or agent call is made again, the clocks and randomness read what
// they read then, and each cell's output must be what it was, else the
// rebuild stops and the cell that diverged is named in a state_reset
// status event.
//
// Files. A JavaScript cell reads the session's files directly (the fs
// module, require and import of the root's modules) as well as through
// the helpers, and a later cell (of either language) may have changed
// them: replaying a cell against the files as they are now would feed it
// other inputs. So each entry holds the root's changes since the previous
// entry began (the first holds the whole root), and the rebuild makes the
// root hold, before each cell, exactly what that cell found (the helpers'
// file calls are served again on it and checked against the journal);
// when it ends, the root is put back as it was. Writes the replayed cells
// make are thereby undone, whatever they were.
//
// Cost and bound. Recording is a few appends per clock read, random read
// and host call, and one walk of the root per JavaScript cell (the stamps
// tell unchanged files from changed ones, as a save does). Each finished
// entry is one zstd frame, named by its SHA-256, riding after the Python
// frames in store.State.PythonFrames: a save hands the store the frames it
// had and one new one, which is all a store writes (State.JS holds the
// journal's manifest). The journal is capped (ManagerOptions.JSJournalBytes,
// DefaultJSJournalBytes); past the cap it is dropped, and a later load
// resets JavaScript with a note saying why, as it does when a cell was
// stopped (its timeout, an interrupt: where it stopped cannot be replayed)
// or ran evals nested in it (agent(), tool()), until the next cell that
// resets JavaScript starts a journal afresh.

// DefaultJSJournalBytes is the JavaScript journal's cap when
// ManagerOptions.JSJournalBytes is zero: the compressed entries plus the
// running cell's inputs not yet compressed.
const DefaultJSJournalBytes = 16 << 20

// jsJournalVersion is the version of the journal this code writes and
// replays; a journal of another version is not replayed (JavaScript is
// reset, saying why). An entry's clock and wakes (jsorder.go) came later
// within version 1: an entry without them replays on the session's
// clock, as it ran; a wall-clock entry's Output is salted (entryOutput),
// so that a build that knows no wakes, which would replay it on the
// session's clock (where a timer that raced a call may lose the race
// without printing otherwise), finds it diverged and resets, saying so.
const jsJournalVersion = 1

// jsManifest is store.State.JS: whether the session had JavaScript state
// when saved and how its journal is kept.
type jsManifest struct {
	// V is jsJournalVersion; 0 in records of builds that kept no journal.
	V   int  `json:"v,omitempty"`
	Had bool `json:"had"`
	// Frames is how many of State.PythonFrames, at its end, are the
	// journal's entries, in the order their cells ran.
	Frames int `json:"frames,omitempty"`
	// Dropped says why there is no journal of the JavaScript state.
	Dropped string `json:"dropped,omitempty"`
}

// jsEntry is one journaled cell: a zstd frame of its JSON.
type jsEntry struct {
	N        int    `json:"n"` // from 1, since the journal started
	Language string `json:"language"`
	Code     string `json:"code"`
	Reset    bool   `json:"reset,omitempty"`
	Timeout  int    `json:"timeout"`
	// Root is the session root's path when the cell ran: the rebuild puts
	// its own in its place in the recorded calls.
	Root string `json:"root"`
	// Files are the root's changes since the previous entry began; with
	// FullFiles, the whole root.
	Files     []store.File `json:"files,omitempty"`
	FullFiles bool         `json:"full_files,omitempty"`
	// Start are the inputs the VM read as it started (the first entry).
	Start []tape.Record `json:"start,omitempty"`
	// Events are the inputs the cell read: clock, rand and call records.
	Events []tape.Record `json:"events,omitempty"`
	// Clock is "wall" when the cell's timers ran on the wall clock
	// (jsorder.go), Wakes then what woke its event loop at each of its
	// waits, in order; "" when they ran on the session's clock.
	Clock string   `json:"clock,omitempty"`
	Wakes []jsWake `json:"wakes,omitempty"`
	// Failed and Output are how the cell ended: Output is the SHA-256 of
	// its output (its markdown after a NUL), with the root's path in
	// place of the root. Noted is the sandbox's own note on it, which a
	// rebuild adds too.
	Failed bool   `json:"failed,omitempty"`
	Output string `json:"output"`
	Noted  string `json:"noted,omitempty"`
}

// jsJournal is a persisted session's journal (sessionStore.jrnl); used
// under the session's turn.
type jsJournal struct {
	limit int64
	tap   *jsTap            // the journaled instance's inputs; nil: none yet
	inst  runtimes.Instance // the instance tap feeds
	// frames are the finished entries; bytes their size.
	frames []store.Frame
	bytes  int64
	n      int
	// open are the entries of the running eval's cells.
	open []*openEntry
	// stamps is the root as the last entry began; nil: the next holds the
	// whole root.
	stamps map[string]fileStamp
	// dropped says why the JavaScript state has no journal ("" when it
	// has one, or there is no JavaScript state).
	dropped string
	// pending is a journal loaded from the store, replayed at the first
	// JavaScript cell.
	pending []store.Frame
	// manifest is State.JS as last saved.
	manifest []byte
}

// openEntry is an entry whose cell ran in the running eval.
type openEntry struct {
	e      jsEntry
	sink   *cellSink
	events []jsEvent
}

// jsEvent is an input the VM read (a compact tape.Record).
type jsEvent struct {
	kind   byte  // 'w' wall clock, 'm' monotonic clock, 'r' random bytes, 'c' call, 'k' a wake (jsorder.go)
	ns     int64 // a clock's reading; a timer's due time
	timer  int64 // the timer that woke the loop
	data   []byte
	call   json.RawMessage
	answer json.RawMessage
	made   int
}

func (e *jsEvent) record() tape.Record {
	switch e.kind {
	case 'w', 'm':
		ns := e.ns
		c := tape.ClockWall
		if e.kind == 'm' {
			c = tape.ClockMono
		}
		return tape.Record{Type: tape.TypeClock, Clock: c, NS: &ns}
	case 'r':
		return tape.Record{Type: tape.TypeRand, Data: e.data}
	}
	return tape.Record{Type: tape.TypeCall, Call: e.call, Answer: e.answer, Made: e.made}
}

// size is about what the event takes in the entry's JSON.
func (e *jsEvent) size() int64 {
	return int64(48 + len(e.data)*4/3 + len(e.call) + len(e.answer))
}

// Tap modes.
const (
	tapLive   = iota // inputs from the session, recorded when rec
	tapReplay        // inputs from the journal (feed)
)

// jsTap stands between a journaled JavaScript instance and the session's
// boundary: it records what the instance reads, or feeds it a journal.
type jsTap struct {
	s    *Session
	base runtimes.InstanceOptions
	mono time.Time // the start of the monotonic clock when the session gives none

	mu     sync.Mutex
	mode   int
	rec    bool       // recording (a journal is kept)
	events *[]jsEvent // where recorded inputs go
	start  []jsEvent  // the inputs of the VM's start
	raw    int64      // bytes recorded since the last entry was finished
	over   bool       // raw passed the room left under the cap
	room   int64
	// ticket says the guest's taking of a call's answer may be hooked
	// (js.CallTicket.WhenTaken), which a session recording a tape uses.
	ticket bool
	// wall says the VM's timers run on the wall clock (jsorder.go).
	wall bool
	feed *jsFeed
}

// options are InstanceOptions that read through the tap.
func (t *jsTap) options() runtimes.InstanceOptions {
	o := t.base
	o.Now, o.Nanotime, o.Sleep, o.Rand, o.Call = t.now, t.nanotime, t.sleep, readerFunc(t.read), t.call
	return o
}

func (t *jsTap) record(e jsEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.rec || t.events == nil || t.over {
		return
	}
	if e.kind == 'r' {
		// Consecutive random reads are one record: a replay reads them as
		// one stream, as a tape's.
		if ev := *t.events; len(ev) > 0 && ev[len(ev)-1].kind == 'r' {
			ev[len(ev)-1].data = append(ev[len(ev)-1].data, e.data...)
			t.raw += int64(len(e.data) * 4 / 3)
			t.checkRoom()
			return
		}
		e.data = slices.Clone(e.data)
	}
	*t.events = append(*t.events, e)
	t.raw += e.size()
	t.checkRoom()
}

func (t *jsTap) checkRoom() {
	if t.raw > t.room {
		t.over = true
		*t.events = nil // freed now; the journal is dropped when the eval ends
	}
}

func (t *jsTap) replaying() (*jsFeed, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.feed, t.mode == tapReplay
}

func (t *jsTap) now() time.Time {
	if f, ok := t.replaying(); ok {
		return f.nextClock('w')
	}
	var tm time.Time
	if t.base.Now != nil {
		tm = t.base.Now()
	} else {
		tm = time.Now()
	}
	// Without its monotonic reading, as a tape's: the guest's differences
	// of times are then what the rebuild computes.
	tm = tm.Round(0)
	t.record(jsEvent{kind: 'w', ns: tm.UnixNano()})
	return tm
}

func (t *jsTap) nanotime() int64 {
	if f, ok := t.replaying(); ok {
		return f.nextClock('m').UnixNano()
	}
	var ns int64
	if t.base.Nanotime != nil {
		ns = t.base.Nanotime()
	} else {
		ns = int64(time.Since(t.mono))
	}
	t.record(jsEvent{kind: 'm', ns: ns})
	return ns
}

// sleep is the session's when it has one (a deterministic session's
// virtual clock); a rebuild does not wait, its clock reads are recorded.
func (t *jsTap) sleep(ns int64) bool {
	if _, ok := t.replaying(); ok {
		return true
	}
	return t.base.Sleep != nil && t.base.Sleep(ns)
}

func (t *jsTap) read(p []byte) (int, error) {
	if f, ok := t.replaying(); ok {
		return f.read(p)
	}
	r := t.base.Rand
	if r == nil {
		r = crand.Reader
	}
	n, err := r.Read(p)
	if n > 0 {
		t.record(jsEvent{kind: 'r', data: p[:n]})
	}
	return n, err
}

func (t *jsTap) call(ctx context.Context, req []byte) []byte {
	if f, ok := t.replaying(); ok {
		return f.call(ctx, req, t.s.calls.Call)
	}
	ans := t.base.Call(ctx, req)
	t.mu.Lock()
	rec, ticket := t.rec && t.events != nil && !t.over, t.ticket
	t.mu.Unlock()
	if !rec {
		return ans
	}
	e := jsEvent{kind: 'c', call: compactJSON(req), answer: compactJSON(ans)}
	if tk := js.TicketOf(ctx); tk != nil {
		e.made = tk.Made()
		if ticket {
			// Recorded when the guest takes the answer: the journal holds
			// the calls in the order the guest saw their answers, which
			// the rebuild hands them over in.
			tk.WhenTaken(func() { t.record(e) })
			return ans
		}
	}
	t.record(e)
	return ans
}

// jsFeed feeds a rebuilt VM one entry's inputs and notes where it read
// something else.
type jsFeed struct {
	mu         sync.Mutex
	wall, mono []int64
	rand       []byte
	calls      []*fedCall
	wallAt     int
	monoAt     int
	randAt     int
	lastWall   int64
	lastMono   int64
	local      func([]byte) []byte // the recorded root's path → this one's
	div        string              // the first divergence
	onWall     func(ns int64)      // the session's file stamps follow the fed clock
	wakes      []jsWake            // what woke the event loop (jsorder.go)
	wakeAt     int
}

type fedCall struct {
	req, answer []byte
	made        int
	used        bool
}

// set makes the feed serve records (of a VM's start or a cell) recorded
// at the root oldRoot, in a session whose root is newRoot.
func (f *jsFeed) set(records []tape.Record, oldRoot, newRoot string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wall, f.mono, f.rand, f.calls = nil, nil, nil, nil
	f.wallAt, f.monoAt, f.randAt = 0, 0, 0
	for _, r := range records {
		switch r.Type {
		case tape.TypeClock:
			if r.NS == nil {
				continue
			}
			if r.Clock == tape.ClockMono {
				f.mono = append(f.mono, *r.NS)
			} else {
				f.wall = append(f.wall, *r.NS)
			}
		case tape.TypeRand:
			f.rand = append(f.rand, r.Data...)
		case tape.TypeCall:
			f.calls = append(f.calls, &fedCall{req: r.Call, answer: r.Answer, made: r.Made})
		}
	}
	f.local = func(b []byte) []byte { return b }
	if oldRoot != "" && oldRoot != newRoot {
		o, n := []byte(oldRoot), []byte(newRoot)
		f.local = func(b []byte) []byte { return bytes.ReplaceAll(b, o, n) }
	}
}

// diverge notes the first divergence; the caller holds mu.
func (f *jsFeed) diverge(msg string) {
	if f.div == "" {
		f.div = msg
	}
}

// left says what the VM did not read of the feed, "" when it read all.
func (f *jsFeed) left() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.div != "":
		return f.div
	case f.wallAt < len(f.wall):
		return fmt.Sprintf("it read the clock %d times; the journal recorded %d reads", f.wallAt, len(f.wall))
	case f.monoAt < len(f.mono):
		return fmt.Sprintf("it read the monotonic clock %d times; the journal recorded %d reads", f.monoAt, len(f.mono))
	case f.randAt < len(f.rand):
		return fmt.Sprintf("it read %d random bytes; the journal recorded %d", f.randAt, len(f.rand))
	case f.wakeAt < len(f.wakes):
		return fmt.Sprintf("its event loop waited %s; the journal recorded %d waits", timesText(f.wakeAt), len(f.wakes))
	}
	for _, c := range f.calls {
		if !c.used {
			return "it did not make the host call " + excerpt(string(c.req), 120) + " that the journal recorded"
		}
	}
	return ""
}

func (f *jsFeed) nextClock(kind byte) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	list, at, last := &f.wall, &f.wallAt, &f.lastWall
	what := "clock"
	if kind == 'm' {
		list, at, last, what = &f.mono, &f.monoAt, &f.lastMono, "monotonic clock"
	}
	if *at < len(*list) {
		*last = (*list)[*at]
	} else {
		f.diverge(fmt.Sprintf("it read the %s more often than the journal recorded (%d reads)", what, len(*list)))
		*last += int64(time.Millisecond)
	}
	*at++
	if kind == 'w' && f.onWall != nil {
		f.onWall(*last)
	}
	return time.Unix(0, *last)
}

func (f *jsFeed) read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	if f.randAt < len(f.rand) {
		n = copy(p, f.rand[f.randAt:])
	}
	if n < len(p) {
		f.diverge(fmt.Sprintf("it read more random bytes than the journal recorded (%d)", len(f.rand)))
		clear(p[n:])
	}
	f.randAt += len(p)
	return len(p), nil
}

// journalServed are the host calls a rebuild serves again, on the root as
// the cell found it (and checks against the journal); the others (tool,
// llm, agent, output, budget) are answered from the journal.
var journalServed = map[string]bool{"read": true, "write": true, "append": true, "tree": true, "diff": true}

func (f *jsFeed) call(ctx context.Context, request []byte, serve func(context.Context, []byte) []byte) []byte {
	req := compactJSON(request)
	made := 0
	tk := js.TicketOf(ctx)
	if tk != nil {
		made = tk.Made()
	}
	f.mu.Lock()
	var rec *fedCall
	rank := -1
	for i, c := range f.calls {
		if !c.used && (made == 0 || c.made == 0 || c.made == made) && bytes.Equal(f.local(c.req), req) {
			c.used, rec, rank = true, c, i
			break
		}
	}
	if tk != nil {
		tk.SetRank(rank)
	}
	if rec == nil {
		f.diverge("it made the host call " + excerpt(string(req), 120) + ", which the journal does not hold")
		f.mu.Unlock()
		b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": "this call is not in the session's JavaScript journal, so it has no recorded answer"}})
		return b
	}
	want := f.local(rec.answer)
	f.mu.Unlock()
	var op struct {
		Op string `json:"op"`
	}
	json.Unmarshal(req, &op)
	if !journalServed[op.Op] {
		return want
	}
	got := serve(ctx, request)
	if !bytes.Equal(compactJSON(got), want) {
		f.mu.Lock()
		f.diverge(fmt.Sprintf("its %s call answered %s; the journal recorded %s", op.Op, excerpt(string(compactJSON(got)), 120), excerpt(string(want), 120)))
		f.mu.Unlock()
	}
	return got
}

// excerpt is s cut to about n bytes, for a message.
func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:runeStart(s, n)] + "..."
}

var (
	journalCodecOnce sync.Once
	journalEnc       *zstd.Encoder
	journalDec       *zstd.Decoder
	journalCodecErr  error
)

func journalCodec() error {
	journalCodecOnce.Do(func() {
		journalEnc, journalCodecErr = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		if journalCodecErr == nil {
			journalDec, journalCodecErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(1<<30))
		}
	})
	return journalCodecErr
}

// journalLimit is the cap of a manager's journals (ManagerOptions.JSJournalBytes).
func journalLimit(n int64) int64 {
	switch {
	case n == 0:
		return DefaultJSJournalBytes
	case n < 0:
		return -1
	}
	return n
}

// drop ends the journal: JavaScript state goes on, but a load will reset
// it, saying why.
func (j *jsJournal) drop(why string) {
	if j.dropped == "" {
		j.dropped = why
	}
	j.frames, j.bytes, j.open, j.stamps, j.pending = nil, 0, nil, nil, nil
	if t := j.tap; t != nil {
		t.mu.Lock()
		t.rec, t.events, t.raw, t.over = false, nil, 0, false
		t.mu.Unlock()
	}
}

// restart starts the journal afresh, for a new or reset VM.
func (j *jsJournal) restart() {
	j.dropped = ""
	j.frames, j.bytes, j.n, j.open, j.stamps, j.pending = nil, 0, 0, nil, nil, nil
	if t := j.tap; t != nil {
		t.mu.Lock()
		t.rec, t.events, t.raw, t.over = j.limit >= 0, nil, 0, false
		t.mu.Unlock()
	}
	if j.limit < 0 {
		j.dropped = "this server keeps no JavaScript journal (its cap is negative)"
	}
}

// nestedIn says whether a cell of the session is running (of language
// lang, when not ""): a cell that begins now runs nested in it.
func (s *Session) nestedIn(lang string) bool {
	s.nest.mu.Lock()
	defer s.nest.mu.Unlock()
	for _, f := range s.nest.frames {
		if lang == "" || f.lang == lang {
			return true
		}
	}
	return false
}

// journalCell journals a cell c of language lang ("js" for TypeScript)
// about to run (beforeCell): a JavaScript cell gets an entry, after the
// VM is rebuilt from a journal loaded from the store. It returns the
// context to run the cell with: a JavaScript cell's timers on the wall
// clock when the session's clock is the host's (jsorder.go), journaled
// or not.
func (s *Session) journalCell(ctx context.Context, c Cell, lang string, sink *cellSink) context.Context {
	ctx = s.journalCellEntry(ctx, c, lang, sink)
	if lang == "js" {
		ctx = s.wallTimers(ctx)
	}
	return ctx
}

func (s *Session) journalCellEntry(ctx context.Context, c Cell, lang string, sink *cellSink) context.Context {
	p := s.persist
	j := &p.jrnl
	if lang != "js" {
		if j.tap != nil && j.dropped == "" && s.nestedIn("js") {
			// It may change the files under the waiting JavaScript cell,
			// which the journal would not see.
			j.drop("a cell ran inside a JavaScript cell that waited in agent() or tool(), which the journal cannot replay")
		}
		return ctx
	}
	if s.nestedIn("") {
		if j.pending != nil {
			// Not rebuilt under a waiting cell, whose files it would change.
			j.pending = nil
			p.reset = append(slices.DeleteFunc(p.reset, func(l string) bool { return l == "js" }), "js")
			p.jsWhy = "its first JavaScript cell since ran inside a cell that waited in agent() or tool()"
		}
		if j.tap != nil && j.dropped == "" {
			j.drop("a JavaScript cell ran inside a cell that waited in agent() or tool(), which the journal cannot replay in order")
		}
		return ctx
	}
	if j.pending != nil {
		if c.Reset {
			j.pending = nil // reset anyway: nothing to rebuild, nothing to tell
		} else {
			s.rebuildJS(ctx, j)
		}
	}
	s.imu.Lock()
	inst := s.instances["js"]
	s.imu.Unlock()
	switch {
	case inst != nil && inst == j.inst:
	case inst != nil:
		// Made elsewhere, without the tap (it failed to start here once).
		if j.dropped == "" {
			j.drop("its JavaScript VM was started without a journal")
		}
		return ctx
	default:
		j.inst, j.tap = nil, nil
		if err := s.startJournaledJS(ctx, j); err != nil {
			// The cell's own start says what failed.
			return ctx
		}
	}
	if c.Reset {
		j.restart()
	}
	if j.dropped != "" {
		return ctx
	}
	e := &openEntry{sink: sink, e: jsEntry{Language: c.Language, Code: c.Code, Reset: c.Reset, Timeout: c.TimeoutSeconds, Root: s.opts.Root}}
	cur, files, err := diffRoot(s.opts.Root, j.stamps, time.Now(), false)
	if err != nil {
		j.drop(fmt.Sprintf("its files could not be read for the journal: %v", err))
		return ctx
	}
	e.e.Files, e.e.FullFiles, j.stamps = files, j.stamps == nil, cur
	var size int64
	for _, f := range files {
		size += int64(len(f.Data)+len(f.Path)) + 64
	}
	t := j.tap
	t.mu.Lock()
	if j.n == 0 && len(j.open) == 0 {
		e.e.Start = records(t.start)
		size += int64(len(t.start)) * 48
	}
	t.raw += size
	t.room = j.limit - j.bytes
	t.events = &e.events
	t.rec = true
	t.checkRoom()
	over := t.over
	t.mu.Unlock()
	j.open = append(j.open, e)
	if over {
		j.drop(j.capWhy())
		return ctx
	}
	if t.wall {
		e.e.Clock = "wall"
	}
	return js.WithCallOrder(ctx, false)
}

func (j *jsJournal) capWhy() string {
	return fmt.Sprintf("its JavaScript journal (the cells, their inputs and the files they found) passed its cap of %s", sizeText(j.limit))
}

// records are the tape records of evs, but for wakes (wakes).
func records(evs []jsEvent) []tape.Record {
	if len(evs) == 0 {
		return nil
	}
	out := make([]tape.Record, 0, len(evs))
	for i := range evs {
		if evs[i].kind != 'k' {
			out = append(out, evs[i].record())
		}
	}
	return out
}

// startJournaledJS starts the session's JavaScript VM reading through a
// new tap, recording from its start.
func (s *Session) startJournaledJS(ctx context.Context, j *jsJournal) error {
	t := s.newTap(tapLive)
	t.rec = j.limit >= 0
	t.events = &t.start
	t.room = max(j.limit, 0)
	inst, err := s.newTappedJS(ctx, t)
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.events = nil
	t.mu.Unlock()
	j.tap, j.inst = t, inst
	j.restart()
	return nil
}

func (s *Session) newTap(mode int) *jsTap {
	t := &jsTap{s: s, base: s.instanceOptions("js"), mono: time.Now(), mode: mode}
	t.wall = s.jsWall()                              // node's timers (jsorder.go)
	t.ticket = s.bound == nil || s.bound.tape == nil // a tape's recorder hooks the taking itself
	return t
}

// newTappedJS starts a JavaScript instance reading through t and makes it
// the session's.
func (s *Session) newTappedJS(ctx context.Context, t *jsTap) (runtimes.Instance, error) {
	rt, err := s.sessionRuntime(ctx, "js")
	if err != nil {
		return nil, err
	}
	inst, err := rt.NewInstance(ctx, t.options())
	if err != nil {
		return nil, err
	}
	s.imu.Lock()
	if old, ok := s.instances["js"]; ok {
		old.Close(context.WithoutCancel(ctx))
	}
	s.instances["js"] = inst
	s.imu.Unlock()
	return inst, nil
}

// journalEvalEnded finishes the entries of the eval that ended with res
// (err: the host failed): each becomes a frame, with how its cell ended.
func (s *Session) journalEvalEnded(res *Result, err error) {
	j := &s.persist.jrnl
	open := j.open
	j.open = nil
	if len(open) == 0 {
		return
	}
	t := j.tap
	t.mu.Lock()
	over := t.over
	t.events, t.raw, t.over = nil, 0, false
	t.mu.Unlock()
	if j.dropped != "" {
		return
	}
	if over {
		j.drop(j.capWhy())
		return
	}
	if err != nil || res == nil {
		j.drop("a JavaScript cell failed in the host, not in the guest")
		return
	}
	if err := journalCodec(); err != nil {
		j.drop(fmt.Sprintf("its journal could not be compressed: %v", err))
		return
	}
	for _, o := range open {
		i := o.sink.index
		if i >= len(res.Details.Cells) {
			j.drop("a journaled cell is missing from its result")
			return
		}
		st := res.Details.Cells[i].Status
		if st == StatusCancelled || st == StatusPending || strings.HasPrefix(o.sink.noted, "timed out") {
			j.drop(fmt.Sprintf("its JavaScript cell %s was stopped (%s) at a point a replay cannot find", quote(excerpt(o.e.Code, 60)), orText(o.sink.noted, string(st))))
			return
		}
		j.n++
		o.e.N = j.n
		o.e.Failed = st != StatusComplete
		o.e.Noted = o.sink.noted
		o.e.Output = entryOutput(o.e.Clock, o.sink, s.opts.Root)
		o.e.Events = records(o.events)
		o.e.Wakes = wakes(o.events)
		b, err := json.Marshal(&o.e)
		if err != nil {
			j.drop(fmt.Sprintf("a journal entry did not encode: %v", err))
			return
		}
		data := journalEnc.EncodeAll(b, nil)
		j.frames = mergeFrames(append(j.frames, store.Frame{Sum: sha256.Sum256(data), Data: data}))
		j.bytes += int64(len(data))
		if j.bytes > j.limit {
			j.drop(j.capWhy())
			return
		}
	}
}

// mergeFrames merges the last frame into the one before while that one is
// at most twice its size, so that a journal of n entries is O(log n)
// frames, each byte rewritten O(log n) times: a store's record names its
// frames, and a long session's list would otherwise grow by one a cell.
// Frames are zstd frames, so a merge is their concatenation.
func mergeFrames(frames []store.Frame) []store.Frame {
	for n := len(frames); n >= 2 && len(frames[n-2].Data) <= 2*len(frames[n-1].Data); n-- {
		data := append(slices.Clip(frames[n-2].Data), frames[n-1].Data...)
		frames = append(frames[:n-2], store.Frame{Sum: sha256.Sum256(data), Data: data})
	}
	return frames
}

func orText(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// entryOutput is an entry's Output: outputSum, for a cell whose timers
// ran on the wall clock that of the clock's name too (jsJournalVersion).
func entryOutput(clock string, sink *cellSink, root string) string {
	sum := outputSum(sink, root)
	if clock == "" {
		return sum
	}
	h := sha256.Sum256([]byte(clock + "\x00" + sum))
	return hex.EncodeToString(h[:])
}

// outputSum is the SHA-256 of what a cell wrote, with the root's path in
// place of root, so that a rebuild elsewhere compares equal.
func outputSum(sink *cellSink, root string) string {
	kept, note := sink.out.full()
	h := sha256.New()
	r := []byte(root)
	h.Write(bytes.ReplaceAll(kept, r, []byte("\x00root\x00")))
	h.Write([]byte(note))
	h.Write([]byte{0})
	h.Write(bytes.ReplaceAll([]byte(sink.markdownText()), r, []byte("\x00root\x00")))
	return hex.EncodeToString(h.Sum(nil))
}

// journalSave puts the journal into st (its frames after the Python
// ones, its manifest in st.JS); hasJS says the session has a VM.
func (s *Session) journalSave(st *store.State, hasJS bool) {
	j := &s.persist.jrnl
	had := hasJS || j.pending != nil
	if !had && j.tap != nil {
		// The VM is gone (its instance failed): nothing to rebuild.
		j.drop("")
		j.dropped, j.tap, j.inst = "", nil, nil
	}
	frames := j.frames
	if j.pending != nil {
		frames = j.pending
	}
	m := jsManifest{V: jsJournalVersion, Had: had, Frames: len(frames), Dropped: j.dropped}
	if !had && s.persist.jsWhy != "" {
		m.Had, m.Dropped = true, s.persist.jsWhy // a reset its next cell has not told yet
	}
	if b, _ := json.Marshal(m); !bytes.Equal(b, j.manifest) {
		j.manifest = b // else the bytes saved last, which a store may tell unchanged
	}
	st.JS = j.manifest
	if len(frames) > 0 {
		st.PythonFrames = append(st.PythonFrames, frames...)
	}
}

// loadJournal splits a loaded record's frames into the Python state's and
// the JavaScript journal's, and returns the journal to replay, or why the
// JavaScript state cannot be rebuilt ("" when there was none).
func loadJournal(st *store.State, limit int64) (py []store.Frame, j jsJournal, why string, err error) {
	j.limit = journalLimit(limit)
	if len(st.JS) == 0 {
		return st.PythonFrames, j, "", nil
	}
	var m jsManifest
	if err := json.Unmarshal(st.JS, &m); err != nil {
		return nil, j, "", fmt.Errorf("its JavaScript journal's manifest does not decode: %v", err)
	}
	if m.Frames < 0 || m.Frames > len(st.PythonFrames) {
		return nil, j, "", fmt.Errorf("its JavaScript journal names %d frames; the record holds %d", m.Frames, len(st.PythonFrames))
	}
	cut := len(st.PythonFrames) - m.Frames
	py = st.PythonFrames[:cut:cut]
	switch {
	case !m.Had:
		return py, j, "", nil
	case m.V == 0:
		why = "it was saved by a wasmeval that kept no JavaScript journal"
	case m.V != jsJournalVersion:
		why = fmt.Sprintf("its JavaScript journal is of version %d; this wasmeval replays version %d", m.V, jsJournalVersion)
	case m.Dropped != "":
		why = m.Dropped
	case m.Frames == 0:
		why = "its JavaScript journal is empty"
	default:
		j.pending = slices.Clone(st.PythonFrames[cut:])
		return py, j, "", nil
	}
	j.dropped = why
	return py, j, why, nil
}

// rebuildJS rebuilds the session's JavaScript VM from the journal loaded
// with it (jsjournal.go's doc), before the session's first JavaScript cell
// since the load. When it cannot, JavaScript starts afresh and that cell
// says why (beforeCell's state_reset note).
func (s *Session) rebuildJS(ctx context.Context, j *jsJournal) {
	frames := j.pending
	j.pending = nil
	start := time.Now()
	inst, t, n, why := s.replayJournal(ctx, frames)
	if why != "" {
		if inst != nil {
			s.dropInstance("js")
		}
		// The cell starts a new VM and journal, and says why (beforeCell).
		j.inst, j.tap, j.frames, j.dropped = nil, nil, nil, ""
		if !slices.Contains(s.persist.reset, "js") {
			s.persist.reset = append(s.persist.reset, "js")
		}
		s.persist.jsWhy = why
		s.sb.opts.Logger.Warn("the session's JavaScript state could not be rebuilt from its journal", "root", s.opts.Root, "why", why)
		return
	}
	j.inst, j.tap, j.frames, j.n = inst, t, frames, n
	j.bytes = 0
	for _, f := range frames {
		j.bytes += int64(len(f.Data))
	}
	j.stamps = nil // the next entry holds the whole root: the rebuild put it back
	j.dropped = ""
	t.mu.Lock()
	t.mode, t.feed, t.rec = tapLive, nil, j.limit >= 0
	t.mu.Unlock()
	s.sb.opts.Logger.Info("the session's JavaScript state was rebuilt from its journal", "root", s.opts.Root, "cells", n, "ms", time.Since(start).Milliseconds())
}

// replayJournal runs the journal's cells on a new VM fed from it, each on
// the files as it found them, and puts the root back as it is now. It
// returns the VM, its tap and the number of cells, or why it could not.
func (s *Session) replayJournal(ctx context.Context, frames []store.Frame) (runtimes.Instance, *jsTap, int, string) {
	if err := journalCodec(); err != nil {
		return nil, nil, 0, fmt.Sprintf("its journal could not be read: %v", err)
	}
	root := s.opts.Root
	_, live, err := diffRoot(root, nil, time.Now(), false)
	if err != nil {
		return nil, nil, 0, fmt.Sprintf("its files could not be read: %v", err)
	}
	b := s.bound
	var lastStamp int64
	if b != nil {
		lastStamp = b.last.Load()
	}
	defer func() {
		if err := restoreRoot(root, live); err != nil {
			s.sb.opts.Logger.Error("putting the session's files back after rebuilding its JavaScript state", "root", root, "err", err)
		}
		if b != nil {
			b.last.Store(lastStamp)
		}
		if q := s.calls.DiskQuota(); q != nil {
			q.Remeasure()
		}
	}()
	t := s.newTap(tapReplay)
	t.feed = &jsFeed{}
	if b != nil && b.unstamp != nil {
		t.feed.onWall = func(ns int64) { b.last.Store(ns) }
	}
	files := map[string]store.File{}
	var inst runtimes.Instance
	fail := func(why string) (runtimes.Instance, *jsTap, int, string) { return inst, nil, 0, why }
	var entries []jsEntry
	for i, f := range frames {
		data, err := journalDec.DecodeAll(f.Data, nil)
		dec := json.NewDecoder(bytes.NewReader(data))
		for err == nil && dec.More() {
			entries = append(entries, jsEntry{})
			err = dec.Decode(&entries[len(entries)-1])
		}
		if err != nil {
			return fail(fmt.Sprintf("its journal's frame %d does not decode: %v", i+1, err))
		}
	}
	for i, e := range entries {
		name := fmt.Sprintf("cell %d of its journal (%s)", i+1, quote(excerpt(e.Code, 60)))
		if e.FullFiles {
			clear(files)
		}
		for _, f := range e.Files {
			if f.Deleted {
				delete(files, f.Path)
			} else {
				files[f.Path] = f
			}
		}
		state := make([]store.File, 0, len(files))
		for _, f := range files {
			state = append(state, f)
		}
		if err := restoreRoot(root, state); err != nil {
			return fail(fmt.Sprintf("the files %s found could not be put back: %v", name, err))
		}
		if inst == nil {
			t.feed.set(e.Start, e.Root, root)
			if inst, err = s.newTappedJS(ctx, t); err != nil {
				return fail(fmt.Sprintf("a JavaScript VM could not be started: %v", err))
			}
			if left := t.feed.left(); left != "" {
				return fail("the new VM's start diverged from the journal: " + left)
			}
		}
		if e.Clock != "" && e.Clock != "wall" {
			return fail(fmt.Sprintf("%s ran its timers on a clock this wasmeval does not know (%q)", name, e.Clock))
		}
		t.feed.set(e.Events, e.Root, root)
		t.feed.setWakes(e.Wakes)
		timeout := time.Duration(max(e.Timeout, 1)) * time.Second
		cctx, cancel := context.WithTimeout(ctx, timeout)
		cctx = js.WithCallOrder(js.WithTypeScript(cctx, e.Language == "ts"), true)
		if e.Clock == "wall" {
			cctx = js.WithWakeOrder(cctx, t.feed.wakeOrder()) // jsorder.go
		}
		sink := newCellSink(0, newBudget())
		var out runtimes.Outcome
		if e.Reset {
			err = inst.Reset(cctx)
		}
		if err == nil {
			out, err = safeRun(cctx, inst, e.Code, sink)
		}
		stopped := cctx.Err() != nil
		cancel()
		switch {
		case ctx.Err() != nil:
			return fail(fmt.Sprintf("the eval ended while %s was replayed", name))
		case err != nil:
			return fail(fmt.Sprintf("replaying %s failed in the host: %v", name, err))
		case stopped:
			return fail(fmt.Sprintf("replaying %s took longer than its timeout of %d s", name, max(e.Timeout, 1)))
		}
		if e.Noted != "" {
			sink.note(e.Noted)
		}
		failed := out.Failed || out.Interrupted || e.Noted != ""
		if left := t.feed.left(); left != "" {
			return fail(fmt.Sprintf("replaying %s diverged: %s", name, left))
		}
		if failed != e.Failed || entryOutput(e.Clock, sink, root) != e.Output {
			kept, _ := sink.out.full()
			return fail(fmt.Sprintf("replaying %s diverged: its output is not what it was (now %s)", name, quote(excerpt(strings.TrimSpace(string(kept)), 120))))
		}
	}
	if inst == nil {
		return nil, nil, 0, "its JavaScript journal is empty"
	}
	return inst, t, len(entries), ""
}
