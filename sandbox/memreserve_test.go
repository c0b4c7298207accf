package sandbox_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	jsrt "github.com/wasmeval/wasmeval/runtimes/js"
	"github.com/wasmeval/wasmeval/sandbox"
)

// holdCell allocates 150 MB, says so in a file, and holds it until the
// test puts a file named release in its root.
const holdCell = `import os, time
keep = b'x' * (150 << 20)
open('started', 'w').close()
while not os.path.exists('release'):
    time.sleep(0.05)
print('done')`

// TestMemoryBudgetHoldsRunningCells: the manager's memory budget bounds
// running cells, not only idle sessions. Six sessions whose cells each
// grow to 150 MB under a 192 MiB limit, started together under a 512 MiB
// budget: two run (each reserves its 192 MiB limit), the other four wait
// for room and are refused with ErrMemoryBudget and a message that says
// so; the process's memory grows by less than the budget. Afterwards the
// refused sessions run the same cell one after another.
func TestMemoryBudgetHoldsRunningCells(t *testing.T) {
	testenv.RequirePython(t)
	const budget = 512 << 20
	sandbox.SetMemoryWaitForTest(t, 3*time.Second)
	m := newManager(t, sandbox.ManagerOptions{MemoryBudgetBytes: budget, IdleTimeout: -1, TrimIdleAfter: -1,
		Session: sandbox.SessionOptions{MemoryLimitBytes: 192 << 20}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Python's runtime is loaded before the baseline.
	warm := mustCreate(t, m, "warm")
	if _, err := m.Eval(ctx, "warm", warm, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "1"}}}); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(ctx, "warm", warm); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 6)
	roots := make([]string, 6)
	for i := range ids {
		ids[i] = mustCreate(t, m, fmt.Sprint("owner", i))
		sess, err := m.Session(fmt.Sprint("owner", i), ids[i])
		if err != nil {
			t.Fatal(err)
		}
		roots[i] = sess.Root()
	}
	started := func() int {
		n := 0
		for _, r := range roots {
			if _, err := os.Stat(filepath.Join(r, "started")); err == nil {
				n++
			}
		}
		return n
	}
	base := rss()
	if base == 0 {
		t.Fatal("cannot read the process's resident memory from /proc/self/status")
	}
	var peak atomic.Int64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			peak.Store(max(peak.Load(), rss()))
			select {
			case <-stopSampling:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()

	type outcome struct {
		i   int
		res *sandbox.Result
		err error
	}
	outcomes := make(chan outcome, len(ids))
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := m.Eval(ctx, fmt.Sprint("owner", i), ids[i], sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: holdCell, TimeoutSeconds: 120}}})
			outcomes <- outcome{i, res, err}
		}()
	}
	// The four that do not fit are refused after waiting 3 s; meanwhile
	// no more than two cells start.
	var refused []outcome
	maxStarted := 0
	deadline := time.After(testenv.Stretch(90 * time.Second))
	for len(refused) < 4 && maxStarted <= 2 {
		select {
		case o := <-outcomes:
			if o.err == nil {
				t.Fatalf("session %d ran to its end while its cell waits for a file nobody made: %+v", o.i, o.res.Details.Cells[0])
			}
			refused = append(refused, o)
		case <-deadline:
			t.Fatalf("%d evals refused after 90 s, want 4; %d cells started", len(refused), started())
		case <-time.After(20 * time.Millisecond):
		}
		maxStarted = max(maxStarted, started())
	}
	time.Sleep(500 * time.Millisecond)
	maxStarted = max(maxStarted, started())
	for _, r := range roots {
		if err := os.WriteFile(filepath.Join(r, "release"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(stopSampling)
	<-sampled
	close(outcomes)
	for o := range outcomes {
		if o.err != nil && maxStarted > 2 {
			refused = append(refused, o)
			continue
		}
		if o.err != nil {
			t.Errorf("session %d: %v", o.i, o.err)
			continue
		}
		if c := o.res.Details.Cells[0]; c.Status != sandbox.StatusComplete || c.Output != "done\n" {
			t.Errorf("session %d: %s %q", o.i, c.Status, c.Output)
		}
	}
	if maxStarted != 2 {
		t.Errorf("%d cells of 150 MB (limit 192 MiB) ran at once under a 512 MiB budget; want 2", maxStarted)
	}
	const want = "sandbox: the server's memory budget of 512 MiB is in use by running cells; try again later (this eval needs 192 MiB"
	for _, o := range refused {
		if !errors.Is(o.err, sandbox.ErrMemoryBudget) || !strings.HasPrefix(o.err.Error(), want) {
			t.Errorf("session %d: %v; want an ErrMemoryBudget that starts %q", o.i, o.err, want)
		}
	}
	if grew := peak.Load() - base; grew > budget {
		t.Errorf("the process grew by %d MiB, more than the %d MiB budget", grew>>20, budget>>20)
	}
	// Sequential use is unaffected: the refused sessions run the same
	// cell one after another (their release file is there already).
	for _, o := range refused {
		res, err := m.Eval(ctx, fmt.Sprint("owner", o.i), ids[o.i], sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: holdCell}}})
		if err != nil {
			t.Fatalf("session %d, on its own: %v", o.i, err)
		}
		if c := res.Details.Cells[0]; c.Status != sandbox.StatusComplete || c.Output != "done\n" {
			t.Errorf("session %d, on its own: %s %q", o.i, c.Status, c.Output)
		}
	}
}

