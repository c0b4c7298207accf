package sandbox

import (
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/wasmeval/wasmeval/tape"
)

// Each runtime instance of a session (its Python and its JavaScript) reads
// clocks and random bytes through functions of its own (clocks), which
// know the instance: the two can read at once (an eval nested in a
// waiting cell of the other language runs on its own instance while the
// waiting cell goes on), so on a tape their reads interleave by timing,
// while each instance's own reads come in the order its guest decides. A
// recording says which instance read (a reader record where the reading
// instance changes), and a replay serves each instance its own reads
// (ReplayReaders). See docs/design.md, "Determinism, record and replay".

// clocks are what one runtime instance reads the clocks and randomness
// through.
type clocks struct {
	now      func() time.Time
	nanotime func() int64
	rand     io.Reader
	// sleep is a deterministic session's instance's (its virtual clock
	// moves on); nil: the boundary's.
	sleep func(ns int64) bool
}

// clocksOf are the clocks of the session's instance of lang (a runtime
// language: "py", "js").
func (b *boundary) clocksOf(lang string) clocks {
	if b.of != nil {
		return b.of(lang)
	}
	return clocks{now: b.now, nanotime: b.nanotime, rand: b.rand}
}

// shared makes b.of give every instance b's own clocks (before a step
// that wraps them by instance), when no step did so before.
func (b *boundary) shared() {
	if b.of != nil {
		return
	}
	now, nanotime, rnd := b.now, b.nanotime, b.rand
	b.of = func(string) clocks { return clocks{now: now, nanotime: nanotime, rand: rnd} }
}

// ReplayReaders is a ReplayFeed that serves each runtime instance its own
// recorded clock reads and random bytes (tape format 8), by the runtime
// language of the instance ("py", "js"), in the order that instance reads
// them; a tape without reader records serves all instances one stream.
type ReplayReaders interface {
	NowOf(lang string) time.Time
	NanotimeOf(lang string) int64
	ReadOf(lang string, p []byte) (int, error)
}

// replayClocks are the clocks of the instance of lang in a replay whose
// feed serves each instance its own reads.
func replayClocks(r ReplayReaders, lang string) clocks {
	return clocks{
		now:      func() time.Time { return r.NowOf(lang) },
		nanotime: func() int64 { return r.NanotimeOf(lang) },
		rand:     readerFunc(func(p []byte) (int, error) { return r.ReadOf(lang, p) }),
	}
}

// readerSwitch writes a reader record where the instance that reads
// changes, and keeps that record and the read's own together on the tape.
type readerSwitch struct {
	mu   sync.Mutex
	w    *tape.Writer
	last string // the instance that read last (tape.DefaultReader first)
}

// lock takes the tape for a read of lang's instance, writing a reader
// record first when another read last; the caller writes its read's
// record and unlocks.
func (r *readerSwitch) lock(lang string) {
	r.mu.Lock()
	if lang != r.last {
		r.w.Write(tape.Record{Type: tape.TypeReader, Lang: lang})
		r.last = lang
	}
}

// recordedClocks wraps the clocks of each instance (of) so that what it
// reads is written to w, after a reader record where the reading instance
// changes. The read itself happens under the switch's lock: each
// instance's reads are on the tape in the order they read, and the
// session's (a deterministic clock) in the order they were made.
func recordedClocks(w *tape.Writer, of func(string) clocks) func(string) clocks {
	sw := &readerSwitch{w: w, last: tape.DefaultReader}
	return func(lang string) clocks {
		if lang != tape.ReaderPython && lang != tape.ReaderJavaScript {
			lang = tape.DefaultReader // no other instance reads clocks
		}
		c := of(lang)
		now, nanotime, rnd := c.now, c.nanotime, c.rand
		return clocks{
			sleep: c.sleep,
			now: func() time.Time {
				sw.lock(lang)
				defer sw.mu.Unlock()
				// Without its monotonic reading: the guest's differences of
				// times (JavaScript's performance.now) are then what replay
				// computes.
				t := now().Round(0)
				ns := t.UnixNano()
				w.WriteClock(tape.ClockWall, ns)
				return t
			},
			nanotime: func() int64 {
				sw.lock(lang)
				defer sw.mu.Unlock()
				ns := nanotime()
				w.WriteClock(tape.ClockMono, ns)
				return ns
			},
			rand: readerFunc(func(p []byte) (int, error) {
				sw.lock(lang)
				defer sw.mu.Unlock()
				n, err := rnd.Read(p)
				if n > 0 {
					w.WriteRand(p[:n]) // encoded now: p is the guest's
				}
				return n, err
			}),
		}
	}
}

