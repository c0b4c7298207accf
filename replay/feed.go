package replay

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/callorder"
	"github.com/wasmeval/wasmeval/runtimes/js"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// worldOps are the host calls that reach out of the sandbox: replay
// answers them from the tape. The others (files, output, budget) are
// served again, on the rebuilt root, and checked against the tape.
var worldOps = map[string]bool{"tool": true, "llm": true, "agent": true}

// call is a recorded host call.
type call struct {
	req, answer []byte
	made        int // its number among its cell's calls (format 3: JavaScript's; 4: Python's too)
	wait        int // the Python cell's wait that took its answer (format 4)
	used        bool
}

// inputs are what the guest read during one request, in order.
type inputs struct {
	// reads are the clock reads and random bytes of each runtime
	// instance, by its language (format 8: reader records); a tape of an
	// older format has one stream, tape.DefaultReader's, for all.
	reads  map[string]*reads
	calls  []*call
	stops  map[stopKey]*stop
	nested []*nestedReq
	// wakes are the JavaScript cells' event loops' wakes (format 6), by
	// cell, and wakeAt how many each has taken.
	wakes  map[stopKey][]js.Wake
	wakeAt map[stopKey]int
}

// reads are the clock reads and random bytes of one runtime instance
// during one request, and how many of each the replay has served.
type reads struct {
	wall, mono             []int64
	rand                   []byte
	wallAt, monoAt, randAt int
	randPast               bool // the guest read past the recorded random bytes
}

// readsOf are the reads of lang's instance in in, made when absent.
func (in *inputs) readsOf(lang string) *reads {
	r := in.reads[lang]
	if r == nil {
		if in.reads == nil {
			in.reads = map[string]*reads{}
		}
		r = &reads{}
		in.reads[lang] = r
	}
	return r
}

// stopKey names a stopped cell: its index in the request being replayed
// (n 0), or in the nested request n (format 4).
type stopKey struct{ n, cell int }

// nestedReq is a request recorded while a cell waited in a host call: it
// ran before the answer of calls[beforeCall] was recorded.
type nestedReq struct {
	req, result tape.Record
	beforeCall  int
	// beforeResult is how many calls the tape holds before its result:
	// the calls taken after it ended have their answers once it ran.
	beforeResult int
	ran          bool
	// after are the nested requests whose results the tape holds before
	// this request: they had ended when it began (a recording runs the
	// evals nested in one cell one at a time), so it waits for them;
	// done is closed once it ran.
	after []*nestedReq
	done  chan struct{}
	// wait is the waiting cell's wait for host calls in which it ran
	// (format 5; 0: the tape does not say); entered is closed once the
	// replayed one began to run in its waiting cell (NestedEntered).
	wait        int
	entered     chan struct{}
	enteredOnce sync.Once
	// beside is, for an eval none of whose cells ran inside its waiting
	// cell's runtime, the waiting cell's wait in which its first cell
	// began beside it (format 9; 0: the tape does not say); entered is
	// closed once the replayed one's did (BesideBegan).
	beside int
}

// at is the waiting cell's wait the eval ran or began in, 0 where the
// tape does not say: the calls that cell took in it or later are held
// until the eval has begun.
func (nr *nestedReq) at() int { return cmp.Or(nr.wait, nr.beside) }

// stop is a cell stopped when recorded (by its time limit, an interrupt,
// a cancellation).
type stop struct {
	at    runtimes.InterruptPoint
	cause string
	bytes int64
	// beforeStart: stopped before any of its code ran (format 3 on).
	beforeStart bool
	used        bool
}

// feed is the sandbox.ReplayFeed of a replay: it serves each request's
// recorded inputs and notes where the guest asked for something else.
type feed struct {
	mu sync.Mutex
	// roots are the recorded roots' paths and the replay's, in pairs: the
	// session's, and each fork's.
	roots []string
	local func([]byte) []byte
	// start is the recorded session's start (of the fork, after one).
	start int64
	// byOutput says whether the tape records the output a stopped cell
	// without fuel had written (format 2 on).
	byOutput bool
	// format is the tape's format version.
	format int
	// wakes says whether the tape records the JavaScript cells' wakes
	// (format 6, not deterministic): their timers then run on the wall
	// clock, the wakes replayed.
	wakes bool

	cur   *inputs
	n     int      // the request being replayed, from 1
	langs []string // its cells' languages
	// lastWall and lastMono are the clocks' last readings served to each
	// instance (by its reader), which reads past the tape's go on from.
	lastWall, lastMono map[string]int64
	spare              *rand.ChaCha8 // random bytes past the tape's

	// run runs a nested request in the session being replayed.
	run func(ctx context.Context, req sandbox.Request) (*sandbox.Result, error)
	// nestedLangs are the languages of the nested requests' cells, by
	// request, once they ran.
	nestedLangs map[int][]string

	divs    []Divergence // of the request being replayed
	inexact []string     // cells that cannot be replayed exactly

	// took says which of the request's recorded calls the replayed guest
	// has taken the answer of (ReplayTaken); tookCh is closed at each.
	took   []bool
	tookCh chan struct{}

	// held counts the calls CallOrdered holds until a nested request has
	// begun or ended, by the request and the cell that made them (its
	// progress); heldCh is closed at each change (NestedHeld).
	held   map[heldKey]int
	heldCh chan struct{}
}