// rss is the process's resident memory in bytes, 0 where it cannot be
// read.
func rss() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// awaitCommitted waits until m's memory budget counts at least n bytes:
// the eval (what) that is to hold them has reserved them. Not a fixed
// sleep: on a loaded machine an eval can take longer than that to start.
func awaitCommitted(t *testing.T, m *sandbox.Manager, n int64, what string) {
	t.Helper()
	deadline := time.Now().Add(testenv.Stretch(10 * time.Second))
	for sandbox.CommittedForTest(m) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s never reserved its memory: the budget counts %d MiB, want %d", what, sandbox.CommittedForTest(m)>>20, n>>20)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMemoryBudgetWaitEndsAtClose: an eval waiting for room in the budget
// ends with ErrClosed when the manager closes, not after its wait.
func TestMemoryBudgetWaitEndsAtClose(t *testing.T) {
	m := newManager(t, sandbox.ManagerOptions{MemoryBudgetBytes: 96 << 20, IdleTimeout: -1, TrimIdleAfter: -1,
		Session: sandbox.SessionOptions{MemoryLimitBytes: 64 << 20}})
	ctx := context.Background()
	holder, waiter := mustCreate(t, m, "a"), mustCreate(t, m, "b")
	go m.Eval(ctx, "a", holder, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "await new Promise(r => setTimeout(r, 20000))", TimeoutSeconds: 30}}})
	awaitCommitted(t, m, 64<<20, "the holder's eval")
	done := make(chan error, 1)
	go func() {
		_, err := m.Eval(ctx, "b", waiter, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "1"}}})
		done <- err
	}()
	time.Sleep(500 * time.Millisecond) // the waiter waits
	start := time.Now()
	go m.Close(ctx)
	select {
	case err := <-done:
		if !errors.Is(err, sandbox.ErrClosed) {
			t.Errorf("the waiting eval at Close: %v, want ErrClosed", err)
		}
		if took := time.Since(start); took > testenv.Stretch(3*time.Second) {
			t.Errorf("the waiting eval ended %v after Close", took.Round(time.Millisecond))
		}
	case <-time.After(testenv.Stretch(8 * time.Second)):
		t.Fatal("the waiting eval still waits 8 s (stretched by the load) after Close")
	}
}

// managerAgentHost answers agent("CODE") with a JavaScript eval of CODE in
// the same managed session, as serve's client would.
type managerAgentHost struct {
	m         *sandbox.Manager
	owner, id string
}

func (h *managerAgentHost) Agent(ctx context.Context, r hostcalls.AgentRequest) (hostcalls.AgentResponse, error) {
	ectx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := h.m.Eval(ectx, h.owner, h.id, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: r.Prompt}}})
	if err != nil {
		return hostcalls.AgentResponse{}, err
	}
	return hostcalls.AgentResponse{Text: res.Details.Cells[0].Output}, nil
}

func (h *managerAgentHost) Tool(context.Context, hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
	return hostcalls.ToolResponse{}, errors.New("no tools")
}