// A deterministic session gives each instance a virtual clock and a
// seeded random stream of its own: with one of each for the session, an
// eval nested in a waiting cell of the other language and that cell, run
// at once, took turns on them by timing, and two fresh runs printed other
// times and bytes. Each instance's reads come in the order its guest
// decides; at the start of each cell of a request (not nested: no other
// cell of the session runs then) every instance's clock is set to the
// furthest (cellStarts), so that a cell reads a later time than the cells
// before it read, in whichever language, and a session whose instances do
// not read at once reads the times one clock gave before.

// deterministicSeedJS seeds a deterministic session's JavaScript
// instance's randomness; its Python's is deterministicSeed.
var deterministicSeedJS = [32]byte([]byte("wasmeval deterministic seed js.."))

// detInstance is a deterministic session's clock and random stream of one
// instance; seeded is nil where the session's options give the
// randomness (Rand).
type detInstance struct {
	clock  *virtualClock
	seeded *lockedReader
}

// deterministic sets b up as a deterministic session's boundary: the
// virtual clocks and seeded streams of the Python and the JavaScript
// instance, with now and rnd (the session's options' Now and Rand) in
// place of the virtual wall clock and the seeded streams where not nil.
func (b *boundary) deterministic(now func() time.Time, rnd io.Reader) {
	b.det = map[string]*detInstance{}
	for lang, seed := range map[string][32]byte{tape.ReaderPython: deterministicSeed, tape.ReaderJavaScript: deterministicSeedJS} {
		d := &detInstance{clock: &virtualClock{}}
		if rnd == nil {
			d.seeded = &lockedReader{r: rand.NewChaCha8(seed)}
		}
		b.det[lang] = d
	}
	py := b.det[tape.ReaderPython]
	b.now, b.nanotime, b.rand = now, py.clock.nanotime, rnd
	if b.now == nil {
		b.now = py.clock.now
	}
	if b.rand == nil {
		b.rand = py.seeded
	}
	if now == nil {
		b.sleep = py.clock.sleep
	}
	b.of = func(lang string) clocks {
		d := b.det[lang]
		if d == nil {
			d = py // no other instance reads clocks
		}
		c := clocks{now: now, nanotime: d.clock.nanotime, rand: rnd}
		if c.now == nil {
			c.now = d.clock.now
		}
		if c.rand == nil {
			c.rand = d.seeded
		}
		if now == nil {
			c.sleep = d.clock.sleep
		}
		return c
	}
}

// cellStarts is called as a cell of a request (not a nested one) starts:
// no other cell of the session runs, so every instance's virtual clock is
// set to the furthest (of the reads and the sleeps), deterministically.
func (b *boundary) cellStarts() {
	if b == nil || b.det == nil {
		return
	}
	var reads int64
	var slept time.Duration
	for _, d := range b.det {
		d.clock.mu.Lock()
		reads, slept = max(reads, d.clock.reads), max(slept, d.clock.slept)
		d.clock.mu.Unlock()
	}
	for _, d := range b.det {
		d.clock.mu.Lock()
		d.clock.reads, d.clock.slept = reads, slept
		d.clock.mu.Unlock()
	}
}