// heldKey names the calls of one cell held for one nested request.
type heldKey struct {
	n    int
	cell *callorder.Progress
}

// begin starts request n, whose cells are of the languages langs, with
// its recorded inputs.
func (f *feed) begin(n int, in *inputs, langs []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cur, f.n, f.langs = in, n, langs
	for _, r := range in.reads {
		r.wallAt, r.monoAt, r.randAt, r.randPast = 0, 0, 0, false
	}
	f.divs = nil
	f.took, f.tookCh = make([]bool, len(in.calls)), make(chan struct{})
}

// tookLocked notes that the guest took the answer of recorded call
// index; the caller holds mu.
func (f *feed) tookLocked(index int) {
	if index >= 0 && index < len(f.took) && !f.took[index] {
		f.took[index] = true
		close(f.tookCh)
		f.tookCh = make(chan struct{})
	}
}

// waitTaken waits until the guest has taken the answers of the first n
// recorded calls (or ctx ends).
func (f *feed) waitTaken(ctx context.Context, n int) {
	for {
		f.mu.Lock()
		ch, all := f.tookCh, true
		for i := range min(n, len(f.took)) {
			if !f.took[i] {
				all = false
				break
			}
		}
		f.mu.Unlock()
		if all {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// end checks that request n used every recorded input, and returns its
// divergences.
func (f *feed) end() []Divergence {
	f.mu.Lock()
	defer f.mu.Unlock()
	in := f.cur
	for _, lang := range slices.Sorted(maps.Keys(in.reads)) {
		r, who := in.reads[lang], f.reader(lang)
		if r.wallAt < len(r.wall) {
			f.diverge("clock", fmt.Sprintf("%s read the wall clock %d times; the tape recorded %d reads", who, r.wallAt, len(r.wall)), "", "")
		}
		if r.monoAt < len(r.mono) {
			f.diverge("clock", fmt.Sprintf("%s read the monotonic clock %d times; the tape recorded %d reads", who, r.monoAt, len(r.mono)), "", "")
		}
		if r.randAt < len(r.rand) {
			f.diverge("random", fmt.Sprintf("%s read %d random bytes; the tape recorded %d", who, r.randAt, len(r.rand)), "", "")
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(in.stops), func(a, b stopKey) int { return cmp.Or(a.n-b.n, a.cell-b.cell) }) {
		if st := in.stops[k]; !st.used {
			f.divs = append(f.divs, Divergence{Request: f.request(k.n), Cell: k.cell, What: "stop",
				Message: fmt.Sprintf("the tape recorded this cell stopped by %s; the replay did not run it", stopWhat(st.cause))})
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(in.wakes), func(a, b stopKey) int { return cmp.Or(a.n-b.n, a.cell-b.cell) }) {
		// A stopped cell's loop took the wakes it had when it was
		// stopped: a replayed stop that comes elsewhere says so itself.
		if at, ws := in.wakeAt[k], in.wakes[k]; at < len(ws) && in.stops[k] == nil {
			f.divs = append(f.divs, Divergence{Request: f.request(k.n), Cell: k.cell, What: "wake",
				Message: fmt.Sprintf("the cell's event loop woke %s; the tape recorded %d wakes: the cell ended before the next, %s (the order of its timers and host calls' answers differs from the recorded one)", times(at), len(ws), ws[at])})
		}
	}
	for _, nr := range in.nested {
		if !nr.ran {
			f.divs = append(f.divs, Divergence{Request: nr.req.N, Cell: -1, What: "nested request",
				Message: "the tape recorded this eval inside a waiting cell's host call; the replay made no such call"})
		}
	}
	for _, c := range in.calls {
		if !c.used {
			f.diverge("host call", "the guest did not make a host call that the tape recorded", string(c.req), "")
		}
	}
	divs := f.divs
	f.divs = nil
	return divs
}

// diverge notes a divergence; the caller holds mu.
func (f *feed) diverge(what, msg, expected, got string) {
	f.divs = append(f.divs, Divergence{Request: f.n, Cell: -1, What: what, Message: msg, Expected: expected, Got: got})
}

// streamOf is the name of the stream of reads the instance of lang is
// served: its own from format 8 on, else the one stream of the tape.
func (f *feed) streamOf(lang string) string {
	if f.format < 8 || lang != tape.ReaderJavaScript {
		return tape.DefaultReader
	}
	return lang
}

// reader names the reader of a stream in a divergence: the guest, or,
// from format 8 on, its instance.
func (f *feed) reader(stream string) string {
	switch {
	case f.format < 8:
		return "the guest"
	case stream == tape.ReaderJavaScript:
		return "the guest's JavaScript instance"
	}
	return "the guest's Python instance"
}

// Now implements sandbox.ReplayFeed: the default reader's next wall
// clock read.
func (f *feed) Now() time.Time { return f.NowOf(tape.DefaultReader) }

// Nanotime implements sandbox.ReplayFeed.
func (f *feed) Nanotime() int64 { return f.NanotimeOf(tape.DefaultReader) }

// Read implements sandbox.ReplayFeed.
func (f *feed) Read(p []byte) (int, error) { return f.ReadOf(tape.DefaultReader, p) }

// NowOf implements sandbox.ReplayReaders: the next wall clock read of
// the instance of lang, from its own recorded reads (format 8).
func (f *feed) NowOf(lang string) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.streamOf(lang)
	r := f.cur.readsOf(st)
	if f.lastWall == nil {
		f.lastWall, f.lastMono = map[string]int64{}, map[string]int64{}
	}
	if r.wallAt < len(r.wall) {
		f.lastWall[st] = r.wall[r.wallAt]
	} else {
		if r.wallAt == len(r.wall) {
			f.diverge("clock", fmt.Sprintf("%s read the wall clock more often than the tape recorded (%d reads)", f.reader(st), len(r.wall)), "", "")
		}
		f.lastWall[st] += int64(time.Millisecond)
	}
	r.wallAt++
	return time.Unix(0, f.lastWall[st])
}

// NanotimeOf implements sandbox.ReplayReaders.
func (f *feed) NanotimeOf(lang string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.streamOf(lang)
	r := f.cur.readsOf(st)
	if f.lastMono == nil {
		f.lastWall, f.lastMono = map[string]int64{}, map[string]int64{}
	}
	if r.monoAt < len(r.mono) {
		f.lastMono[st] = r.mono[r.monoAt]
	} else {
		if r.monoAt == len(r.mono) {
			f.diverge("clock", fmt.Sprintf("%s read the monotonic clock more often than the tape recorded (%d reads)", f.reader(st), len(r.mono)), "", "")
		}
		f.lastMono[st] += int64(time.Millisecond)
	}
	r.monoAt++
	return f.lastMono[st]
}

// ReadOf implements sandbox.ReplayReaders.
func (f *feed) ReadOf(lang string, p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.streamOf(lang)
	r := f.cur.readsOf(st)
	n := 0
	if r.randAt < len(r.rand) {
		n = copy(p, r.rand[r.randAt:])
	}
	if n < len(p) {
		if !r.randPast {
			r.randPast = true
			f.diverge("random", fmt.Sprintf("%s read more random bytes than the tape recorded (%d)", f.reader(st), len(r.rand)), "", "")
		}
		if f.spare == nil {
			f.spare = rand.NewChaCha8([32]byte{})
		}
		f.spare.Read(p[n:])
	}
	r.randAt += len(p)
	return len(p), nil
}

// Start implements sandbox.ReplayFeed.
func (f *feed) Start() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.start == 0 {
		return time.Time{}
	}
	return time.Unix(0, f.start).UTC()
}

// request is the number on the tape of request n as the sandbox names it
// (ReplayFeed.Stop): 0 is the request being replayed.
func (f *feed) request(n int) int {
	if n == 0 {
		return f.n
	}
	return n
}

// Stop implements sandbox.ReplayFeed.
func (f *feed) Stop(request, cell int) (sandbox.ReplayStop, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.cur.stops[stopKey{request, cell}]
	if !ok {
		return sandbox.ReplayStop{}, false
	}
	if !st.used { // the session may ask more than once
		st.used = true
		if note := f.stopNote(request, cell, st); note != "" {
			f.inexact = append(f.inexact, note)
		}
	}
	return sandbox.ReplayStop{At: st.at, Cause: st.cause, Bytes: st.bytes, ByOutput: f.byOutput, BeforeStart: st.beforeStart}, true
}

// stopNote is the Report.NotExact line of a recorded stop that the replay
// cannot deliver at the recorded point, or "" for one it can: a stop at a
// fuel check, sleep or host-call wait (Python), or before the cell
// started. The caller holds mu.
func (f *feed) stopNote(request, cell int, st *stop) string {
	if st.beforeStart || !st.at.IsZero() {
		return ""
	}
	langs := f.langs
	if request != 0 {
		langs = f.nestedLangs[request]
	}
	lang := ""
	if cell < len(langs) {
		lang = langs[cell]
	}
	n := f.request(request)
	if lang == "py" {
		if f.format >= 3 {
			// Stopped before its Run began any of its code (its context
			// was done when the runtime got it): the replayed Run, given
			// a done context, returns at once too.
			return ""
		}
		return fmt.Sprintf("request %d, cell %d: stopped by %s when recorded, at a point a tape of format %d cannot name (before the cell started, or while it waited for a host call's answer): replayed as stopped before it ran, so if it had run, its output and state may differ", n, cell, stopWhat(st.cause), f.format)
	}
	how := "replayed with a real timer"
	if f.byOutput {
		how = fmt.Sprintf("stopped once it had written the same output (%d bytes)", st.bytes)
	}
	return fmt.Sprintf("request %d, cell %d: stopped by %s when recorded, at a point the tape cannot name (JavaScript meters no fuel): %s, so its output and state may differ", n, cell, stopWhat(st.cause), how)
}

// Stopped implements sandbox.ReplayStopped: a replayed interrupt that
// came at another point than the recorded one (another fuel check or
// sleep, or the same check after another amount of fuel) is a divergence,
// named before the output it changes.
func (f *feed) Stopped(request, cell int, at runtimes.InterruptPoint) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.cur.stops[stopKey{request, cell}]
	if !ok || st.at.IsZero() || at == st.at {
		return
	}
	if n := len(f.roots); n >= 2 && len(f.roots[n-2]) != len(f.roots[n-1]) {
		// Expected: see Player.rootDir. The output may still match.
		f.inexact = append(f.inexact, fmt.Sprintf("request %d, cell %d: stopped by %s when recorded %s, replayed %s: the replay's root path (%d bytes) is not as long as the recorded one (%d bytes), which moves the guest's fuel checks a little; replay in a folder whose path has the recorded length, or let the replay choose one (no --cwd)",
			f.request(request), cell, stopWhat(st.cause), pointText(st.at), pointText(at), len(f.roots[n-1]), len(f.roots[n-2])))
		return
	}
	f.divs = append(f.divs, Divergence{Request: f.request(request), Cell: cell, What: "stop",
		Message:  fmt.Sprintf("the replayed interrupt (%s) came at another point of the cell's work than the recorded one", stopWhat(st.cause)),
		Expected: pointText(st.at), Got: pointText(at)})
}

// pointText describes an interrupt point.
func pointText(p runtimes.InterruptPoint) string {
	switch {
	case p.IsZero():
		return "not interrupted"
	case p.Sleeps > 0:
		return fmt.Sprintf("in sleep %d, after %d units of fuel", p.Sleeps, p.Fuel)
	case p.Waits > 0:
		return fmt.Sprintf("in host-call wait %d, after %d units of fuel", p.Waits, p.Fuel)
	}
	return fmt.Sprintf("at fuel check %d, after %d units of fuel", p.Checks, p.Fuel)
}

// stopWhat names a stop's cause in a sentence.
func stopWhat(cause string) string {
	switch cause {
	case tape.CauseTimeout, tape.CauseHardLimit:
		return "its " + cause
	case tape.CauseInterrupt:
		return "an interrupt"
	case tape.CauseCancel:
		return "a cancellation"
	case tape.CauseClosed:
		return "the session's close"
	}
	return cause
}

// setRoots sets the recorded roots' paths and the replay's: old, new, ...
func (f *feed) setRoots(pairs ...string) {
	f.roots = pairs
	var args []string
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i] != "" && pairs[i] != pairs[i+1] {
			args = append(args, pairs[i], pairs[i+1])
		}
	}
	// The longest first: a root may lie inside another's folder.
	type pair struct{ old, new string }
	var ps []pair
	for i := 0; i < len(args); i += 2 {
		ps = append(ps, pair{args[i], args[i+1]})
	}
	slices.SortStableFunc(ps, func(a, b pair) int { return len(b.old) - len(a.old) })
	args = args[:0]
	for _, p := range ps {
		args = append(args, p.old, p.new)
	}
	if len(args) == 0 {
		f.local = func(b []byte) []byte { return b }
		return
	}
	r := strings.NewReplacer(args...)
	f.local = func(b []byte) []byte {
		if !bytes.Contains(b, []byte("/")) {
			return b
		}
		// The recorded root comes from the tape: a short one ("/") in a
		// result full of it made each byte of the tape tens of bytes
		// here (8 MiB of slashes took 1.4 GiB). Past maxLocalGrowth the
		// text is compared as recorded, and differs.
		grow := 0
		for i := 0; i+1 < len(args); i += 2 {
			if d := len(args[i+1]) - len(args[i]); d > 0 {
				grow += bytes.Count(b, []byte(args[i])) * d
			}
		}
		if grow > maxLocalGrowth {
			return b
		}
		return []byte(r.Replace(string(b)))
	}
}