func (h *managerAgentHost) LLM(context.Context, hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
	return hostcalls.LLMResponse{}, errors.New("no llm")
}

// TestMemoryBudgetNestedEvalShares: an eval nested in a running one (a
// sub-agent's, through the manager) shares its session's reservation and
// never waits for room, though the budget is full (another session's cell
// holds the rest): it would wait for the eval it runs inside.
func TestMemoryBudgetNestedEvalShares(t *testing.T) {
	testenv.RequirePython(t)
	m := newManager(t, sandbox.ManagerOptions{MemoryBudgetBytes: 128 << 20, IdleTimeout: -1, TrimIdleAfter: -1,
		Session: sandbox.SessionOptions{MemoryLimitBytes: 64 << 20}})
	id, other := mustCreate(t, m, "o"), mustCreate(t, m, "other")
	go m.Eval(context.Background(), "other", other, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "await new Promise(r => setTimeout(r, 20000))", TimeoutSeconds: 30}}})
	awaitCommitted(t, m, 64<<20, "the other session's eval") // it holds 64 MiB of the 128
	ctx := sandbox.WithHost(context.Background(), &managerAgentHost{m: m, owner: "o", id: id})
	start := time.Now()
	res, err := m.Eval(ctx, "o", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: `print(agent("print(6 * 7)"), end='')`}}})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Details.Cells[0]; c.Status != sandbox.StatusComplete || c.Output != "42\n" {
		t.Errorf("%s %q", c.Status, c.Output)
	}
	if took := time.Since(start); took > testenv.Stretch(9*time.Second) {
		t.Errorf("the eval with a nested one took %v: the nested eval waited for room", took.Round(time.Millisecond))
	}
}

// TestMemoryBudgetHoldsOneShots: sessions the manager does not hold run
// under its budget through Manager.RunCode and Manager.EvalOutside. A
// one-shot run that holds the budget (alone, its 256 MiB default passes
// the 96 MiB budget) leaves no room for a managed session's eval nor for
// another one-shot, which fail with ErrMemoryBudget; a managed eval that
// holds it leaves none for a one-shot either. Afterwards one-shots run one
// after another.
func TestMemoryBudgetHoldsOneShots(t *testing.T) {
	sandbox.SetMemoryWaitForTest(t, time.Second)
	m := newManager(t, sandbox.ManagerOptions{MemoryBudgetBytes: 96 << 20, IdleTimeout: -1, TrimIdleAfter: -1,
		Session: sandbox.SessionOptions{MemoryLimitBytes: 64 << 20}})
	ctx := context.Background()
	id := mustCreate(t, m, "a")
	hold := "await new Promise(r => setTimeout(r, 4000)); print('held')"
	oneShot := func(code string) (*sandbox.Execution, error) {
		return m.RunCode(ctx, sandbox.RunCodeRequest{Language: "js", Code: code, TempDir: t.TempDir()})
	}
	held := make(chan error, 1)
	go func() {
		out, err := oneShot(hold)
		if err == nil && (out.Error != nil || len(out.Outputs) == 0 || out.Outputs[0].Text != "held\n") {
			err = fmt.Errorf("outputs %+v, error %+v", out.Outputs, out.Error)
		}
		held <- err
	}()
	awaitCommitted(t, m, 96<<20, "the holding one-shot")
	if _, err := m.Eval(ctx, "a", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "1"}}}); !errors.Is(err, sandbox.ErrMemoryBudget) {
		t.Errorf("a managed eval while a one-shot holds the budget: %v, want ErrMemoryBudget", err)
	}
	if _, err := oneShot("1"); !errors.Is(err, sandbox.ErrMemoryBudget) || !strings.Contains(err.Error(), "the server's memory budget of 96 MiB is in use by running cells") {
		t.Errorf("a one-shot while another holds the budget: %v, want ErrMemoryBudget", err)
	}
	if err := <-held; err != nil {
		t.Errorf("the holding one-shot: %v", err)
	}

	go func() {
		_, err := m.Eval(ctx, "a", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: hold, TimeoutSeconds: 30}}})
		held <- err
	}()
	awaitCommitted(t, m, 64<<20, "the holding managed eval")
	if _, err := oneShot("1"); !errors.Is(err, sandbox.ErrMemoryBudget) {
		t.Errorf("a one-shot while a managed eval holds the budget: %v, want ErrMemoryBudget", err)
	}
	if err := <-held; err != nil {
		t.Errorf("the holding managed eval: %v", err)
	}
	for i := range 2 {
		if out, err := oneShot("print(40 + 2)"); err != nil || out.Error != nil || len(out.Outputs) == 0 || out.Outputs[0].Text != "42\n" {
			t.Errorf("one-shot %d afterwards: %+v %v", i+1, out, err)
		}
	}
}

