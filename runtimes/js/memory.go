package js

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/wasmeval/wasmeval/internal/goja"
)

// Memory.
//
// goja has no memory limit and allocates on the Go heap that every session
// of the process shares, so the heap's growth says nothing about which
// session grew. A session's limit (InstanceOptions.MemoryLimitBytes) caps
// the session's own size: what its VM holds beyond a fresh VM's, measured by
// walking the VM (walk.go), across cells.
//
// Walks cost time in proportion to the session's data, so they happen only
// when the session could have grown over its limit since it was last
// measured:
//
//   - at the end of a cell, where the VM is idle, when what the process
//     allocated while the session's cells ran since its last walk could
//     take it over its limit, or past an eighth of it (sizebound.go);
//   - while a cell runs, when the process's memory monitor (one goroutine,
//     ticking every 10 ms while any cell runs) sees the live heap grow: a
//     cell waiting for a timer or a host call is walked by the monitor,
//     under the instance's vmMu; a cell running JavaScript is asked to walk
//     itself at its next safe point: any host function (console, Date.now,
//     Math.random, timers, the prelude's allocation guards) and every
//     65536th turn of every loop that calls code or makes objects
//     (source.go counts them; growth.go);
//   - before a built-in makes a big string or array: the prelude's guards
//     ask the host to reserve its size.
//
// A running cell that reaches no safe point in time (a short loop of
// `s = s + s`, each turn a native copy of the whole string) cannot be
// walked. The monitor then judges it by the live heap: the growth since the
// cell started that what the other sessions are known to hold does not
// account for. When the heap grows by more than burstBytes within one check,
// the cell whose thread faulted the fresh pages in (each cell runs on a
// thread of its own while it runs; Linux counts each thread's page faults)
// is judged at once, before its copy is done. When two or more running
// cells could own the growth, page faults tell which; a cell that only
// computes faults no fresh pages in. Without page fault counts (not Linux),
// the monitor waits for the cells to measure themselves, then samples their
// stacks.
//
// A cell that takes its session past the limit is interrupted with a
// RangeError. When a cell ends with its session over the limit, the global
// bindings the cell created are released (deleted, or set to undefined when
// they cannot be deleted), and the cell fails saying what the session
// holds now; a session that is still over its limit may run cells, but they
// may not grow it.
//
// Single huge allocations are refused before they happen by the prelude's
// guards (guards.js, JSON.parse's estimate, source.go's BigInt guards)
// and by the goja fork itself, whose built-ins announce every allocation
// of 1 MiB or more (a string, a step of an array's growth, a buffer) to
// reserve before they make it (internal/goja/native_alloc.go): native
// code cannot be stopped once it runs. A concatenation of two long
// strings (`s = s + s`) reserves its result before goja copies it
// (source.go rewrites +), so a doubling string stops near the limit;
// before, the copy that crossed it completed before the interrupt landed,
// and the heap peaked at about three times the limit. Templates of two
// or more substitutions reserve theirs too (templates.go).

const (
	memCheckInterval = 5 * time.Millisecond
	// answerWait is how long the monitor waits for a cell to measure
	// itself when another running cell could own the heap's growth.
	answerWait = 50 * time.Millisecond
	// silentWait is how long it waits when the page faults of two or more
	// silent cells do not tell which grows, before it samples their stacks.
	silentWait = 500 * time.Millisecond
	// growingFaults are the page faults that show a thread growing its data:
	// 16 MiB of fresh pages.
	growingFaults = 4096
	// burstBytes is a growth of the heap within one check that only big
	// allocations make.
	burstBytes = 32 << 20
	// minWalkGrowth is the live heap growth below which a session's last
	// measurement stands.
	minWalkGrowth = 4 << 20
	// bigReserve is the smallest reservation that may collect the heap's
	// garbage first (reserve).
	bigReserve = 4 << 20
)

func ptr[T any](v T) *T { return &v }

// memoryLimitError is why a cell was stopped for its session's memory.
type memoryLimitError struct {
	limit, size int64
	estimated   bool // judged by the live heap, not measured
}

func (e *memoryLimitError) Error() string {
	if e.estimated {
		return fmt.Sprintf("memory limit exceeded: the session's heap grew to about %d MiB, more than its limit of %d MiB",
			e.size>>20, e.limit>>20)
	}
	return fmt.Sprintf("memory limit exceeded: the session holds %d MiB, more than its limit of %d MiB",
		e.size>>20, e.limit>>20)
}

