package hostcalls

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// TestMeterNoDeadlock: calls that each hold part of the pool and then ask
// for more, together more than the pool, all finish.
func TestMeterNoDeadlock(t *testing.T) {
	p := &pool{size: 10}
	var wg sync.WaitGroup
	var peak atomic.Int64
	done := make(chan struct{})
	go func() { // watch the pool's use
		for {
			select {
			case <-done:
				return
			default:
			}
			p.mu.Lock()
			if u := p.used; u > peak.Load() {
				peak.Store(u)
			}
			p.mu.Unlock()
		}
	}()
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := &meter{p: p}
			defer m.close()
			if err := m.grow(context.Background(), 3); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(time.Millisecond)
			if err := m.grow(context.Background(), int64(4+i%4)); err != nil {
				t.Error(err)
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(testenv.Stretch(20 * time.Second)):
		t.Fatal("calls growing their share deadlocked")
	}
	close(done)
	if peak.Load() > p.size {
		t.Errorf("the pool held %d of %d", peak.Load(), p.size)
	}
	if p.used != 0 || len(p.waiters) != 0 {
		t.Errorf("after all calls: used %d, %d waiters", p.used, len(p.waiters))
	}
	m := &meter{p: p}
	if err := m.grow(context.Background(), 11); err == nil || !strings.Contains(err.Error(), "more than the 11 bytes") && !strings.Contains(err.Error(), "more than the 10 bytes") {
		t.Errorf("a call larger than the pool: %v", err)
	}
}

func TestPoolCancel(t *testing.T) {
	p := &pool{size: 10}
	if !p.tryAcquire(8, false) {
		t.Fatal("tryAcquire")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := p.acquire(ctx, 5); err == nil {
		t.Fatal("acquire past the pool returned before its context ended")
	}
	// A smaller waiter behind the cancelled one is not stuck.
	got := make(chan error, 1)
	go func() { got <- p.acquire(context.Background(), 2) }()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testenv.Stretch(5 * time.Second)):
		t.Fatal("a waiter that fits was not served")
	}
	p.release(10)
	if p.used != 0 || len(p.waiters) != 0 {
		t.Errorf("used %d, %d waiters", p.used, len(p.waiters))
	}
}

func TestCallBudget(t *testing.T) {
	b := NewCallBudget(100, 40)
	if err := b.Reserve(60); err != nil {
		t.Fatal(err)
	}
	err := b.Reserve(50)
	if err == nil || !strings.Contains(err.Error(), "hold 60 bytes of the 100 bytes they may") {
		t.Fatalf("Reserve past the budget: %v", err)
	}
	got := make(chan error, 1)
	go func() { got <- b.Acquire(context.Background(), 50) }()
	select {
	case <-got:
		t.Fatal("Acquire did not wait for room")
	case <-time.After(20 * time.Millisecond):
	}
	b.Release(60)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if b.Held() != 50 {
		t.Errorf("Held = %d", b.Held())
	}
	if err := b.Acquire(context.Background(), 101); err == nil {
		t.Error("Acquire of more than the budget")
	}
}

// TestDispatcherPoolBound runs many large calls of one session at once:
// they all succeed, and what they hold together never passes the pool.
func TestDispatcherPoolBound(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte(strings.Repeat("0123456789abcde\n", 1<<16)), 0o644); err != nil { // 1 MiB
		t.Fatal(err)
	}
	d, err := NewDispatcher(root, nil, DispatcherOptions{MemoryLimitBytes: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var peak atomic.Int64
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			d.work.mu.Lock()
			if u := d.work.used; u > peak.Load() {
				peak.Store(u)
			}
			d.work.mu.Unlock()
		}
	}()
	a := strings.Repeat("a\n", 20000)
	b := strings.Repeat("a\n", 19990) + "b\n"
	diffReq, _ := json.Marshal(map[string]any{"op": "diff", "a": a, "b": b})
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := []byte(`{"op":"read","path":"f.txt"}`)
			if i%2 == 1 {
				req = diffReq
			}
			resp := d.Call(context.Background(), req)
			var r Response
			if err := json.Unmarshal(resp, &r); err != nil || r.Error != nil {
				t.Errorf("call %d: %s", i, resp[:min(len(resp), 300)])
			}
		}()
	}
	wg.Wait()
	close(stop)
	if p := peak.Load(); p > d.work.size || p == 0 {
		t.Errorf("the calls held %d bytes at most; the pool is %d", p, d.work.size)
	}
	t.Logf("peak %d of %d", peak.Load(), d.work.size)
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", "quote \" back \\ slash", "\n\r\t\x00\x01\x1f", "<script>&amp;</script>", "é€😀", "\xff\xfe bad", "\u2028\u2029", string([]byte{0xe2, 0x82})} {
		checkJSONString(t, s)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\x00", "\xff", "😀"} {
		f.Add(s)
	}
	f.Fuzz(checkJSONString)
}

func checkJSONString(t *testing.T, s string) {
	b := appendJSONString(nil, s)
	if int64(len(b)) != jsonStringLen(s) {
		t.Fatalf("%q: wrote %d bytes, measured %d", s, len(b), jsonStringLen(s))
	}
	var back string
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("%q: %s is not JSON: %v", s, b, err)
	}
	// Each invalid byte becomes a U+FFFD of its own, as encoding/json does.
	if want := string([]rune(s)); back != want {
		t.Fatalf("%q came back as %q, want %q", s, back, want)
	}
	if std, _ := json.Marshal(s); len(std) < len(b) && !strings.ContainsAny(s, "<>&\u2028\u2029") {
		t.Fatalf("%q: %d bytes, encoding/json needs %d", s, len(b), len(std))
	}
}

// TestBudgetOfNestedCell: the budget op reports the cell's own agent depth
// when it runs deeper than the dispatcher's (a nested eval's cell), and no
// more seconds left than CellLimits.End allows.
func TestBudgetOfNestedCell(t *testing.T) {
	d, err := NewDispatcher(t.TempDir(), nil, DispatcherOptions{AgentDepth: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	now := time.Now()
	for _, tt := range []struct {
		name       string
		lim        CellLimits
		depth      int
		maxSeconds float64
	}{
		{"own cell", CellLimits{Start: now, HardLimit: 300 * time.Second}, 1, 300},
		{"nested cell", CellLimits{Start: now, HardLimit: 300 * time.Second, AgentDepth: 2, End: now.Add(20 * time.Second)}, 2, 20},
		{"depth never below the session's", CellLimits{Start: now, HardLimit: 300 * time.Second, AgentDepth: 0}, 1, 300},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lim := tt.lim
			b := d.budgetOf(WithCellLimits(context.Background(), func() CellLimits { return lim }))
			if b.AgentDepth != tt.depth || b.Spent.AgentDepth != tt.depth || b.Remaining.AgentDepth != MaxAgentDepth-tt.depth {
				t.Errorf("agent depth %d, spent %d, remaining %d; want %d, %d, %d",
					b.AgentDepth, b.Spent.AgentDepth, b.Remaining.AgentDepth, tt.depth, tt.depth, MaxAgentDepth-tt.depth)
			}
			if b.Remaining.Seconds == nil || *b.Remaining.Seconds > tt.maxSeconds || *b.Remaining.Seconds < tt.maxSeconds-5 {
				t.Errorf("remaining seconds %v, want about %v", b.Remaining.Seconds, tt.maxSeconds)
			}
		})
	}
}
