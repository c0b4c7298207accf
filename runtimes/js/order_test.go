package js_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/js"
)

// orderCell races a slow host call against a timer, and counts an
// interval's ticks while another slow call is awaited: what it prints
// depends on when the wall clock fired the timers.
const orderCell = `const answer = await tool.fast({});
var winner = await Promise.race([tool.slow({}).then(() => 'call'), new Promise(r => setTimeout(() => r('timer'), 30))]);
var ticks = 0; const iv = setInterval(() => ticks++, 20);
await tool.slow({}); clearInterval(iv);
print(answer.n, winner, ticks)`

// recordedRun is what a recording of orderCell kept: the loop's clock
// reads, the order its calls' answers were taken in, its wakes, and what
// it printed.
type recordedRun struct {
	clock []int64
	taken []int
	wakes []js.Wake
	out   string
}

// TestWakeOrderRecordReplay: under WithWakeOrder a cell's timers run on
// the wall clock though the host gives a clock of its own (a timer fires
// while a host call is in flight: the race is won by the timer, and the
// interval ticks while the call is slow), and the wakes it records, with
// the clock reads and the calls' order, replay the same output on a new
// instance at once, the calls answered without delay. A replay whose
// wakes were changed ends the cell, failed, telling Diverged why.
func TestWakeOrderRecordReplay(t *testing.T) {
	const slow = 200 * time.Millisecond
	var rec recordedRun
	var mu sync.Mutex
	start := time.Now()
	s := newSession(t, runtimes.InstanceOptions{
		Nanotime: func() int64 {
			mu.Lock()
			defer mu.Unlock()
			ns := int64(time.Since(start))
			rec.clock = append(rec.clock, ns)
			return ns
		},
		Call: func(ctx context.Context, req []byte) []byte {
			if strings.Contains(string(req), "slow") {
				time.Sleep(slow)
			}
			if tk := js.TicketOf(ctx); tk != nil {
				made := tk.Made()
				tk.WhenTaken(func() { mu.Lock(); rec.taken = append(rec.taken, made); mu.Unlock() })
			}
			return []byte(`{"result": {"n": 7}}`)
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Recorded under WithOrders (both orders in one context); Woke is
	// given the cell's context, which names the cell to a WakeOrder that
	// serves many.
	type cellKey struct{}
	var wokeElsewhere int
	live := js.WithOrders(context.WithValue(ctx, cellKey{}, "recorded"), false, &js.WakeOrder{Woke: func(ctx context.Context, w js.Wake) {
		if ctx.Value(cellKey{}) != "recorded" {
			wokeElsewhere++
		}
		rec.wakes = append(rec.wakes, w)
	}})
	out, r := s.runCtx(live, orderCell)
	rec.out = r.StdoutText()
	if out.Failed || !strings.HasPrefix(rec.out, "7 timer ") || rec.out == "7 timer 0\n" {
		t.Fatalf("recorded: %+v %q %q; want the timer to win and the interval to tick while the calls are slow", out, rec.out, r.StderrText())
	}
	if len(rec.wakes) < 3 || len(rec.taken) != 3 || wokeElsewhere != 0 {
		t.Fatalf("recorded wakes %v (%d told without the cell's context), calls taken %v", rec.wakes, wokeElsewhere, rec.taken)
	}

	replay := func(wakes []js.Wake) (runtimes.Outcome, string, string, string, time.Duration) {
		var at, wakeAt int
		var why string
		s := newSession(t, runtimes.InstanceOptions{
			Nanotime: func() int64 {
				mu.Lock()
				defer mu.Unlock()
				if at >= len(rec.clock) {
					return rec.clock[len(rec.clock)-1] + int64(time.Second)
				}
				at++
				return rec.clock[at-1]
			},
			Call: func(ctx context.Context, req []byte) []byte {
				if tk := js.TicketOf(ctx); tk != nil {
					for i, m := range rec.taken {
						if m == tk.Made() {
							tk.SetRank(i)
						}
					}
				}
				return []byte(`{"result": {"n": 7}}`)
			},
		})
		o := &js.WakeOrder{
			Next: func() (js.Wake, bool) {
				if wakeAt >= len(wakes) {
					return js.Wake{}, false
				}
				wakeAt++
				return wakes[wakeAt-1], true
			},
			Diverged: func(w string) { why = w },
		}
		begin := time.Now()
		out, r := s.runCtx(js.WithCallOrder(js.WithWakeOrder(ctx, o), true), orderCell)
		return out, r.StdoutText(), r.StderrText(), why, time.Since(begin)
	}
	out, got, stderr, why, took := replay(rec.wakes)
	if out.Failed || got != rec.out || why != "" {
		t.Fatalf("replayed: %+v %q (stderr %q, diverged %q); recorded %q", out, got, stderr, why, rec.out)
	}
	if took >= slow {
		t.Errorf("the replay took %v; it waits for neither timers nor calls", took)
	}

	// The first timer's due time changed: the loop finds another.
	bad := append([]js.Wake(nil), rec.wakes...)
	for i := range bad {
		if bad[i].Timer != 0 {
			bad[i].Due++
			break
		}
	}
	out, _, stderr, why, _ = replay(bad)
	if !out.Failed || !strings.Contains(why, "its event loop had timer 1 (due at") || !strings.Contains(stderr, "diverged") {
		t.Fatalf("a replay with a changed due time: %+v, diverged %q, stderr %q", out, why, stderr)
	}
	// A call's answer taken where the journal says a timer fired.
	bad = append([]js.Wake(nil), rec.wakes...)
	for i := range bad {
		if bad[i].Call != 0 {
			bad[i].Call = 9
			break
		}
	}
	out, _, _, why, _ = replay(bad)
	if !out.Failed || !strings.Contains(why, "took the answer of host call") {
		t.Fatalf("a replay with another call's wake: %+v, diverged %q", out, why)
	}
}
