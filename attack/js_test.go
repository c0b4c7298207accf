package attack_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// JavaScript bombs: cells that make goja allocate without end, run long
// in native code where no interrupt lands, or recurse in Go. Each must end
// with an error that names its cap, in time; the session must run a cell
// afterwards (run checks 1+1); another session must keep its state; and
// the host's heap must stay near the cap (a doubling string used to peak
// at three times it, and native paths ran for seconds past the timeout).

// jsBombs are the cases, in order in one session. The bombs keep their
// data in block-scoped bindings: a bomb that assigns a global an earlier
// cell made is not released when it fails (only the cell's new globals
// are), and its session would stay over its limit.
var jsBombs = []attack{
	// Memory, under the suite's 128 MiB cap.
	js("array push loop", `{ const a = []; for (;;) a.push({ i: a.length }) }`, fail, "memory limit"),
	js("string doubling", `{ let s = 'ab'; for (;;) s = s + s }`, fail, "RangeError"),
	js("non-ASCII string doubling", `{ let s = '\u00e9'; for (;;) s += s }`, fail, "RangeError: memory limit"),
	js("template doubling", "{ let s = '\\u00e9'; for (;;) s = `${s}${s}` }", fail, "RangeError: memory limit"),
	js("typed arrays", `{ const keep = []; for (;;) keep.push(new Float64Array(1e6)) }`, fail, "memory limit"),
	js("one huge typed array", `new Float64Array(2 ** 31)`, fail, "Array buffer allocation failed"),
	// Many small allocations: the Map announces its growth, a quarter more
	// entries at a time (internal/goja FORK.md item 4), and the step past
	// the cap is refused: 131-133 MiB in 9 runs at load 5-6. When only the
	// monitor's checks stopped it, its peaks came in two kinds (138-150
	// MiB and 280 MiB in five idle runs; 418 MiB once in a make test) and
	// its bound was 4x the cap.
	{name: "Map growth", lang: "js", code: `{ const m = new Map(); for (let i = 0; ; i++) m.set(i, [i]) }`,
		status: fail, want: []string{"memory limit"}, heapBound: 2 * memoryCap},
	js("JSON.parse of a huge text", `JSON.parse('[' + '1,'.repeat(1e7) + '1]')`, fail, "JSON.parse: the 20000003-byte input would need about"),
	// A cell's own code is parsed and compiled in native code before it
	// runs, where no guard lands: 4 MB of a dense literal took 700 MB.
	js("a cell of dense code", "["+strings.Repeat("1,", 2e6)+"1].length", fail, "RangeError: memory limit: parsing and compiling this cell's code"),
	js("the state survives the memory bombs", `globalThis.kept = 41; print(kept + 1)`, ok, "42"),

	// Backtracking regular expressions: a stopped match is a RangeError
	// from every method, never a silent "no match".
	js("catastrophic regex test", `/^(a+)+(?=c)b$/.test('a'.repeat(40))`, fail, "took longer than 1s to match and was stopped"),
	js("catastrophic regex exec", `/^(a+)+\1b$/.exec('a'.repeat(40))`, fail, "took longer than 1s to match and was stopped"),
	js("catastrophic regex replace", `'a'.repeat(40).replace(/^(a+)+(?=c)b$/, '')`, fail, "took longer than 1s to match and was stopped"),
	js("catastrophic regex split", `'a'.repeat(40).split(/(a+)+(?=c)b/)`, fail, "took longer than 1s to match and was stopped"),
	js("catastrophic regex matchAll", `[...'a'.repeat(40).matchAll(/(a+)+(?=c)b/g)]`, fail, "took longer than 1s to match and was stopped"),
	js("catastrophic regex from lastIndex", `{ const r = /(a+)+b/g; r.lastIndex = 1; r.exec('a'.repeat(40)) }`, fail, "took longer than 1s to match and was stopped"),
	js("a stopped match can be caught", `try { /^(a+)+(?=c)b$/.test('a'.repeat(40)) } catch (e) { print(e.name) }`, ok, "RangeError"),
	{name: "catastrophic regex in a loop", lang: "js", code: `for (;;) try { /^(a+)+(?=c)b$/.test('a'.repeat(40)) } catch {}`,
		timeout: 2, status: fail, want: []string{"timed out"}, within: 10 * time.Second},

	// Small patterns that compile to huge programs: Go's regexp copies out
	// counted repetitions (a 33 KB pattern took 448 MiB at its peak), so
	// such a pattern compiles with regexp2, which keeps a count; one that
	// even regexp2 would take past the cap to compile is refused first.
	{name: "a pattern Go's regexp would copy out 3 million times", lang: "js",
		code:   `{ const r = new RegExp('(?:a{1000})'.repeat(3000)); print(r.test('a'.repeat(3e6)), 'b'.concat('a'.repeat(3e6)).search('(?:a{1000})'.repeat(3000))) }`,
		status: ok, want: []string{"true 1"}, within: 10 * time.Second},
	js("a pattern ignoring the case of a million characters", `new RegExp('a'.repeat(1e6), 'i')`, fail, "RangeError: memory limit"),

	// A bomb that grows a global an earlier cell made: that global is
	// released when the bomb fails, so the session is under its cap again
	// and may grow (it used to stay over it, and every later cell that
	// grew it failed).
	js("an older global", `globalThis.older = []; globalThis.untouched = 'u'.repeat(1 << 20)`, ok),
	js("a bomb that grows the older global", `for (;;) older.push({ i: older.length })`, fail,
		"memory limit", "Older globals that grew were released too: older (", "The session now holds"),
	js("the session grows again after it", `globalThis.again = 'y'.repeat(48 << 20); print(again.length, typeof older, untouched.length); delete globalThis.again`,
		ok, "50331648 undefined 1048576"),
	js("template doubling of members", "{ const o = { s: '\\u00e9' }; for (;;) o.s = `${o.s}${o.s}` }", fail, "RangeError: memory limit"),

	// Sorting with a hostile comparator: an error is the cell's, a
	// comparator that never returns is stopped by the timeout, one that
	// changes or grows the array meanwhile leaves a working session.
	js("comparator that throws", `[3, 1, 2].sort(() => { throw new RangeError('comparator said no') })`, fail, "RangeError: comparator said no"),
	js("comparator that throws late in a long sort", `[...Array(2e5).keys()].sort((a, b) => { if (a === 777) throw new Error('at 777'); return b - a })`, fail, "Error: at 777"),
	js("comparator whose result throws", `[1, 2, 3].sort(() => ({ valueOf() { throw new Error('valueOf in sort') } }))`, fail, "valueOf in sort"),
	{name: "comparator that never returns", lang: "js", code: `{ const a = [...Array(1e4).keys()]; a.sort(() => { for (;;); }) }`,
		timeout: 2, status: fail, want: []string{"timed out"}, within: 10 * time.Second},
	{name: "typed array comparator that never returns", lang: "js", code: `new Float64Array(1e4).sort(() => { for (;;); })`,
		timeout: 2, status: fail, want: []string{"timed out"}, within: 10 * time.Second},
	js("comparator that empties and refills the array", `{ const a = [...Array(1e4).keys()]; a.sort((x, y) => { a.length = 0; a.push(y, x); return x - y }); print('sorted to', a.length) }`,
		ok, "sorted to"),
	js("comparator that grows the array without end", `{ const a = [3, 2, 1]; a.sort(() => { for (;;) a.push('x'.repeat(1 << 20) + a.length) }) }`, fail, "memory limit"),
	js("comparator that sorts the array again", `{ const a = [3, 2, 1]; let n = 0; a.sort((x, y) => (n++ < 50 ? a.sort((p, q) => p - q) && x - y : x - y)); print(a.join(), n > 0) }`,
		ok, "1,2,3 true"),

	// Long native paths.
	// A 1 s timeout: the sort took 1.6 s on an idle machine here and
	// finished before a 2 s one (a longer sort of numbers as texts made
	// garbage past the suite's heap bound).
	{name: "huge default sort", lang: "js", code: `{ const a = new Array(2e6).fill(5); a.push(1); a.sort() }`,
		timeout: 1, status: fail, want: []string{"timed out"}, within: 10 * time.Second},
	{name: "slow comparator", lang: "js", code: `[...Array(1e5).keys()].sort((a, b) => { for (let i = 0; i < 1e4; i++); return a - b })`,
		timeout: 2, status: fail, want: []string{"timed out"}, within: 10 * time.Second},
	js("deep recursion", `function f(n) { return f(n + 1) + 1 } f(0)`, fail, "Maximum call stack size exceeded"),
	js("recursion through a getter", `{ const o = {}; Object.defineProperty(o, 'x', { get() { return this.x } }); o.x }`, fail, "Maximum call stack size exceeded"),
	js("deep JSON.parse", `JSON.parse('['.repeat(1e6))`, fail, "Maximum call stack size exceeded"),
	// Recursion through native frames ends in a RangeError the cell can
	// catch, as V8's (internal/goja/native_depth.go): each overflow is
	// bounded by the call stack's 1000 frames, a fraction of a second.
	{name: "recursion through map, caught again and again", lang: "js",
		code:   `{ let n = 0; for (let i = 0; i < 20; i++) try { (function f() { return [1].map(f) })() } catch (e) { if (e instanceof RangeError) n++ } print('caught', n) }`,
		status: ok, want: []string{"caught 20"}, within: 10 * time.Second},
	{name: "recursion through a sort comparator, caught again and again", lang: "js",
		code:   `{ let n = 0; for (let i = 0; i < 20; i++) try { (function f() { return [2, 1].sort(() => f()) })() } catch (e) { if (e instanceof RangeError) n++ } print('caught', n) }`,
		status: ok, want: []string{"caught 20"}, within: 10 * time.Second},
	{name: "recursion through native code, caught until the timeout", lang: "js", code: `for (;;) try { (function f() { return [1].map(f) })() } catch {}`,
		timeout: 2, status: fail, want: []string{"timed out"}, within: 10 * time.Second},
	{name: "deep nestings through native code are caught", lang: "js",
		code: `{ let a = []; for (let i = 0; i < 1e5; i++) a = [a]; const wide = [Array.from({ length: 10001 }, () => ({})), a]; const out = [];
  for (const f of [() => String(a), () => a.join(), () => a.toLocaleString(), () => JSON.stringify(a), () => JSON.stringify(wide), () => a.flat(Infinity), () => structuredClone(a), () => JSON.parse('['.repeat(6e4) + ']'.repeat(6e4))])
    try { f(); out.push('none') } catch (e) { out.push(e.name) }
  print(out.join()) }`,
		status: ok, want: []string{strings.Repeat("RangeError,", 7) + "RangeError"}, within: 30 * time.Second},

	// Throws deep in recursion, past a closure that holds data, from ever
	// shallower depths: goja kept the frames thrown past, and the closures'
	// data piled up after each cell, outside the session's size (the
	// test's check of what is left after each bomb).
	js("a throw deep in recursion past a closure's data", `{ const thrower = () => { throw new Error('thrown deep') }; (function r(n) { if (n > 0) return r(n - 1); const big = 'x'.repeat(32 << 20); const keep = () => big; thrower() })(300) }`,
		fail, "Error: thrown deep"),
	js("another from less deep", `{ const thrower = () => { throw new Error('thrown deep') }; (function r(n) { if (n > 0) return r(n - 1); const big = 'y'.repeat(32 << 20); const keep = () => big; thrower() })(200) }`,
		fail, "Error: thrown deep"),

	// BigInt: sizes capped, so that a product or its text is quick.
	js("BigInt squaring", `{ let x = 3n; for (;;) x = x * x }`, fail, "Maximum BigInt size exceeded"),
	js("BigInt power", `2n ** (2n ** 40n)`, fail, "Maximum BigInt size exceeded"),
	js("BigInt shift", `1n << (2n ** 40n)`, fail, "Maximum BigInt size exceeded"),
	js("BigInt literal of a million digits", `eval('9'.repeat(1e6) + 'n')`, fail, "BigInt literal of 1000000 digits"),
	js("BigInt of a long text", `BigInt('9'.repeat(1e6))`, fail, "more than the 100000 the sandbox parses"),
	// A BigInt array keeps a long text mod 2^64, as V8 does, read once
	// (internal/goja/bigint_text.go): at once, whatever its length.
	{name: "BigInt array made of a long text", lang: "js", code: `print(new BigInt64Array(['9'.repeat(1e7)])[0])`,
		status: ok, want: []string{"-1n"}, within: 5 * time.Second},
	{name: "BigInt array given a long text by Object.assign", lang: "js", code: `print(Object.assign(new BigUint64Array(1), ['9'.repeat(1e7)])[0])`,
		status: ok, want: []string{"18446744073709551615n"}, within: 5 * time.Second},
	{name: "BigInt array filled with a long text", lang: "js", code: `print(new BigInt64Array(2).fill('-' + '9'.repeat(1e7))[1])`,
		status: ok, want: []string{"1n"}, within: 5 * time.Second},
	{name: "BigInt compared with a text of ten million digits", lang: "js",
		code:   `{ const t = '9'.repeat(1e7); print(1n < t, 5n == t, (10n ** 1000n) > t + '1', 1n != t + 'x') }`,
		status: ok, want: []string{"true false false true"}, within: 10 * time.Second},
	// 4 Mbit: a 16 Mbit literal's 4 MB of code is now refused before it is
	// parsed (eval reserves what parsing takes), this one by the literal's
	// own check.
	js("hexadecimal BigInt literal of 4 Mbit", `eval('0x' + 'f'.repeat(1e6) + 'n')`, fail, "more than the 2097152 the sandbox makes"),
	{name: "recursion through toString", lang: "js", code: `{ const o = { toString() { return String(o) } }; String(o) }`,
		status: fail, want: []string{"Maximum call stack size exceeded"}, within: 3 * time.Second},
	{name: "recursion through Proxy traps", lang: "js", code: `{ const p = new Proxy({}, { get(t, k) { return p[k] } }); p.x }`,
		status: fail, want: []string{"Maximum call stack size exceeded"}, within: 3 * time.Second},
	{name: "the largest BigInt turns into text quickly", lang: "js", code: `print(String(2n ** 2097151n).length)`,
		status: ok, want: []string{"631306"}, within: 5 * time.Second},

	// Proxy and prototype chains, which goja follows by recursing in Go.
	js("Proxy chain", `{ let p = {}; for (;;) p = new Proxy(p, {}) }`, fail, "would nest more than 10000 deep"),
	js("Proxy handler chain", `{ let p = {}; for (;;) p = new Proxy({}, p) }`, fail, "would nest more than 10000 deep"),
	js("prototype chain", `{ let o = {}; for (;;) o = Object.create(o) }`, fail, "would nest more than 10000 deep"),
	js("recursive Proxy trap", `{ const p = new Proxy({}, { get(t, k) { return p[k] } }); p.x }`, fail, "Maximum call stack size exceeded"),

	// Hostile thrown values: the host reports them without running away.
	js("a thrown Proxy whose traps throw", `throw new Proxy({}, { get() { throw 1 }, ownKeys() { throw 2 }, getPrototypeOf() { throw 3 }, has() { throw 4 } })`, fail, "Uncaught"),
	{name: "a thrown object whose toString never returns", lang: "js", code: `throw { toString() { for (;;); } }`,
		timeout: 2, status: fail, want: []string{"Uncaught"}, within: 10 * time.Second},
	{name: "a thrown error whose stack getter never returns", lang: "js",
		code:    `{ const e = new Error('x'); Object.defineProperty(e, 'stack', { get() { for (;;); } }); throw e }`,
		timeout: 2, status: fail, within: 10 * time.Second},
	js("the state survives every bomb", `print(kept + 1)`, ok, "42"),
}

