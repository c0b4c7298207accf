package attack_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// Iterations that goja steps in Go: a built-in iterator (an array's
// values, keys or entries) over an array-like of length 2^53-1, fed to a
// built-in that loops over it without running a single instruction of
// script code, where goja checked for an interrupt. Before the fork's
// native_interrupt.go, new Set(values) spun past its timeout for ever and
// new Set(keys), new Map(entries), Promise.all/allSettled/race and typed
// arrays from such an iterator grew the host by gigabytes on a 128 MiB
// session (24 GB, the whole machine, before it was killed): neither the
// timeout nor the memory monitor's interrupt landed. The same held for the
// list of a global regexp2 search's matches (below).
var nativeIterations = []struct{ name, code string }{
	{"a Set of one value, for ever", "new Set(Array.prototype.values.call({ length: 2 ** 53 - 1 }))"},
	{"a Set of every key", "new Set(Array.prototype.keys.call({ length: 2 ** 53 - 1 }))"},
	{"a Map of every entry", "new Map(Array.prototype.entries.call({ length: 2 ** 53 - 1 }))"},
	{"a WeakSet of every entry", "new WeakSet(Array.prototype.entries.call({ length: 2 ** 53 - 1 }))"},
	{"Promise.all", "Promise.all(Array.prototype.keys.call({ length: 2 ** 53 - 1 }))"},
	{"Promise.allSettled", "Promise.allSettled(Array.prototype.keys.call({ length: 2 ** 53 - 1 }))"},
	{"Promise.race", "Promise.race(Array.prototype.values.call({ length: 2 ** 53 - 1 }))"},
	{"Promise.any", "Promise.any(Array.prototype.keys.call({ length: 2 ** 53 - 1 }))"},
	{"Object.fromEntries", "Object.fromEntries(Array.prototype.entries.call({ length: 2 ** 53 - 1 }))"},
	{"a typed array made of an iterator", "new Float64Array(Array.prototype.keys.call({ length: 2 ** 53 - 1 }))"},
	{"TypedArray.from an iterator", "Float64Array.from(Array.prototype.keys.call({ length: 2 ** 53 - 1 }))"},
	{"Array.from an iterator", "Array.from(Array.prototype.keys.call({ length: 2 ** 53 - 1 }))"},
	{"a spread into an array", "[...Array.prototype.keys.call({ length: 2 ** 53 - 1 })].length"},
	{"a spread into arguments", "Math.max(...Array.prototype.keys.call({ length: 2 ** 53 - 1 }))"},
	{"a rest element", "{ const [a, ...rest] = Array.prototype.keys.call({ length: 2 ** 53 - 1 }) }"},
	{"URLSearchParams of an iterator", "new URLSearchParams(Array.prototype.entries.call({ length: 2 ** 53 - 1 }))"},

	// A global search with regexp2 (a backreference) lists its matches in
	// one native call, each match within regexp2's 1 s but slow (about
	// 0.2 s idle): 400 of them ran 80 s past a 1 s timeout.
	{"replace by a slow global regexp2 pattern", "('a'.repeat(20) + 'y').repeat(400).replace(/(a+)+\\1x|y/g, '')"},
	{"replaceAll", "('a'.repeat(20) + 'y').repeat(400).replaceAll(/(a+)+\\1x|y/g, '')"},
	{"match", "('a'.repeat(20) + 'y').repeat(400).match(/(a+)+\\1x|y/g)"},
	{"split", "('a'.repeat(20) + 'y').repeat(400).split(/(a+)+\\1x|y/)"},
	{"a spread of matchAll", "[...('a'.repeat(20) + 'y').repeat(400).matchAll(/(a+)+\\1x|y/g)]"},
	// The generic paths, which call exec in a loop (split at each position).
	{"replace by a RegExp subclass", "{ class R extends RegExp {}; ('a'.repeat(20) + 'y').repeat(400).replace(new R('(a+)+\\\\1x|y', 'g'), '') }"},
	{"match by a RegExp subclass", "{ class R extends RegExp {}; ('a'.repeat(20) + 'y').repeat(400).match(new R('(a+)+\\\\1x|y', 'g')) }"},
	{"split by a RegExp subclass", "{ class R extends RegExp {}; ('a'.repeat(20) + 'y').repeat(400).split(new R('(a+)+\\\\1x|y')) }"},
	// Built-ins that call a native callback (a slow match) for each element.
	{"forEach with a bound native callback", "Array(400).fill('a'.repeat(20) + 'y').forEach(RegExp.prototype.test.bind(/(a+)+\\1x|z/))"},
	{"map with a native callback", "Array(400).fill('a'.repeat(20) + 'y').map(RegExp.prototype.test, /(a+)+\\1x|z/)"},
	{"a chain of native then handlers", "{ const s = 'a'.repeat(20) + 'y', t = RegExp.prototype.test.bind(/(a+)+\\1x|z/); let p = Promise.resolve(s); for (let i = 0; i < 400; i++) p = p.then(() => s).then(t); await p }"},
	{"replace by a pattern with its own exec", "{ const re = /(a+)+\\1x|y/g; re.exec = RegExp.prototype.exec; ('a'.repeat(20) + 'y').repeat(400).replace(re, '') }"},
}