// heapStats returns the bytes of live heap as of the last garbage
// collection, and of all heap objects now (garbage included).
func heapStats() (live, total int64) {
	live, total, _ = heapState()
	return live, total
}

// heapState is heapStats with the number of collections so far.
func heapState() (live, total int64, cycles uint64) {
	m := markNow()
	return m.live, m.total, m.cycles
}

// heapMark is the heap as a measurement of a session saw it.
type heapMark struct {
	live, total int64
	cycles      uint64
	// allocs is the bytes the process had allocated on its heap so far
	// (/gc/heap/allocs:bytes, which nothing lowers).
	allocs uint64
}

func markNow() heapMark {
	s := [4]metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s[:])
	var m heapMark
	if s[0].Value.Kind() == metrics.KindUint64 {
		m.live = int64(s[0].Value.Uint64())
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		m.total = int64(s[1].Value.Uint64())
	}
	if s[2].Value.Kind() == metrics.KindUint64 {
		m.cycles = s[2].Value.Uint64()
	}
	if s[3].Value.Kind() == metrics.KindUint64 {
		m.allocs = s[3].Value.Uint64()
	}
	return m
}

// grownSince is an upper bound of how much any session can have grown since
// m: the bytes the process allocated since. What a session holds now that
// it did not hold at m was allocated after m (what was garbage then stays
// garbage). The heap's own readings are no bound: the live heap is as of
// the last collection, and misses what was allocated after it ended; it
// and the heap with its garbage fall when anything else lets go (another
// session, the garbage swept after a collection), which hides as much
// growth.
func (m heapMark) grownSince(now heapMark) int64 {
	return int64(now.allocs - m.allocs)
}

// guard is one running cell's: it interrupts the cell's VM when the cell's
// context is done or its session grows past its limit, and only while the
// cell runs.
type guard struct {
	in *instance
	// vm is the VM of the cell, taken when the guard starts: the
	// instance's may be replaced or closed after the cell, and the guard
	// must never reach that one.
	vm    *goja.Runtime
	limit int64
	goid  int64 // the goroutine running the cell
	// tid is the thread the cell's goroutine is locked to while it runs
	// JavaScript, 0 while it waits (see relock).
	tid atomic.Int64

	started              time.Time
	startSize, startLive int64
	// othersStart is what the other sessions were known to hold when the
	// cell started.
	othersStart int64

	// size is the session's size as last measured, mark the heap then,
	// measuredAt the time.
	size, measuredAt atomic.Int64
	mark             atomic.Pointer[heapMark]
	// walkCost is how long reserve's last walk of the session took.
	walkCost atomic.Int64
	// want asks the cell to measure itself at its next safe point; asked
	// is when it was first asked (zero when not).
	want  atomic.Bool
	asked atomic.Int64
	// faultsStart are the page faults of thread faultsTid when the monitor
	// first saw the cell on it, or -1 where they cannot be read; lastFaults
	// and prevFaults at its last two checks. Only the monitor uses them.
	faultsTid                           int
	faultsStart, lastFaults, prevFaults int64

	mu      sync.Mutex
	active  bool
	fired   bool
	reason  error
	stopped chan struct{} // closed when the guard fires
	stopCtx func() bool
}

