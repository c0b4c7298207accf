package sandbox_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/runtimes"
	jsrt "github.com/wasmeval/wasmeval/runtimes/js"
	"github.com/wasmeval/wasmeval/runtimes/python"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

func TestManagerRecordDir(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	if _, err := sandbox.NewManager(sb, sandbox.ManagerOptions{RecordDir: "/nonexistent/tapes"}); err == nil || !strings.Contains(err.Error(), "give an existing folder") {
		t.Fatalf("a missing RecordDir: %v", err)
	}
	dir := t.TempDir()
	m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{RecordDir: dir, Session: sandbox.SessionOptions{Deterministic: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	var ids []string
	for range 2 {
		id, err := m.Create(ctx, "owner")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		if _, err := m.Eval(ctx, "owner", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "console.log(Date.now(), Math.random())"}}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		if err := m.Delete(ctx, "owner", id); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, id+".wtape")
		rep, err := replay.File(ctx, path, replay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Identical || rep.Requests != 1 || !rep.Header.Options.Deterministic {
			t.Errorf("%s: %+v", path, rep)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d tapes in the record dir; want 2", len(ents))
	}
}

// TestManagerForkRecorded: a fork of a recorded session (serve's fork
// endpoint) gets a tape that starts with its source's, read back from the
// source's file, and replays on its own; so does the source's.
func TestManagerForkRecorded(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	dir := t.TempDir()
	m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{RecordDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	id, err := m.Create(ctx, "owner")
	if err != nil {
		t.Fatal(err)
	}
	eval := func(id, code string) string {
		t.Helper()
		res, err := m.Eval(ctx, "owner", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: code}}})
		if err != nil || res.Details.Cells[0].Status != sandbox.StatusComplete {
			t.Fatalf("%v %+v", err, res)
		}
		return res.Details.Cells[0].Output
	}
	eval(id, "import random, time\nx = random.random()\nopen('x.txt', 'w').write(str(x))")
	fid, err := m.Fork(ctx, "owner", id)
	if err != nil {
		t.Fatal(err)
	}
	if out := eval(fid, "print(x == float(open('x.txt').read()), random.random(), time.time())"); !strings.HasPrefix(out, "True ") {
		t.Fatalf("the fork: %q", out)
	}
	live, err := m.Tape("owner", fid)
	if err != nil || len(live) == 0 {
		t.Fatalf("the fork's tape so far: %v", err)
	}
	for _, i := range []string{fid, id} {
		if err := m.Delete(ctx, "owner", i); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		id       string
		requests int
	}{{id, 1}, {fid, 2}} {
		rep, err := replay.File(ctx, filepath.Join(dir, tc.id+".wtape"), replay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Identical || rep.Requests != tc.requests {
			for _, d := range rep.Divergences {
				t.Error(d.String())
			}
			t.Errorf("%s: %d requests, identical %v; want %d", tc.id, rep.Requests, rep.Identical, tc.requests)
		}
	}
}

// TestInterruptBeforeStartReplaysJavaScript: a JavaScript cell interrupted
// while its runtime was still starting (held here until the interrupt, as
// a slow start would be) is recorded as stopped before its start, and its
// replay does not run it: without that, the replayed runtime, given a
// done context, wrote an "Interrupted" line the recording did not have.
// The replay is byte for byte and exact (no NotExact line). The Python
// case is TestInterruptBeforeStartReplays.
func TestInterruptBeforeStartReplaysJavaScript(t *testing.T) {
	var held atomic.Bool
	sandbox.SetRuntimeForTest(t, "js", func(ctx context.Context) (runtimes.Runtime, error) {
		if held.CompareAndSwap(false, true) { // the first start only
			<-ctx.Done()
			return nil, context.Cause(ctx)
		}
		return jsrt.New(), nil
	})
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	var buf bytes.Buffer
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Record: &buf})
	if err != nil {
		t.Fatal(err)
	}
	evalDone := interruptOnceRunning(s)
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "globalThis.x = 'ran'; console.log(x)"}, {Language: "js", Code: "1"}}})
	evalDone()
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Details.Cells[0]; c.Status != sandbox.StatusCancelled || c.Output != "cancelled: interrupted\n" || res.Details.Cells[1].Status != sandbox.StatusPending {
		t.Fatalf("the interrupted cell: %s %q; want it cancelled before it ran", c.Status, c.Output)
	}
	res, err = s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "console.log(typeof x)"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Details.Cells[0].Output; got != "undefined\n" {
		t.Fatalf("after the interrupted cell: %q", got)
	}
	s.Close(ctx)
	replaysStoppedBeforeStart(t, buf.Bytes(), replay.Options{Sandbox: sandbox.Options{CacheDir: t.TempDir()}})
}