// TestJavaScriptBombs runs jsBombs in order in one session while another
// session, with state of its own, waits; the process's heap is sampled
// all the while.
//
// The heap is collected before each bomb, so that what the bomb before
// left as garbage is not counted: without it, the whole run's peak was
// the garbage of one bomb plus the growth of the next (the collector had
// seen the typed arrays' data live at their peak, so its goal was twice
// that and the next bomb grew before any collection: 398 MiB alone, 642
// MiB once in a whole-package run). What is measured instead:
//   - each bomb's growth from a collected heap, bounded at 3x the cap: the
//     cell that reaches the cap holds about that much, and the garbage of
//     its own steps is not collected yet. Most cases peak at 1-1.5x the
//     cap (up to 1.9x on a loaded machine; typed arrays 1.7-1.9x idle);
//     Map growth, refused at the cap step by step, has a bound of 2x;
//   - what is left after each bomb, collected: what the sessions still
//     hold, a few MiB. A bomb whose data outlives it would pile up here
//     (a cell that threw deep in recursion kept its closures' data in
//     goja's call stack: the deep nestings kept 55 MiB through the next
//     ten bombs; internal/goja FORK.md item 10);
//   - the whole run's peak: a bomb's own bound plus what may be left, so
//     that nothing of earlier bombs (or earlier tests) grows meanwhile.
//
// A bomb that grows an older global (older.push in a loop) peaked near 3x
// on its own (368-397 MiB) while the walks that judged it took a map of
// every pointer as big as its data; they take a bitmap now
// (runtimes/js/marks.go), and it peaks as the others do
// (TestFailedCellReleasesWhatItGrew bounds it by what it grew).
func TestJavaScriptBombs(t *testing.T) {
	const (
		bombBound = 3 * memoryCap // a bomb's growth from a collected heap
		leftBound = 16 << 20      // what may be left after a bomb, collected
	)
	_, bystander := setUpSession(t, "js", "globalThis.mine = 'bystander state'; print(mine)")
	w, s := setUpSession(t, "js", "")
	start, peak := collectedPeak()
	most := int64(0) // the largest bound of a bomb
	for _, c := range jsBombs {
		if c.timeout == 0 {
			// The bombs without a timeout of their own must end at a cap
			// (memory, stack, a size), not the clock: on a loaded machine
			// the 5 s default let some run out of time first.
			c.timeout = 30
		}
		before, bomb := collectedPeak()
		t.Run(c.name, func(t *testing.T) { c.check(t, w, s) })
		bound := int64(bombBound)
		if c.heapBound > 0 {
			bound = c.heapBound
		}
		most = max(most, bound)
		if grown := bomb(); grown > bound {
			t.Errorf("%s: the heap grew by %d MiB, more than %d MiB", c.name, grown>>20, bound>>20)
		}
		if left := before - start; left > leftBound {
			t.Errorf("before %s, the collected heap held %d MiB more than before the first bomb, more than %d MiB: something of an earlier bomb outlived it",
				c.name, left>>20, leftBound>>20)
		}
	}
	if left := collectedHeap() - start; left > leftBound {
		t.Errorf("after the bombs, the collected heap held %d MiB more than before them, more than %d MiB", left>>20, leftBound>>20)
	}
	if grown, bound := peak(), most+leftBound; grown > bound {
		t.Errorf("the heap grew by %d MiB over the whole run, more than %d MiB", grown>>20, bound>>20)
	}
	if out, status := eval(t, bystander, "js", "print(mine)", 10); status != ok || !strings.Contains(out, "bystander state") {
		t.Errorf("the bystander session lost its state: %s %q", status, out)
	}
}