// maxLocalGrowth is the most putting the replay's roots in place of the
// recorded ones may add to one recorded text.
const maxLocalGrowth = 16 << 20

// reversed maps the replay's roots back to the recorded ones.
func (f *feed) reversed() func([]byte) []byte {
	back := &feed{}
	var pairs []string
	for i := 0; i+1 < len(f.roots); i += 2 {
		pairs = append(pairs, f.roots[i+1], f.roots[i])
	}
	back.setRoots(pairs...)
	return back.local
}

// Call implements sandbox.ReplayFeed.
func (f *feed) Call(ctx context.Context, request []byte, serve func(context.Context, []byte) []byte) []byte {
	return f.CallOrdered(ctx, request, 0, serve, nil)
}

// CallOrdered implements sandbox.ReplayOrdered: a JavaScript call is
// matched by its request and its number among its cell's calls (made),
// where the tape has one, so that calls of the same request get the
// answers they got when recorded; matched learns which recorded call it
// is, whose place among the request's calls is the order the recorded
// guest took their answers in.
func (f *feed) CallOrdered(ctx context.Context, request []byte, made int, serve func(context.Context, []byte) []byte, matched func(int)) []byte {
	req := compact(request)
	var op struct {
		Op string `json:"op"`
	}
	json.Unmarshal(req, &op)
	f.mu.Lock()
	var rec *call
	ci := -1
	for i, c := range f.cur.calls {
		if !c.used && (made == 0 || c.made == 0 || c.made == made) && bytes.Equal(f.local(c.req), req) {
			c.used, rec, ci = true, c, i
			break
		}
	}
	if matched != nil {
		matched(ci)
	}
	// The evals nested in the waiting cell that began before this call's
	// answer was taken run (here, or in the call that runs them); those
	// that ended before it have ended before it is answered. An eval the
	// tape places in a wait (format 5) is run by a call answered after it
	// ended, as the one its host ran it in was: one answered before would
	// hold the answer its wait needs.
	// And a Python call whose answer the guest took in the wait an eval
	// ran in (format 5), or a later one, after that eval began to run
	// there, is answered once it has: else the wait could take it first,
	// and the eval would run in the next.
	var nested, before, entering []*nestedReq
	// The request whose cell made the call: a call of the nested eval's
	// own cells is not one its waiting cell takes in a wait.
	from := sandbox.ReplayedRequestOf(ctx)
	for _, nr := range f.cur.nested {
		runs := nr.at() == 0 || nr.beforeResult <= ci || nr.beforeResult >= len(f.cur.calls)
		switch {
		case ci < 0:
		case nr.beforeCall <= ci && runs && !nr.ran:
			nr.ran = true
			nested = append(nested, nr)
		case nr.at() > 0 && nr.beforeCall <= ci && rec.wait >= nr.at() && from != nr.req.N:
			entering = append(entering, nr)
		}
		if ci >= 0 && nr.beforeResult <= ci {
			before = append(before, nr)
		}
	}
	if rec == nil {
		expected := ""
		for _, c := range f.cur.calls {
			if !c.used {
				expected = string(f.local(c.req))
				break
			}
		}
		f.diverge("host call", "the guest made a host call that the tape does not expect", expected, string(req))
	}
	f.mu.Unlock()
	// The evals the waiting cell's host ran in the session meanwhile, in
	// order, before the recorded answer.
	for _, nr := range nested {
		f.runNested(ctx, nr)
	}
	cell := callorder.ProgressOf(ctx)
	for _, nr := range entering {
		f.hold(nr, cell, 1)
		select {
		case <-nr.entered:
		case <-nr.done:
		case <-ctx.Done():
		}
		f.hold(nr, cell, -1)
	}
	for _, nr := range before {
		f.hold(nr, cell, 1)
		select {
		case <-nr.done:
		case <-ctx.Done():
		}
		f.hold(nr, cell, -1)
	}
	if matched == nil {
		// Not ordered (no ticket): its answer counts as taken now.
		f.mu.Lock()
		f.tookLocked(ci)
		f.mu.Unlock()
	}
	if worldOps[op.Op] {
		if rec == nil {
			b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": "replay: this call is not on the tape, so it has no recorded answer"}})
			return b
		}
		return f.local(rec.answer)
	}
	got := serve(ctx, request)
	if rec != nil {
		if want := f.local(rec.answer); !bytes.Equal(want, compact(got)) {
			f.mu.Lock()
			f.diverge("host call", fmt.Sprintf("the %s call answered differently from the tape", op.Op), string(want), string(compact(got)))
			f.mu.Unlock()
		}
	}
	return got
}