func (in *instance) startGuard(ctx context.Context) *guard {
	live, _, cycles := heapState()
	// The live heap is as of the last collection, and what the sessions
	// hold (startSize, othersStart) as of their last measurements: the
	// growth measured since that collection is not in it yet, and must not
	// count as the cell's once a collection shows it (measured). A net
	// shrinking is left out: until the next collection ends the live heap
	// still has it, and a cell judged meanwhile would be charged for it.
	live += max(0, monitor.grownAfter(cycles))
	limit := max(in.memLimit, in.size) // a session over its limit may not grow
	g := &guard{in: in, vm: in.vm, limit: limit, active: true, started: time.Now(),
		startSize: in.size, startLive: live, stopped: make(chan struct{})}
	g.tid.Store(int64(threadID()))
	if g.tid.Load() == 0 {
		// No page faults to go by: stack samples need the goroutine.
		g.goid = goroutineID()
	}
	// The monitor reads the thread's page faults when it first sees the
	// cell, off the cell's goroutine: reading them costs a system call.
	g.faultsTid = -1
	g.othersStart = monitor.known.Load() - in.size
	in.sharesBefore = in.shares // what releaseGrown compares with
	g.size.Store(in.size)
	mark := in.sizeMark
	g.mark.Store(&mark)
	g.measuredAt.Store(in.sizeAt.UnixNano())
	in.guard = g
	// The fork's built-ins announce each big allocation (a string, an
	// array's growth, a buffer) before they make it, and reserve refuses
	// one that would take the session past its limit: the limit is hard
	// for them, not only judged after the fact (internal/goja/native_alloc.go).
	g.vm.SetAllocGuard(in.reserve)
	g.stopCtx = context.AfterFunc(ctx, func() {
		defer recoverGoroutine("interrupt")
		g.interrupt(ctx.Err())
	})
	monitor.add(g)
	return g
}

// interrupt stops the cell with reason, once.
func (g *guard) interrupt(reason error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.active || g.fired {
		return
	}
	g.fired = true
	g.reason = reason
	close(g.stopped)
	g.vm.Interrupt(reason)
}

// firedFor returns why the guard fired, or nil.
func (g *guard) firedFor() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reason
}

// rearm interrupts the VM again if the guard has fired: JavaScript that
// runs after an interrupt was delivered (the host formatting an error) must
// stop too.
func (g *guard) rearm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.active && g.fired {
		g.vm.Interrupt(g.reason)
	}
}

// stop ends the guard; after it returns, nothing interrupts the VM. The
// caller holds the instance's vmMu.
func (g *guard) stop() {
	g.stopCtx()
	monitor.settling.Add(1) // the instance calls settled when it has measured
	monitor.remove(g)
	g.mu.Lock()
	g.active = false
	g.mu.Unlock()
	g.vm.ClearInterrupt()
	g.vm.SetAllocGuard(nil)
	g.in.guard = nil
	g.in.size, g.in.sizeMark = g.size.Load(), *g.mark.Load()
	g.in.sizeAt = time.Unix(0, g.measuredAt.Load())
}

// measure walks the session and stops the cell if it is over its limit.
// The caller owns the VM: it runs the cell, or holds vmMu while the cell
// waits.
func (g *guard) measure() {
	if g.measureSize() {
		g.interrupt(&memoryLimitError{limit: g.limit, size: g.size.Load()})
	}
}

// measureSize walks the session and reports whether it is over its limit,
// without stopping the cell: reserve throws instead, a RangeError the cell
// can catch.
func (g *guard) measureSize() (over bool) {
	mark := markNow()
	size, over := g.in.measure(g.limit + 1)
	if !over { // a walk cut short found less than the session holds
		g.in.bound.walked(size)
	}
	g.in.measured(size-g.size.Swap(size), *g.mark.Load(), mark)
	g.mark.Store(&mark)
	g.measuredAt.Store(time.Now().UnixNano())
	g.want.Store(false)
	g.asked.Store(0)
	return over || size > g.limit
}

// unlockThread lets the cell's goroutine leave its thread while the cell
// waits for a timer or a host call: a goroutine locked to its thread that
// blocks costs two thread switches. lockThread takes a thread again.
func (g *guard) unlockThread() {
	g.tid.Store(0)
	runtime.UnlockOSThread()
}

func (g *guard) lockThread() {
	runtime.LockOSThread()
	g.tid.Store(int64(threadID()))
}

// settled ends what stop began: the session of the cell is measured.
func (g *guard) settled() { monitor.settling.Add(-1) }

// estimate is an upper bound of the session's size now, from its last
// measurement and the process's live heap since.
func (g *guard) estimate(live int64) int64 {
	return g.size.Load() + max(0, live-g.mark.Load().live-minWalkGrowth)
}

// safePoint runs in host functions, on the goroutine running the cell: it
// measures the session when the monitor asked for it.
func (in *instance) safePoint() {
	if g := in.guard; g != nil && g.want.Load() {
		g.measure()
	}
}