// collectedHeap collects the heap and returns its size.
func collectedHeap() int64 {
	runtime.GC()
	return heapObjects()
}

// heapObjects is the heap's size now, garbage included.
func heapObjects() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// heapPeak samples the heap (garbage included) every millisecond from now
// until the returned function is called, which returns the most it grew
// from the heap collected now.
func heapPeak() (stop func() int64) {
	_, stop = collectedPeak()
	return stop
}

// collectedPeak is heapPeak that also returns the collected heap's size.
func collectedPeak() (base int64, stop func() int64) {
	base = collectedHeap()
	var peak atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			if v := heapObjects() - base; v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	return base, func() int64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}

// TestJavaScriptBombsThroughEval sends bombs to the real binary's eval
// command, one line each, with a 64 MiB cap: each line gets an error
// result, the good line after them runs in the same session with its
// state, and the process's peak resident memory stays bounded.
func TestJavaScriptBombsThroughEval(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := wasmevalBinary(t)
	bombs := []struct{ code, want string }{
		{"let s = '\\u00e9'; for (;;) s += s", "memory limit"},
		{"let s = 'ab'; for (;;) s = s + s", "RangeError"},
		{"const a = []; for (;;) a.push({ i: a.length })", "memory limit"},
		{"const m = new Map(); for (let i = 0; ; i++) m.set(i, [i])", "memory limit"},
		{"/^(a+)+(?=c)b$/.exec('a'.repeat(40))", "took longer than 1s"},
		{"let x = 3n; for (;;) x = x * x", "Maximum BigInt size exceeded"},
		{"let p = {}; for (;;) p = new Proxy(p, {})", "nest more than 10000 deep"},
		{"throw new Proxy({}, { get() { throw 1 }, ownKeys() { throw 2 } })", "Uncaught"},
	}
	line := func(code string, timeout int) string {
		b, _ := json.Marshal(map[string]any{"cells": []map[string]any{{"language": "js", "code": code, "timeout": timeout}}})
		return string(b) + "\n"
	}
	cmd := exec.Command(bin, "eval", "--cwd", newWorld(t).root, "--memory-limit", "64MiB")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	next := func() string {
		if !sc.Scan() {
			t.Fatalf("eval ended early: %v; stderr:\n%s", sc.Err(), stderr.String())
		}
		return sc.Text()
	}
	io.WriteString(stdin, line("globalThis.kept = 'still here'", 10))
	if got := next(); !strings.Contains(got, `"status":"complete"`) {
		t.Fatalf("setup: %s", got)
	}
	for _, b := range bombs {
		start := time.Now()
		io.WriteString(stdin, line(b.code, 5))
		got := next()
		if took := time.Since(start); took > testenv.Stretch(15*time.Second) {
			t.Errorf("%s: took %v", b.code, took)
		}
		if !strings.Contains(got, `"status":"error"`) || !strings.Contains(got, b.want) {
			t.Errorf("%s: %s, want an error with %q", b.code, clip(got), b.want)
		}
	}
	io.WriteString(stdin, line("print(kept, 1 + 1)", 10))
	if got := next(); !strings.Contains(got, `still here 2`) {
		t.Errorf("after the bombs: %s", got)
	}
	hwm := peakRSS(t, cmd.Process.Pid)
	t.Logf("eval's peak resident memory: %d MiB", hwm>>20)
	// The runtimes (about 90 MiB), a 64 MiB session at its cap with the
	// garbage of the step before, and what Go has not yet given back: it
	// measured 160-240 MiB (and 250 MiB when doubling strings were stopped
	// one copy late). A bomb that escaped its cap would pass this by far.
	if bound := int64(512 << 20); hwm > bound {
		t.Errorf("eval's peak resident memory is %d MiB, more than %d MiB", hwm>>20, bound>>20)
	}
	stdin.Close()
	// Status 1: cells failed, as they should.
	if err := cmd.Wait(); cmd.ProcessState.ExitCode() != 1 {
		t.Errorf("eval exited with %v, want status 1 (a cell failed); stderr:\n%s", err, stderr.String())
	}
}

// peakRSS returns a process's peak resident memory (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("peak memory of eval: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}