// Taken implements sandbox.ReplayTaken: a replayed guest that took a
// call's answer in another of its waits for host calls (a Python cell's
// call_wait) than the recorded one diverged there, as a tape whose calls
// were reordered does: the call is named, with both waits.
func (f *feed) Taken(index, wait int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tookLocked(index)
	if f.format < 4 || index < 0 || index >= len(f.cur.calls) {
		return // a tape that does not record the waits
	}
	c := f.cur.calls[index]
	if c.wait == wait || c.wait == 0 && f.format < 7 {
		// Before format 7 a JavaScript call has no wait (nor has a
		// Python one never taken).
		return
	}
	f.diverge("host call", fmt.Sprintf("the guest took the answer of this call (its call %d) %s; the tape recorded it taken %s, so the answers reached the guest in another order than recorded",
		c.made, waitText(wait), waitText(c.wait)), string(f.local(c.req)), "")
}

// hold counts a call of cell that CallOrdered holds for nested request
// nr (by 1, then by -1 once it lets it go).
func (f *feed) hold(nr *nestedReq, cell *callorder.Progress, by int) {
	if cell == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held == nil {
		f.held = map[heldKey]int{}
	}
	k := heldKey{nr.req.N, cell}
	if f.held[k] += by; f.held[k] == 0 {
		delete(f.held, k)
	}
	if f.heldCh != nil {
		close(f.heldCh)
		f.heldCh = nil
	}
}