// TestInterruptBeforeStartReplays: a Python cell interrupted while the
// session was still starting its runtime (before any of its code ran) is
// recorded as stopped before its start (before_start, at position zero),
// and its replay does not run it either: the same cancelled result, and
// the state after it (the cell's assignment never made) is the same. The
// replay is exact, and its report says so (no NotExact line). The
// runtime's start is held until the interrupt (a test hook), as in
// TestInterruptBeforeStartReplaysJavaScript: this test lived in replay,
// where it interrupted a session whose start waited for another's
// template boot, which a warm cache makes a few milliseconds; on a loaded
// machine the interrupter then missed the Eval, and, its loop waiting for
// an Eval that had ended, hung the test for good.
func TestInterruptBeforeStartReplays(t *testing.T) {
	testenv.RequirePython(t)
	cache := ""
	if dir, err := os.UserCacheDir(); err == nil {
		cache = filepath.Join(dir, "wasmeval") // the sandbox's default
	}
	var held atomic.Bool
	sandbox.SetRuntimeForTest(t, "py", func(ctx context.Context) (runtimes.Runtime, error) {
		if held.CompareAndSwap(false, true) { // the first start only
			<-ctx.Done()
			return nil, context.Cause(ctx)
		}
		return python.New(ctx, python.Config{CacheDir: cache})
	})
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	var buf bytes.Buffer
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Record: &buf})
	if err != nil {
		t.Fatal(err)
	}
	evalDone := interruptOnceRunning(s)
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "x = 'ran'\nprint(x)"}}})
	evalDone()
	if err != nil {
		t.Fatal(err)
	}
	c := res.Details.Cells[0]
	if c.Status != sandbox.StatusCancelled || c.Output != "cancelled: interrupted\n" {
		t.Fatalf("the interrupted cell: %s %q; want it cancelled before it ran", c.Status, c.Output)
	}
	res, err = s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "print(globals().get('x', 'never ran'))"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Details.Cells[0].Output; got != "never ran\n" {
		t.Fatalf("after the interrupted cell: %q", got)
	}
	s.Close(ctx)
	tp, stop := replaysStoppedBeforeStart(t, buf.Bytes(), replay.Options{})
	if stop.Checks != 0 || stop.Fuel != 0 {
		t.Errorf("the stop record %+v; want no checks or fuel at position zero", stop)
	}

	// As a tape of format 2 held it (a stop at position zero, without
	// before_start): it still replays, and the report says the tape
	// cannot name the point, not that Python meters no fuel.
	old := *tp
	old.Header.Format = 2
	old.Events = nil
	for _, r := range tp.Events {
		r.BeforeStart = false
		old.Events = append(old.Events, r)
	}
	rep, err := replay.Run(ctx, &old, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Identical {
		for _, d := range rep.Divergences {
			t.Error(d.String())
		}
	}
	if len(rep.NotExact) != 1 || !strings.Contains(rep.NotExact[0], "request 1, cell 0: stopped by an interrupt when recorded, at a point a tape of format 2 cannot name") || strings.Contains(rep.NotExact[0], "JavaScript") {
		t.Errorf("not exact, format 2: %q", rep.NotExact)
	}
}

// interruptOnceRunning interrupts s as soon as an Eval has begun on it;
// call the function it returns when the Eval has returned: it stops
// trying (an Eval that was never interrupted then fails its test's checks
// instead of hanging it) and waits for the interrupter to end.
func interruptOnceRunning(s *sandbox.Session) (evalDone func()) {
	done, returned := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for s.Interrupt() != nil { // ErrNotRunning until the Eval has begun
			select {
			case <-returned:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() {
		close(returned)
		<-done
	}
}

// replaysStoppedBeforeStart checks a recording whose first request's cell
// 0 was interrupted before its runtime started: the tape holds that one
// stop, marked before_start, and replays identically and exactly, two
// requests. It returns the tape and the stop record.
func replaysStoppedBeforeStart(t *testing.T, recording []byte, opts replay.Options) (*tape.Tape, tape.Record) {
	t.Helper()
	tp, err := tape.Read(bytes.NewReader(recording))
	if err != nil {
		t.Fatal(err)
	}
	var stops []tape.Record
	for _, r := range tp.Events {
		if r.Type == tape.TypeStop {
			stops = append(stops, r)
		}
	}
	if len(stops) != 1 || stops[0].Cause != tape.CauseInterrupt || stops[0].Cell != 0 || !stops[0].BeforeStart {
		t.Fatalf("stop records %+v; want one interrupt of cell 0 before its start", stops)
	}
	rep, err := replay.Run(context.Background(), tp, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Identical || rep.Requests != 2 {
		for _, d := range rep.Divergences {
			t.Error(d.String())
		}
		t.Fatalf("the cell stopped before its start did not replay (%d requests)", rep.Requests)
	}
	if len(rep.NotExact) != 0 {
		t.Errorf("not exact: %q; the stop before the start replays exactly", rep.NotExact)
	}
	return tp, stops[0]
}