// TestHuntJSNativeIteration sends nativeIterations to the real binary's
// eval command, one line each, with a 64 MiB cap and a 1 s timeout: each
// must fail (its timeout, or its session's memory limit) within a bound
// stretched by the machine's load, the good line after them runs in the
// same session with its state, and the process's peak resident memory
// stays bounded. The cells run in a child process, which the test kills
// when a cell outlives its bound or the process passes 1 GiB: a loop that
// no interrupt stops would otherwise spin on, or take the machine's
// memory, until the test binary died.
func TestHuntJSNativeIteration(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	// A slow match may pass regexp2's own 1 s on a loaded machine.
	huntStops(t, "64MiB", 512<<20, nativeIterations, "an error that says the cell timed out or passed its memory limit", func(got string) bool {
		return strings.Contains(got, "timed out") || strings.Contains(got, "memory limit") || strings.Contains(got, "took longer than 1s")
	})
}

// huntStops runs each of cells, with a 1 s timeout, in one session of
// the real binary's eval command with the given memory limit
// (startWatchedEval): each must end as an error that stopped says it
// should (want names it) within a bound stretched by the machine's load,
// the session must keep its state through them, and the process's peak
// resident memory must stay under peak (the runtimes, a 64 MiB session at
// its cap and its garbage: 160-240 MiB, TestJavaScriptBombsThroughEval;
// one loop left to run measured 24 GB).
func huntStops(t *testing.T, limit string, peak int64, cells []struct{ name, code string }, want string, stopped func(got string) bool) {
	t.Helper()
	ev := startWatchedEval(t, "--memory-limit", limit)
	if got := ev.send(t, "globalThis.kept = 'still here'", 10); !strings.Contains(got, `"status":"complete"`) {
		t.Fatalf("setup: %s", clip(got))
	}
	for _, c := range cells {
		start := time.Now()
		got := ev.send(t, c.code, 1)
		if took := time.Since(start); took > testenv.Stretch(10*time.Second) {
			t.Errorf("%s: took %v for a cell with a 1 s timeout", c.name, took.Round(time.Millisecond))
		}
		if !strings.Contains(got, `"status":"error"`) || !stopped(got) {
			t.Errorf("%s: %s, want %s", c.name, clip(got), want)
		}
	}
	if got := ev.send(t, "print(kept, 1 + 1)", 10); !strings.Contains(got, `still here 2`) {
		t.Errorf("after the loops: %s", clip(got))
	}
	if hwm := peakRSS(t, ev.cmd.Process.Pid); hwm > peak {
		t.Errorf("eval's peak resident memory is %d MiB, more than %d MiB", hwm>>20, peak>>20)
	}
}