// reserve is called before a built-in makes n bytes at once: it throws a
// RangeError, which the guest can catch, if the session would pass its
// limit.
func (in *instance) reserve(n int64) {
	g := in.guard
	if g == nil || n <= 0 {
		return
	}
	// An upper bound first: the growth since the last measurement.
	grown := g.mark.Load().grownSince(markNow())
	if g.size.Load()+max(0, grown-minWalkGrowth)+n <= g.limit {
		return
	}
	// The bound says the session could pass its limit. When it has grown
	// since its last measurement (grown is what the process allocated, the
	// garbage of the cell and of every goroutine included), that
	// measurement is no bound, and the bound may be mostly garbage: walk,
	// however recently the last walk was. Checking the last size alone
	// (when reserve skipped walks to save time) let allocations in quick
	// succession, each under the limit, pass it by as much as the cell
	// could allocate until the next walk.
	//
	// Else the last size stands, but the session may have shrunk since
	// (the cell let go of data): measure again unless this cell has just
	// done so. Such walks, which cost time in proportion to the session,
	// take at most a fifth of the cell's time.
	measured := time.Unix(0, g.measuredAt.Load())
	walked := false
	if grown > minWalkGrowth || measured.Before(g.started) ||
		time.Since(measured) > 10*memCheckInterval && time.Since(measured) >= 4*time.Duration(g.walkCost.Load()) {
		start := time.Now()
		g.measureSize()
		g.walkCost.Store(int64(time.Since(start)))
		walked = true
	}
	if size := g.size.Load(); size+n > g.limit {
		in.throwRange(fmt.Sprintf("memory limit: this needs %d MiB more, and the session holds %d MiB of its limit of %d MiB",
			max(n>>20, 1), size>>20, g.limit>>20))
	}
	// What the session holds leaves room for n, but the heap has grown by
	// more than that room since the cell started: the rest is garbage
	// (a string or an array's values that the cell replaced). Collect it
	// first, so that the allocation reuses its memory instead of taking
	// the host past the session's limit (a doubling replaceAll or an
	// array's growth in a loop reached 1.5-2.5x the limit so).
	if walked && n >= bigReserve {
		_, total := heapStats()
		others := monitor.known.Load() - g.size.Load() - g.othersStart
		if g.startSize+max(0, total-g.startLive-others)+n > g.limit {
			runtime.GC()
			g.mark.Store(ptr(markNow()))
		}
	}
}

// recoverGoroutine ends a goroutine of the runtime that panicked instead of
// the process: no panic in one session may end the others.
func recoverGoroutine(what string) {
	if p := recover(); p != nil {
		fmt.Fprintf(os.Stderr, "js: %s panicked: %v\n%s", what, p, debug.Stack())
	}
}

// goroutineID returns the id of the calling goroutine, from its stack
// header ("goroutine 123 [running]:").
func goroutineID() int64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		id, _ := strconv.ParseInt(string(b[:i]), 10, 64)
		return id
	}
	return 0
}

// monitor watches the process's heap while cells run.
var monitor = &heapMonitor{cells: make(map[*guard]struct{}), wake: make(chan struct{}, 1)}

type heapMonitor struct {
	mu      sync.Mutex
	cells   map[*guard]struct{}
	running bool
	// known is what all sessions of the process are known to hold: each
	// one's last measured size.
	known atomic.Int64
	// grown is the part of known measured after collection number
	// grownCycle ended (measured).
	grownMu    sync.Mutex
	grownCycle uint64
	grown      int64
	// settling counts cells that have ended but whose sessions are not
	// measured yet: until they are, the live heap holds data that known
	// does not, and no silent cell is judged.
	settling atomic.Int32
	// totalMark is the heap (garbage included) after the monitor's last
	// forced collection; collecting is set while one runs.
	totalMark  int64
	collecting atomic.Bool
	// lastTotal is the heap at the last check, lastBurst its growth then
	// if it was a burst.
	lastTotal, lastBurst int64
	wake                 chan struct{} // a check at once
}

