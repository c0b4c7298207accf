package replay_test

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// cpuHog keeps every CPU busy with spinning goroutines until the
// returned func is called: the load under which a replayed interrupt
// once landed a loop step off its recording.
func cpuHog() (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := 0
			for !done.Load() {
				for i := range 10_000 {
					x ^= i
				}
			}
			_ = x
		}()
	}
	return func() { done.Store(true); wg.Wait() }
}

// TestInterruptReplaysUnderLoad records Python cells stopped by an
// interrupt, a cancellation and a timeout while the CPUs are busy, then
// replays the one tape three times, busy still: every replay delivers
// each interrupt at the recorded fuel check after the recorded fuel (no
// stop divergence, nothing "not exact") and gives the recorded results.
// The guest's fuel depends on its root path's length (see
// replay.Player's rootDir), so a replay in a folder of another length
// put the checks elsewhere and sometimes stopped the loop a step off.
func TestInterruptReplaysUnderLoad(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	stop := cpuHog()
	defer stop()
	s, buf := recordingSession(t, sandbox.Options{})
	if _, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "1"}}}); err != nil {
		t.Fatal(err)
	}
	loop := `i = 0
def step(n):
    return n + 1
print("counting")
try:
    while True:
        i = step(i)
except KeyboardInterrupt:
    print("stopped at", i)
    raise`
	interrupt := func(context.CancelFunc) {
		for s.Interrupt() != nil {
			time.Sleep(10 * time.Millisecond)
		}
	}
	for _, st := range []func(context.CancelFunc){interrupt, func(c context.CancelFunc) { c() }, interrupt} {
		res := stopAfter(t, s, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: loop}}}, 300*time.Millisecond, st)
		if c := res.Details.Cells[0]; c.Status != sandbox.StatusCancelled || !strings.Contains(c.Output, "stopped at ") {
			t.Fatalf("the stopped cell: %s %q", c.Status, c.Output)
		}
	}
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", TimeoutSeconds: 1, Code: "while True:\n    i = step(i)"}}})
	if err != nil || !strings.Contains(res.Details.Cells[0].Output, "KeyboardInterrupt") {
		t.Fatalf("the timed-out cell: %v %+v", err, res)
	}
	s.Close(ctx)
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	stops := 0
	for _, r := range tp.Events {
		if r.Type == tape.TypeStop && r.Checks > 0 {
			stops++
		}
	}
	if stops != 4 {
		t.Fatalf("%d stop records at a fuel check; want 4", stops)
	}
	for i := range 3 {
		rep, err := replay.Run(ctx, tp, replay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Identical || len(rep.NotExact) > 0 {
			t.Errorf("replay %d of the same tape: not exact %q", i+1, rep.NotExact)
			for _, d := range rep.Divergences {
				t.Error(d.String())
			}
		}
	}
}