// NestedHeld implements sandbox.ReplayHeld.
func (f *feed) NestedHeld(n int, cell *callorder.Progress) (int, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.heldCh == nil {
		f.heldCh = make(chan struct{})
	}
	return f.held[heldKey{n, cell}], f.heldCh
}

// times is n as a count of times: "once", "2 times".
func times(n int) string {
	switch n {
	case 0:
		return "not once"
	case 1:
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// RecordsWakes implements sandbox.ReplayWakes.
func (f *feed) RecordsWakes() bool { return f.wakes }

// NextWake implements sandbox.ReplayWakes.
func (f *feed) NextWake(request, cell int) (js.Wake, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k, in := stopKey{request, cell}, f.cur
	if in.wakeAt == nil {
		in.wakeAt = map[stopKey]int{}
	}
	at := in.wakeAt[k]
	in.wakeAt[k] = at + 1
	if at >= len(in.wakes[k]) {
		return js.Wake{}, false
	}
	return in.wakes[k][at], true
}

// WakeDiverged implements sandbox.ReplayWakes: a loop that could not
// follow the recorded wakes is a divergence of its cell, saying why.
func (f *feed) WakeDiverged(request, cell int, why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.divs = append(f.divs, Divergence{Request: f.request(request), Cell: cell, What: "wake",
		Message: why + " (the order of its timers and host calls' answers differs from the recorded one)"})
}

// nestedLocked is the nested request n of the request being replayed, or
// nil; the caller holds mu.
func (f *feed) nestedLocked(n int) *nestedReq {
	for _, nr := range f.cur.nested {
		if nr.req.N == n {
			return nr
		}
	}
	return nil
}

// NestedWait implements sandbox.ReplayNested.
func (f *feed) NestedWait(n int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if nr := f.nestedLocked(n); nr != nil {
		return nr.wait
	}
	return 0
}

// NestedEntered implements sandbox.ReplayNested: a nested eval that ran
// in another wait of the cell it ran inside than the recorded one is a
// divergence naming it and both waits.
func (f *feed) NestedEntered(n, wait int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	nr := f.enteredLocked(n)
	if nr == nil || nr.wait == 0 || nr.wait == wait {
		return
	}
	f.divs = append(f.divs, Divergence{Request: n, Cell: -1, What: "nested request",
		Message: fmt.Sprintf("the replayed eval (nested request %d) ran inside its waiting cell in that cell's wait %d for host calls; the tape recorded it in wait %d",
			n, wait, nr.wait),
		Expected: fmt.Sprintf("in wait %d", nr.wait), Got: fmt.Sprintf("in wait %d", wait)})
}

// enteredLocked (f.mu held) marks nested request n as begun, waking what
// waits for it, and returns it (nil if the tape has no such request).
func (f *feed) enteredLocked(n int) *nestedReq {
	nr := f.nestedLocked(n)
	if nr != nil {
		nr.enteredOnce.Do(func() { close(nr.entered) })
	}
	return nr
}

// BesideWait implements sandbox.ReplayBeside.
func (f *feed) BesideWait(n int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if nr := f.nestedLocked(n); nr != nil {
		return nr.beside
	}
	return 0
}

// BesideBegan implements sandbox.ReplayBeside: a nested eval whose first
// cell began beside its waiting cell (on an instance of its own) in
// another of that cell's waits than the recorded one is a divergence
// naming it and both waits: it saw another state of that cell's work.
func (f *feed) BesideBegan(n, wait int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	nr := f.enteredLocked(n)
	if nr == nil || nr.beside == 0 || nr.beside == wait {
		return
	}
	got, where := fmt.Sprintf("in wait %d", wait), fmt.Sprintf("in that cell's wait %d for host calls", wait)
	if wait == 0 {
		got, where = "after the cell ended", "after that cell ended"
	}
	f.divs = append(f.divs, Divergence{Request: n, Cell: -1, What: "nested request",
		Message: fmt.Sprintf("the replayed eval (nested request %d) began its first cell beside its waiting cell (on an instance of its own) %s; the tape recorded it in wait %d",
			n, where, nr.beside),
		Expected: fmt.Sprintf("in wait %d", nr.beside), Got: got})
}

// waitText says in which wait a call's answer was taken.
func waitText(wait int) string {
	if wait == 0 {
		return "in none of its waits (the cell ended first)"
	}
	return fmt.Sprintf("in its wait %d for host calls", wait)
}

// compact is JSON without insignificant space (as the recorder writes it).
func compact(b []byte) []byte {
	var v json.RawMessage
	if json.Unmarshal(b, &v) == nil {
		if c, err := json.Marshal(v); err == nil {
			return c
		}
	}
	q, _ := json.Marshal(string(b))
	return q
}

// split groups a tape's events by request: what was read between a
// request and its result, and before it since the previous result.
// A fork record is kept by the number of the request after it.
func split(events []tape.Record) (reqs []tape.Record, results map[int]tape.Record, ins map[int]*inputs, forks map[int]tape.Record, err error) {
	results, ins, forks = map[int]tape.Record{}, map[int]*inputs{}, map[int]tape.Record{}
	nestedN := map[int]*nestedReq{}
	pending := &inputs{}
	// The instance whose reads these are (format 8; the one stream before).
	reader := tape.DefaultReader
	for _, e := range events {
		switch e.Type {
		case tape.TypeReader:
			reader = e.Lang
		case tape.TypeRequest:
			if e.Nested {
				nr := &nestedReq{req: e, beforeCall: len(pending.calls), beforeResult: math.MaxInt, done: make(chan struct{}), entered: make(chan struct{})}
				for _, prev := range pending.nested {
					if prev.result.Type != "" {
						nr.after = append(nr.after, prev)
					}
				}
				pending.nested = append(pending.nested, nr)
				nestedN[e.N] = nr
				continue
			}
			if e.N != len(reqs)+1+len(nestedN) {
				return nil, nil, nil, nil, fmt.Errorf("replay: the tape's request %d follows request %d; requests are numbered 1, 2, 3, ...", e.N, len(reqs)+len(nestedN))
			}
			reqs = append(reqs, e)
			ins[e.N] = pending
		case tape.TypeResult:
			if e.Nested {
				if nr, ok := nestedN[e.N]; ok {
					nr.result, nr.beforeResult, nr.wait, nr.beside = e, len(pending.calls), e.Wait, e.Beside
				}
				continue
			}
			if _, ok := ins[e.N]; !ok {
				return nil, nil, nil, nil, fmt.Errorf("replay: the tape holds a result of request %d before the request", e.N)
			}
			results[e.N] = e
			pending = &inputs{}
		case tape.TypeClock:
			if r := pending.readsOf(reader); e.Clock == tape.ClockWall {
				r.wall = append(r.wall, *e.NS)
			} else {
				r.mono = append(r.mono, *e.NS)
			}
		case tape.TypeRand:
			r := pending.readsOf(reader)
			r.rand = append(r.rand, e.Data...)
		case tape.TypeCall:
			pending.calls = append(pending.calls, &call{req: e.Call, answer: e.Answer, made: e.Made, wait: e.Wait})
		case tape.TypeFork:
			if e.Header == nil {
				return nil, nil, nil, nil, errors.New("replay: the tape is of a forked session and does not hold the session it was forked from " +
					"(recorded by a wasmeval older than tape format 2, or the source's tape was longer than 32 MiB): it started from that session's state " +
					"(its Python globals, its files); replay the source's tape, or record the fork with this wasmeval")
			}
			forks[len(reqs)+len(nestedN)+1] = e
			reader = tape.DefaultReader // the fork's recorder starts afresh
		case tape.TypeWake:
			if pending.wakes == nil {
				pending.wakes = map[stopKey][]js.Wake{}
			}
			k := stopKey{e.N, e.Cell}
			w := js.Wake{Timer: e.Timer, Call: e.Made}
			if e.NS != nil {
				w.Due = *e.NS
			}
			pending.wakes[k] = append(pending.wakes[k], w)
		case tape.TypeStop:
			if pending.stops == nil {
				pending.stops = map[stopKey]*stop{}
			}
			pending.stops[stopKey{e.N, e.Cell}] = &stop{at: runtimes.InterruptPoint{Checks: e.Checks, Sleeps: e.Sleeps, Waits: e.Waits, Fuel: e.Fuel}, cause: e.Cause, bytes: e.Bytes, beforeStart: e.BeforeStart}
		}
	}
	return reqs, results, ins, forks, nil
}

// runNested runs a nested request and compares its result, once the
// nested requests that had ended when it began have (nestedReq.after):
// two evals nested at once (two sub-agents) replay in the order they
// ran, whichever of their calls is made first.
func (f *feed) runNested(ctx context.Context, nr *nestedReq) {
	defer close(nr.done)
	for _, prev := range nr.after {
		select {
		case <-prev.done:
		case <-ctx.Done():
		}
	}
	// It began, when recorded, after the guest had taken the answers of
	// the calls the tape holds before it: it runs once the replayed guest
	// has too, in the wait (Python's call_wait) that came next, not in an
	// earlier one that the call which runs it was made in.
	f.waitTaken(ctx, nr.beforeCall)
	var divs []Divergence
	req, err := sandbox.DecodeRequest(f.local(nr.req.Request))
	switch {
	case err != nil:
		divs = []Divergence{{Request: nr.req.N, Cell: -1, What: "nested request", Message: fmt.Sprintf("the tape's request is not valid: %v", err)}}
	case f.run == nil:
		divs = []Divergence{{Request: nr.req.N, Cell: -1, What: "nested request", Message: "no session to run it in"}}
	default:
		langs := make([]string, len(req.Cells))
		for i, c := range req.Cells {
			langs[i] = c.Language
		}
		f.mu.Lock()
		if f.nestedLangs == nil {
			f.nestedLangs = map[int][]string{}
		}
		f.nestedLangs[nr.req.N] = langs
		f.mu.Unlock()
		// Its cells' stops are request N's on the tape (format 4).
		res, evalErr := f.run(sandbox.WithReplayedRequest(ctx, nr.req.N), req)
		if nr.result.Type == "" {
			divs = []Divergence{{Request: nr.req.N, Cell: -1, What: "result", Message: "the tape holds no result of this nested request"}}
		} else {
			divs = compareResult(nr.req.N, f, nr.result, res, evalErr)
		}
	}
	f.mu.Lock()
	f.divs = append(f.divs, divs...)
	f.mu.Unlock()
}