// measured records that a session was measured to have changed by delta
// since its measurement at prev, at mark now. When no collection ended
// between the two, nor since, the change is not in the live heap yet
// (which is as of the last collection), and grownAfter says so to cells
// that start before the next collection ends: else a cell would count
// another session's growth as its own once a collection shows it, while
// othersStart already has it (and its own session's twice, in startSize
// too). A change across a collection is left out: how much of it the live
// heap has is not known, and leaving it out errs as the monitor did
// before (a cell may be charged for it), not towards letting a cell grow
// past its limit unseen; instance.settleUnsure collects after a cell when
// that charge could stop a later cell of a session near its limit.
//
// It reports whether it left the change out for a collection (crossed),
// and, for a change, the number of the last collection to have ended.
func (m *heapMonitor) measured(delta int64, prev, now heapMark) (crossed bool, cycles uint64) {
	m.known.Add(delta)
	if delta == 0 {
		return false, 0 // nothing to keep: the cycle number is not read
	}
	_, _, cycles = heapState()
	if prev.cycles != now.cycles || cycles != now.cycles { // or one ended during the walk
		return true, cycles
	}
	m.grownMu.Lock()
	defer m.grownMu.Unlock()
	switch {
	case now.cycles < m.grownCycle:
		return false, cycles
	case now.cycles > m.grownCycle:
		m.grownCycle, m.grown = now.cycles, 0
	}
	m.grown += delta
	return false, cycles
}

// grownAfter returns what the sessions were measured to grow by since
// collection number cycles ended, as measured records it.
func (m *heapMonitor) grownAfter(cycles uint64) int64 {
	m.grownMu.Lock()
	defer m.grownMu.Unlock()
	if cycles != m.grownCycle {
		return 0
	}
	return m.grown
}

func (m *heapMonitor) add(g *guard) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cells[g] = struct{}{}
	if !m.running {
		m.running = true
		_, m.totalMark = heapStats()
		m.lastTotal = m.totalMark
		go m.loop()
	}
}

func (m *heapMonitor) remove(g *guard) {
	m.mu.Lock()
	delete(m.cells, g)
	m.mu.Unlock()
}

func (m *heapMonitor) loop() {
	defer recoverGoroutine("memory monitor")
	defer func() {
		// After a panic, a later cell starts a new loop.
		m.mu.Lock()
		m.running = false
		m.mu.Unlock()
	}()
	t := time.NewTicker(memCheckInterval)
	defer t.Stop()
	var cells []*guard
	for {
		select {
		case <-t.C:
		case <-m.wake:
		}
		m.mu.Lock()
		if len(m.cells) == 0 {
			m.mu.Unlock()
			return
		}
		cells = cells[:0]
		for g := range m.cells {
			cells = append(cells, g)
		}
		mark := m.totalMark
		m.mu.Unlock()
		m.check(cells, mark)
	}
}