// TestMemoryBudgetCountsGrowthAtEvalEnd: what a JavaScript cell grew its
// session by counts in the budget as soon as its eval ends, before any
// sweep measures the session, though collections run all through the cell
// (one in the middle of a cell once hid its growth from an estimate by the
// live heap), and without walking its VM: the charge is an upper bound
// (the session's last walk plus what was allocated while its cells ran).
// The cell grows the session by 24 MiB, less than the eighth of its limit
// past which a cell's end walks it, so only the bound can see it. Walked
// later, the session holds no more than it was charged.
func TestMemoryBudgetCountsGrowthAtEvalEnd(t *testing.T) {
	m := newManager(t, sandbox.ManagerOptions{MemoryBudgetBytes: 1 << 30, IdleTimeout: -1, TrimIdleAfter: -1,
		Session: sandbox.SessionOptions{MemoryLimitBytes: 256 << 20}})
	id := mustCreate(t, m, "a")
	jsEval(t, m, "a", id, "globalThis.small = 1")
	sess, _ := m.Session("a", id)
	sess.ResidentBytes() // walked: the bound starts from the session's size
	stop := make(chan struct{})
	gcs := make(chan struct{})
	go func() { // collections all through the cell
		defer close(gcs)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
				time.Sleep(5 * time.Millisecond)
			}
		}
	}()
	walks := jsrt.Walks()
	out := jsEval(t, m, "a", id, "globalThis.keep = []; for (let i = 0; i < 24; i++) keep.push(String(i).padEnd(1 << 20, 'x')); keep.length")
	got := m.ResidentBytes() // at once: no sweep has measured it yet
	committed := sandbox.CommittedForTest(m)
	walked := jsrt.Walks() - walks
	close(stop)
	<-gcs
	if !strings.Contains(out, "24") {
		t.Fatalf("the cell: %q", out)
	}
	if got < 24<<20 || committed < 24<<20 {
		t.Errorf("right after a cell that grew its session by 24 MiB the budget counts %d MiB of resident bytes, %d MiB committed: it undercounts", got>>20, committed>>20)
	}
	if walked != 0 {
		t.Logf("the session was walked %d times meanwhile", walked) // the memory monitor may
	}
	if size := sess.ResidentBytes(); size < 24<<20 || size > got {
		t.Errorf("the session walked holds %d MiB, charged %d MiB before: the charge was no upper bound", size>>20, got>>20)
	}
}

