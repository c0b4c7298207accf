package sandbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/sandbox"
)

// restRuntime is a fakeRuntime whose instances do work between cells, as
// Python's do (AtRest), and count it.
type restRuntime struct {
	*fakeRuntime
	started chan struct{} // a cell began to run

	mu      sync.Mutex
	atRest  int
	running int // cells running now
	during  int // AtRest calls while a cell ran
}

func (r *restRuntime) NewInstance(ctx context.Context, opts runtimes.InstanceOptions) (runtimes.Instance, error) {
	inst, err := r.fakeRuntime.NewInstance(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &restInstance{Instance: inst, rt: r}, nil
}

func (r *restRuntime) counts() (atRest, during int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.atRest, r.during
}

type restInstance struct {
	runtimes.Instance
	rt *restRuntime
}

func (in *restInstance) AtRest() {
	in.rt.mu.Lock()
	defer in.rt.mu.Unlock()
	in.rt.atRest++
	if in.rt.running > 0 {
		in.rt.during++
	}
}

func (in *restInstance) Run(ctx context.Context, code string, sink runtimes.Sink) (runtimes.Outcome, error) {
	in.rt.mu.Lock()
	in.rt.running++
	in.rt.mu.Unlock()
	defer func() {
		in.rt.mu.Lock()
		in.rt.running--
		in.rt.mu.Unlock()
	}()
	select {
	case in.rt.started <- struct{}{}:
	default:
	}
	return in.Instance.Run(ctx, code, sink)
}

// TestSettle: Session.Settle asks the session's instances to do their work
// between cells now (issue 15: `wasmeval eval` calls it after each answer,
// off the next line's path); not while an Eval runs, and not after Close.
func TestSettle(t *testing.T) {
	rt := &restRuntime{fakeRuntime: &fakeRuntime{lang: "py"}, started: make(chan struct{}, 1)}
	sandbox.SetRuntimeForTest(t, "py", func(context.Context) (runtimes.Runtime, error) { return rt, nil })
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}

	s.Settle() // no instance yet: nothing to ask
	if n, _ := rt.counts(); n != 0 {
		t.Fatalf("Settle before any cell called AtRest %d times, want 0", n)
	}
	eval := func(ctx context.Context, code string) *sandbox.Result {
		t.Helper()
		res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: code}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	eval(ctx, "out one")
	<-rt.started
	s.Settle()
	if n, _ := rt.counts(); n != 1 {
		t.Fatalf("Settle after a cell called AtRest %d times, want 1", n)
	}

	// While an Eval runs, Settle leaves its instance alone.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan *sandbox.Result, 1)
	go func() { done <- eval(cctx, "hang") }()
	select {
	case <-rt.started:
	case <-time.After(testenv.Stretch(10 * time.Second)):
		t.Fatal("the hanging cell did not start")
	}
	s.Settle()
	cancel()
	if res := <-done; res.Details.Cells[0].Status != sandbox.StatusCancelled {
		t.Fatalf("the hanging cell ended %q, want cancelled", res.Details.Cells[0].Status)
	}
	if n, during := rt.counts(); n != 1 || during != 0 {
		t.Fatalf("Settle while a cell ran: AtRest called %d times (%d while the cell ran), want 1 (0)", n, during)
	}

	s.Settle()
	if n, _ := rt.counts(); n != 2 {
		t.Fatalf("Settle after the cancelled cell called AtRest %d times in all, want 2", n)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s.Settle()
	if n, _ := rt.counts(); n != 2 {
		t.Fatalf("Settle after Close called AtRest %d times in all, want 2", n)
	}
}