// check is one look at the heap on behalf of the running cells.
func (m *heapMonitor) check(cells []*guard, totalMark int64) {
	for _, g := range cells {
		g.rearm()
	}
	live, total := heapStats()
	// The live heap is as of the last collection: collect when the heap
	// has grown by more than the smallest room any cell has left.
	room := int64(1 << 62)
	for _, g := range cells {
		room = min(room, g.limit-g.estimate(live))
	}
	if total-totalMark > max(room/2, 8<<20) && m.collecting.CompareAndSwap(false, true) {
		// In the background: a collection under an allocating cell can take
		// a while, and the monitor must keep watching meanwhile. When it is
		// done, the monitor looks again at once: a doubling string does
		// not wait for the next tick.
		go func() {
			defer recoverGoroutine("memory monitor collection")
			runtime.GC()
			_, total := heapStats()
			m.mu.Lock()
			m.totalMark = total
			m.mu.Unlock()
			m.collecting.Store(false)
			select {
			case m.wake <- struct{}{}:
			default:
			}
		}()
	}
	known := monitor.known.Load()
	// A burst: the heap grew by a lot within one tick, which only one big
	// allocation does (a string doubled, a huge array copied). It is the
	// running cell whose thread touched the fresh memory; judge it now,
	// while the allocation is still being filled: an interrupt lands as
	// soon as it is done, before the next one doubles it again.
	// A burst counts for two checks: the thread fills the fresh memory
	// (and so faults its pages in) after the heap has grown.
	burst := total - m.lastTotal
	m.lastTotal = total
	if burst < burstBytes {
		burst, m.lastBurst = m.lastBurst, 0
	} else {
		m.lastBurst = burst
	}
	var busyCells []*guard
	var grower *guard
	var mostFaults int64 = -1
	for _, g := range cells {
		tid := int(g.tid.Load())
		if tid != g.faultsTid {
			// A new thread, or the first look: count from here.
			g.faultsTid = tid
			g.faultsStart = threadFaults(tid)
			g.lastFaults, g.prevFaults = g.faultsStart, g.faultsStart
		}
		if g.in.vmMu.TryLock() {
			g.in.vmMu.Unlock()
			continue
		}
		busyCells = append(busyCells, g)
		f := threadFaults(tid)
		if f >= 0 && g.prevFaults >= 0 && f-g.prevFaults > mostFaults {
			grower, mostFaults = g, f-g.prevFaults
		}
		g.prevFaults, g.lastFaults = g.lastFaults, f
	}
	if burst >= burstBytes && m.settling.Load() == 0 {
		if mostFaults < 0 && len(busyCells) == 1 {
			grower = busyCells[0] // no page faults to tell: the only one
		} else if mostFaults*pageSize < burst/16 {
			grower = nil // the fresh memory is not its own
		}
		if g := grower; g != nil {
			others := known - g.size.Load() - g.othersStart
			if size := g.startSize + max(0, live-g.startLive-others) + burst; size > g.limit {
				g.interrupt(&memoryLimitError{limit: g.limit, size: size, estimated: true})
				m.lastBurst = 0
			}
		}
	}
	var silent []*guard // suspects that cannot be measured now
	busy := len(busyCells)
	for _, g := range cells {
		if g.estimate(live) <= g.limit {
			continue
		}
		if !contains(busyCells, g) && g.in.vmMu.TryLock() {
			// The cell waits for a timer or a host call: measure it here.
			g.mu.Lock()
			active := g.active && !g.fired
			g.mu.Unlock()
			if active {
				g.measure()
			}
			g.in.vmMu.Unlock()
			continue
		}
		if g.want.CompareAndSwap(false, true) {
			g.asked.Store(time.Now().UnixNano())
		}
		silent = append(silent, g)
	}
	if len(silent) == 0 || m.settling.Load() > 0 {
		return
	}
	if busy > 1 {
		// Another running cell could own the growth: wait for the
		// suspects to measure themselves, which cells with safe points do
		// within milliseconds, and judge only those that stay silent.
		waited := silent[:0]
		for _, g := range silent {
			if asked := g.asked.Load(); asked != 0 && time.Since(time.Unix(0, asked)) >= answerWait {
				waited = append(waited, g)
			}
		}
		silent = waited
	}
	// Judge the silent cells by the live heap: the growth since a cell
	// started that what the other sessions are known to hold does not
	// account for.
	var judged []*guard
	var sizes []int64
	for _, g := range silent {
		others := known - g.size.Load() - g.othersStart
		if size := g.startSize + live - g.startLive - others; size > g.limit {
			judged = append(judged, g)
			sizes = append(sizes, size)
		}
	}
	if len(judged) == 0 {
		return
	}
	i := 0
	if len(judged) > 1 {
		// Several silent cells could own the same growth. The one whose
		// thread touched most fresh memory (page faults) grows; a cell that
		// only computes touches none.
		i = -1
		var most int64 = -1
		for j, g := range judged {
			f := threadFaults(g.faultsTid)
			if f < 0 || g.faultsStart < 0 {
				most = -1
				break
			}
			if d := f - g.faultsStart; d > most {
				i, most = j, d
			}
		}
		if most < growingFaults {
			// No clear sign (growth into memory the heap already had
			// faults nowhere; other systems have no counts): wait a while
			// longer, then sample the stacks.
			for _, g := range judged {
				if time.Since(time.Unix(0, g.asked.Load())) < silentWait {
					return
				}
			}
			i = busiestAllocator(judged)
		}
	}
	judged[i].interrupt(&memoryLimitError{limit: judged[i].limit, size: sizes[i], estimated: true})
}

var pageSize = int64(os.Getpagesize())

func contains(gs []*guard, g *guard) bool {
	for _, h := range gs {
		if h == g {
			return true
		}
	}
	return false
}

// growthFrames are functions that a goroutine growing its data spends its
// time in, and one spinning over data it has does not.
var growthFrames = [][]byte{
	[]byte("runtime.growslice"), []byte("runtime.concatstring"), []byte("runtime.mallocgcLarge"),
	[]byte("runtime.makeslicecopy"), []byte("internal/runtime/maps.(*table).grow"),
	[]byte("internal/runtime/maps.(*Map).growToTable"), []byte("internal/runtime/maps.(*Map).growToSmall"),
}

