package js_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/runtimetest"
)

// stopSink records a cell's output and calls stop when the cell prints
// "spinning".
type stopSink struct {
	*runtimetest.Recorder
	stop func()
}

func (s *stopSink) Stdout(text string) {
	s.Recorder.Stdout(text)
	if strings.HasPrefix(text, "spinning") {
		s.stop()
	}
}

// liveHeap collects the heap and returns what is live.
func liveHeap() int64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestThrownPastFramesKeepNothing runs cells that leave a function deep in
// recursion by an exception or a stop while a closure of that function holds
// 32 MiB, each from a shallower depth than the one before, and checks that
// the host keeps none of it. goja cut its call stack back to the catching
// frame without clearing the frames thrown past, so their closures'
// variables stayed reachable from the slice's array after the cell, where
// the session's size does not look, until a call as deep reused the slot:
// five such cells held 160 MiB on a 128 MiB limit, and more cells held more
// (internal/goja/vm.go handleThrow; FORK.md).
func TestThrownPastFramesKeepNothing(t *testing.T) {
	// A limit with room for two cells' data: the memory monitor judges a
	// cell by the live heap too, and in a package run that holds others'
	// garbage for a while.
	const (
		limit = 128 << 20
		each  = 32 << 20 // what each cell's closure holds
		cells = 5
	)
	// %[1]d is the cell's number, %[2]d its depth.
	for _, c := range []struct {
		name, code string
		completes  bool // the cell catches what it threw
		stopped    bool // the cell spins until it is stopped
	}{
		{name: "uncaught", code: `{ const thrower = () => { throw new Error('out') };
  (function r(n) { if (n > 0) return r(n - 1); const big = String(%[1]d).repeat(%[3]d); const keep = () => big; thrower() })(%[2]d) }`},
		{name: "caught in the cell", completes: true, code: `{ const thrower = () => { throw new Error('out') };
  try { (function r(n) { if (n > 0) return r(n - 1); const big = String(%[1]d).repeat(%[3]d); const keep = () => big; thrower() })(%[2]d) } catch {} }`},
		{name: "stack overflow", completes: true, code: `{ const deeper = () => deeper();
  try { (function r(n) { if (n > 0) return r(n - 1); const big = String(%[1]d).repeat(%[3]d); const keep = () => big; deeper() })(%[2]d) } catch {} }`},
		{name: "stopped", stopped: true, code: `{ const spin = () => { for (;;); };
  (function r(n) { if (n > 0) return r(n - 1); const big = String(%[1]d).repeat(%[3]d); const keep = () => big; print('spinning'); spin() })(%[2]d) }`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: limit})
			s.ok(`1`)
			base := liveHeap()
			for i := range cells {
				ctx, cancel := context.WithTimeout(context.Background(), testenv.Stretch(30*time.Second))
				// A stopped cell is stopped when it says it spins, its data made.
				rec := &stopSink{Recorder: &runtimetest.Recorder{}, stop: cancel}
				out, err := s.inst.Run(ctx, fmt.Sprintf(c.code, i, 200-10*i, each), rec)
				cancel()
				switch {
				case err != nil:
					t.Fatal(err)
				case out.Failed == c.completes:
					t.Fatalf("cell %d: failed %v, want %v: %s", i, out.Failed, !c.completes, rec.StderrText())
				case c.stopped && !out.Interrupted:
					t.Fatalf("cell %d was not stopped: %s", i, rec.StderrText())
				}
			}
			if grown := liveHeap() - base; grown >= each {
				t.Errorf("after %d cells, each holding %d MiB in a closure of a frame they left, the host keeps %d MiB (the session's limit is %d MiB)",
					cells, each>>20, grown>>20, limit>>20)
			}
			if _, stdout := s.ok(`print(1 + 1)`); stdout != "2\n" {
				t.Errorf("the session after them: %q", stdout)
			}
		})
	}
}