// TestMemoryBudgetMeasuresIdleSessionOnce: the manager measures a
// JavaScript session (walks its VM) at most once after each eval; an idle
// session measured since its last eval is never measured again, however
// often the first eval in line asks for room (the sweep for it used to
// trim, and so walk, every idle session each time). Three idle sessions
// are measured once (trimmed when idle 100 ms); then an eval that waits
// for a long cell to end has the sweeper look for room, in vain, for two
// seconds without measuring any of them; after one of them runs a cell,
// only that one is measured again.
func TestMemoryBudgetMeasuresIdleSessionOnce(t *testing.T) {
	sandbox.SetMemoryWaitForTest(t, 2*time.Second)
	m := newManager(t, sandbox.ManagerOptions{MemoryBudgetBytes: 112 << 20, IdleTimeout: -1, TrimIdleAfter: 100 * time.Millisecond,
		Session: sandbox.SessionOptions{MemoryLimitBytes: 64 << 20}})
	ctx := context.Background()
	settle := func() {
		time.Sleep(150 * time.Millisecond)
		for range 3 {
			m.Sweep(ctx)
		}
	}
	ids := []string{mustCreate(t, m, "a"), mustCreate(t, m, "a"), mustCreate(t, m, "a")}
	settle() // new sessions are measured once idle too
	before := sandbox.MeasuresForTest()
	for _, id := range ids {
		jsEval(t, m, "a", id, "globalThis.d = 'y'.repeat(12 << 20)")
	}
	settle()
	if n := sandbox.MeasuresForTest() - before; n != 3 {
		t.Fatalf("three idle sessions were measured %d times, want once each", n)
	}
	// A long cell holds 64 MiB of the 112; an eval needs 64 more and
	// waits: as first in line it asks the sweeper for room at every turn,
	// and urgently once no eval has ended for a while.
	holder, waiter := mustCreate(t, m, "h"), mustCreate(t, m, "w")
	settle()
	held := make(chan error, 1)
	before = sandbox.MeasuresForTest()
	go func() {
		_, err := m.Eval(ctx, "h", holder, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "await new Promise(r => setTimeout(r, 3000))", TimeoutSeconds: 30}}})
		held <- err
	}()
	time.Sleep(300 * time.Millisecond)
	if _, err := m.Eval(ctx, "w", waiter, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "1"}}}); !errors.Is(err, sandbox.ErrMemoryBudget) {
		t.Errorf("the eval waiting for the long cell: %v, want ErrMemoryBudget", err)
	}
	if n := sandbox.MeasuresForTest() - before; n != 0 {
		t.Errorf("sweeping for room measured sessions %d times, though none ran since it was measured", n)
	}
	for _, id := range ids {
		if _, err := m.Session("a", id); err != nil {
			t.Errorf("idle session %s was evicted: %v", id, err)
		}
	}
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	settle() // the holder and the waiter are measured once idle
	// One of them runs again: only it is measured.
	before = sandbox.MeasuresForTest()
	jsEval(t, m, "a", ids[0], "globalThis.e = 'z'.repeat(8 << 20)")
	settle()
	if n := sandbox.MeasuresForTest() - before; n != 1 {
		t.Errorf("after one session ran again the sweeps measured %d sessions, want that one once", n)
	}
}

// TestMemoryBudgetTotalsHold: the budget's running total (kept as evals
// reserve and end, as sessions are measured, trimmed, deleted and evicted,
// so that reserving costs O(1) rather than a pass over every session)
// equals what counting every session again gives, at every moment of a
// mix of concurrent evals, waits, one-shots, deletions, sweeps and
// evictions, and at the end.
func TestMemoryBudgetTotalsHold(t *testing.T) {
	sandbox.SetMemoryWaitForTest(t, 500*time.Millisecond)
	m := newManager(t, sandbox.ManagerOptions{MemoryBudgetBytes: 160 << 20, IdleTimeout: -1, TrimIdleAfter: 50 * time.Millisecond,
		Session: sandbox.SessionOptions{MemoryLimitBytes: 64 << 20}})
	ctx := context.Background()
	stop := make(chan struct{})
	checked := make(chan error, 1)
	go func() { // check while it all runs
		var first error
		for {
			if err := sandbox.CheckMemoryTotalsForTest(m); err != nil && first == nil {
				first = err
			}
			select {
			case <-stop:
				checked <- first
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	for i := range 6 {
		owner := fmt.Sprint("o", i%3)
		id := mustCreate(t, m, owner)
		wg.Go(func() {
			for j := range 6 {
				code := fmt.Sprintf("globalThis.v%d = 'x'.repeat(%d << 20)", j, 1+(i+j)%5)
				if j == 3 {
					code = "await new Promise(r => setTimeout(r, 100))"
				}
				m.Eval(ctx, owner, id, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: code}}})
				if i == 5 && j == 2 {
					m.Delete(ctx, owner, id)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 3 {
			m.RunCode(ctx, sandbox.RunCodeRequest{Language: "js", Code: "'y'.repeat(1 << 20).length", TempDir: t.TempDir()})
		}
	})
	wg.Go(func() {
		for range 20 {
			m.Sweep(ctx)
			time.Sleep(10 * time.Millisecond)
		}
	})
	wg.Wait()
	time.Sleep(100 * time.Millisecond)
	m.Sweep(ctx)
	close(stop)
	if err := <-checked; err != nil {
		t.Errorf("while evals ran: %v", err)
	}
	if err := sandbox.CheckMemoryTotalsForTest(m); err != nil {
		t.Errorf("at the end: %v", err)
	}
}