// busiestAllocator samples the goroutines' stacks a few times and returns
// the index of the cell whose goroutine was seen growing data most often.
func busiestAllocator(cells []*guard) int {
	score := make([]int, len(cells))
	buf := make([]byte, 1<<20)
	for range 4 {
		n := runtime.Stack(buf, true)
		for _, block := range bytes.Split(buf[:n], []byte("\n\n")) {
			id := goroutineOf(block)
			for i, g := range cells {
				if g.goid != id {
					continue
				}
				for _, f := range growthFrames {
					if bytes.Contains(block, f) {
						score[i]++
						break
					}
				}
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	best := 0
	for i := range score {
		if score[i] > score[best] {
			best = i
		}
	}
	return best
}

func goroutineOf(block []byte) int64 {
	block = bytes.TrimPrefix(block, []byte("goroutine "))
	if i := bytes.IndexByte(block, ' '); i > 0 {
		id, _ := strconv.ParseInt(string(block[:i]), 10, 64)
		return id
	}
	return -1
}

// stringBytes returns the bytes goja keeps for the characters of a string:
// one each when they are all ASCII, two otherwise.
func stringBytes(v goja.Value) int64 {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		return int64(rv.Len())
	case reflect.Slice:
		return 2 * int64(rv.Len())
	}
	if s, ok := v.(goja.String); ok {
		return 2 * int64(s.Length())
	}
	return 0
}

// utf16Of returns goja's UTF-16 characters of a non-ASCII string (without
// the marker goja keeps first), or nil.
func utf16Of(rv reflect.Value) []uint16 {
	if rv.Kind() != reflect.Slice || rv.Type().Elem().Kind() != reflect.Uint16 || rv.Len() == 0 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(rv.Pointer())), rv.Len())[1:]
}

// countOf returns how many times sep occurs in s, without overlaps, as
// split and replaceAll find it; an empty sep occurs between characters.
func countOf(s, sep goja.Value) int64 {
	rs, rsep := reflect.ValueOf(s), reflect.ValueOf(sep)
	n, ok := s.(goja.String)
	if !ok {
		return 0
	}
	if p, ok := sep.(goja.String); ok && p.Length() == 0 {
		return int64(n.Length())
	}
	switch {
	case rs.Kind() == reflect.String && rsep.Kind() == reflect.String:
		return int64(strings.Count(rs.String(), rsep.String()))
	case rs.Kind() == reflect.String:
		return 0 // a string with non-ASCII characters is not in an ASCII one
	}
	hay := utf16Of(rs)
	var needle []uint16
	if rsep.Kind() == reflect.String {
		for _, c := range []byte(rsep.String()) {
			needle = append(needle, uint16(c))
		}
	} else {
		needle = utf16Of(rsep)
	}
	if len(needle) == 0 {
		return 0
	}
	var count int64
	for i := 0; i+len(needle) <= len(hay); {
		if hay[i] == needle[0] && slices.Equal(hay[i:i+len(needle)], needle) {
			count++
			i += len(needle)
		} else {
			i++
		}
	}
	return count
}

// joinBytes estimates the bytes of arr.join(sep): exact for a plain array
// of strings, about right for numbers, and a guess for other elements.
func joinBytes(arr, sep goja.Value) int64 {
	obj, ok := arr.(*goja.Object)
	if !ok {
		return 0
	}
	self := reflect.ValueOf(obj).Elem().FieldByName("self")
	if !self.IsValid() || self.IsNil() || self.Elem().Kind() != reflect.Pointer || self.Elem().Elem().Type().Name() != "arrayObject" {
		return 0
	}
	values := self.Elem().Elem().FieldByName("values")
	sepBytes := int64(1)
	if sep != nil && !goja.IsUndefined(sep) {
		sepBytes = stringBytes(sep)
	}
	n := int64(values.Len())
	total := max(n-1, 0) * sepBytes
	for i := range values.Len() {
		e := values.Index(i)
		if e.IsNil() {
			continue
		}
		switch e.Elem().Kind() {
		case reflect.String:
			total += int64(e.Elem().Len())
		case reflect.Slice:
			total += 2 * int64(e.Elem().Len())
		case reflect.Int64, reflect.Float64:
			total += 8
		default:
			total += 16
		}
	}
	return total
}