// Built-ins that loop in Go over an array-like's length, for each index
// whether or not an element is there: on a session of 4 GiB the prelude's
// guards (guards.js) let through a length of 2^28, its limit over 16 bytes
// a slot, and each of these ran on past its timeout, untouched by an
// interrupt (a watchdog killed each of them at 12 s on a 1 s timeout, but
// sort, which made a 4 GiB slice for the holes and ran the host out of
// memory; toLocaleString over 2^32-1 holes ended at 3.8-5.1 s on a 64 MiB
// session, when its commas passed the memory limit). The object has no
// element, so a loop takes no memory: only the interrupt stops it.
var nativeLengthLoops = []struct{ name, code string }{
	{"join", "Array.prototype.join.call({ length: 2 ** 28 }, '')"},
	{"toLocaleString", "Array.prototype.toLocaleString.call({ length: 2 ** 28 })"},
	{"indexOf", "Array.prototype.indexOf.call({ length: 2 ** 28 }, 1)"},
	{"lastIndexOf", "Array.prototype.lastIndexOf.call({ length: 2 ** 28 }, 1)"},
	{"includes", "Array.prototype.includes.call({ length: 2 ** 28 }, 1)"},
	{"reverse", "Array.prototype.reverse.call({ length: 2 ** 28 })"},
	{"copyWithin", "Array.prototype.copyWithin.call({ length: 2 ** 28 }, 1, 0)"},
	{"forEach over holes", "Array.prototype.forEach.call({ length: 2 ** 28 }, (x) => x)"},
	{"every over holes", "Array.prototype.every.call({ length: 2 ** 28 }, (x) => x)"},
	{"filter over holes", "Array.prototype.filter.call({ length: 2 ** 28 }, (x) => x)"},
	{"reduce over holes", "Array.prototype.reduce.call({ length: 2 ** 28 }, (a) => a, 0)"},
	{"reduceRight over holes", "Array.prototype.reduceRight.call({ length: 2 ** 28 }, (a) => a, 0)"},
	{"shift", "Array.prototype.shift.call({ length: 2 ** 28 })"},
	{"unshift", "Array.prototype.unshift.call({ length: 2 ** 28 }, 1)"},
	{"splice", "Array.prototype.splice.call({ length: 2 ** 28 }, 0, 1)"},
	{"slice", "Array.prototype.slice.call({ length: 2 ** 28 }).length"},
	{"flat", "Array.prototype.flat.call({ length: 2 ** 28 })"},
	{"sort", "Array.prototype.sort.call({ length: 2 ** 28 })"},
	{"toReversed", "Array.prototype.toReversed.call({ length: 2 ** 28 }).length"},
	{"JSON.stringify of a sparse array", "JSON.stringify(Array(2 ** 28)).length"},
}

// TestHuntJSNativeLengthLoops sends nativeLengthLoops to the real binary's
// eval command on a 4 GiB session, as TestHuntJSNativeIteration does: each
// must stop at its 1 s timeout, under the watchdog that kills the child
// when a cell outlives its bound.
func TestHuntJSNativeLengthLoops(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	// What a cell allocates before its timeout counts toward the peak on a
	// 4 GiB session (513 MiB was seen once on an idle machine): a bound
	// under the watchdog's 1 GiB, far from the 4 GiB slice sort made.
	huntStops(t, "4GiB", 768<<20, nativeLengthLoops, "an error that says the cell timed out", func(got string) bool {
		return strings.Contains(got, "timed out")
	})
}

// watchedEval is the eval command in a child process, fed one line at a
// time, killed when an answer is late or the process grows past a ceiling.
type watchedEval struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	// stderr is the child's, for failures.
	stderr *testenv.LockedBuffer
}

// watchCeiling is the resident memory past which the child is killed: a
// cell that no limit stops, not a bound of what a stopped cell may take.
const watchCeiling = 1 << 30

func startWatchedEval(t *testing.T, args ...string) *watchedEval {
	t.Helper()
	bin := wasmevalBinary(t)
	cmd := exec.Command(bin, append([]string{"eval", "--cwd", newWorld(t).root}, args...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	ev := &watchedEval{cmd: cmd, stdin: stdin, lines: make(chan string), stderr: &testenv.LockedBuffer{}}
	cmd.Stderr = ev.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	go func() {
		defer close(ev.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			ev.lines <- sc.Text()
		}
	}()
	return ev
}

// send runs one cell and returns its answer line. The child is killed, and
// the test fails at once, when no answer comes within a bound stretched by
// the load or when the child passes watchCeiling meanwhile.
func (ev *watchedEval) send(t *testing.T, code string, timeout int) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"cells": []map[string]any{{"language": "js", "code": code, "timeout": timeout}}})
	if _, err := ev.stdin.Write(append(b, '\n')); err != nil {
		t.Fatalf("writing to eval: %v", err)
	}
	deadline := time.After(testenv.Stretch(time.Duration(timeout)*time.Second + 30*time.Second))
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case line, ok := <-ev.lines:
			if !ok {
				t.Fatalf("%s: eval ended without an answer; stderr:\n%s", code, ev.stderr.String())
			}
			return line
		case <-deadline:
			ev.cmd.Process.Kill()
			t.Fatalf("%s: no answer in %d s and 30 s more: killed", code, timeout)
		case <-tick.C:
			if rss := residentBytes(ev.cmd.Process.Pid); rss > watchCeiling {
				ev.cmd.Process.Kill()
				t.Fatalf("%s: eval grew to %d MiB, past %d MiB: killed", code, rss>>20, watchCeiling>>20)
			}
		}
	}
}

// residentBytes is a process's resident memory now (VmRSS), 0 when unknown.
func residentBytes(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