// maxBigIntTextBits is the largest BigInt the operators make, whatever the
// memory limit: goja turns a BigInt into decimal text (String(x), `${x}`,
// x + ”) in native code, in time quadratic in its size, where no
// interrupt lands: 2 Mbit take 0.1-0.2 s, 16 Mbit took 7 s.
const maxBigIntTextBits = 1 << 21

// bigIntBitsFor returns the largest BigInt, in bits, that the operators
// of a session with memory limit limit make (guards.js): at most a 32nd
// of the limit, and at most maxBigIntTextBits.
func bigIntBitsFor(limit int64) int64 {
	return max(1<<16, min(maxBigIntBits, maxBigIntTextBits, limit*8/32))
}

// bigIntBitLen returns the bit length of |v| for a BigInt, 0 for anything
// else, without copying it (Export does).
func bigIntBitLen(v goja.Value) int {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Type() != bigIntType() {
		return 0
	}
	return (*big.Int)(rv.UnsafePointer()).BitLen()
}

// bigIntType is goja's BigInt value type, a pointer to a big.Int by
// another name.
var bigIntType = sync.OnceValue(func() reflect.Type {
	return reflect.TypeOf(goja.New().ToValue(big.NewInt(1)))
})

// maxBigIntLiteralDigits is the longest decimal BigInt literal code may
// have, as many digits as BigInt(text) parses (guards.js): goja's parser
// converts it in time quadratic in its length, in native code (a million
// digits took 11 s).
const maxBigIntLiteralDigits = 100000

// checkBigIntLiterals refuses code with a decimal BigInt literal longer
// than maxBigIntLiteralDigits, or a hexadecimal, octal or binary one of
// more than maxBigIntTextBits bits, before it is parsed. The first is
// parsed in time quadratic in its length; the second is parsed quickly,
// but turning it into decimal text (String(x), `${x}`, a sum with a text) is the same
// quadratic work, in native code where no interrupt lands: a 16 Mbit
// literal took 7 s. It looks for a run of digits (underscores allowed)
// ending in n, wherever it is: a string or a comment with one is refused
// too, which only code no one writes has.
func checkBigIntLiterals(src string) error {
	if len(src) <= min(maxBigIntLiteralDigits, maxBigIntTextBits/4) {
		return nil
	}
	run := 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '0' && run == 0 && i+1 < len(src) && strings.IndexByte("xXoObB", src[i+1]) >= 0 &&
			(i == 0 || !isIdentByte(src[i-1])):
			if err := checkRadixLiteral(src, &i); err != nil {
				return err
			}
		case c >= '0' && c <= '9' || c == '_' && run > 0:
			run++
		case c == 'n' && run > maxBigIntLiteralDigits:
			return fmt.Errorf("the code has a BigInt literal of %d digits, more than the %d the sandbox parses: "+
				"goja converts it in time quadratic in its length; use hexadecimal (0x...n), or build it at run time", run, maxBigIntLiteralDigits)
		default:
			run = 0
		}
	}
	return nil
}

// checkRadixLiteral checks the literal at src[*i:], which starts with 0x,
// 0o or 0b, and moves *i to its last character.
func checkRadixLiteral(src string, i *int) error {
	bitsPer, name := 4, "hexadecimal"
	switch src[*i+1] {
	case 'o', 'O':
		bitsPer, name = 3, "octal"
	case 'b', 'B':
		bitsPer, name = 1, "binary"
	}
	digits := 0
	j := *i + 2
	for ; j < len(src); j++ {
		c := src[j]
		if c == '_' {
			continue
		}
		if v := digitValue(c); v < 0 || v >= 1<<bitsPer {
			break
		}
		digits++
	}
	*i = j - 1
	if j < len(src) && src[j] == 'n' && digits*bitsPer > maxBigIntTextBits {
		return fmt.Errorf("the code has a %s BigInt literal of %d bits, more than the %d the sandbox makes: "+
			"turning it into decimal text takes time quadratic in its size, in native code that cannot be stopped", name, digits*bitsPer, maxBigIntTextBits)
	}
	return nil
}

// digitValue is the value of a hexadecimal digit, or -1.
func digitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
