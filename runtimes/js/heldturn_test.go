package js_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/callorder"
	"github.com/wasmeval/wasmeval/runtimes/js"
)

// TestHeldAnswerTurnComesWithRank: a replayed cell calls sub, then quick,
// and its event loop waits at once. Quick's answer comes while sub has no
// rank yet, and is held; then sub is ranked after quick, and its answer
// waits until the cell has taken quick's, as a replayed call whose host
// ran an eval nested in a later wait of the cell does. The loop takes
// quick's answer when sub is ranked. Before, nothing woke it then: it
// waited for sub's answer, which waited for it, until the cell's timeout
// (here, sub's handler gives up after a while and answers, and the test
// fails).
func TestHeldAnswerTurnComesWithRank(t *testing.T) {
	quickTaken := make(chan struct{})
	var gaveUp atomic.Bool
	s := newSession(t, runtimes.InstanceOptions{
		Call: func(ctx context.Context, req []byte) []byte {
			tk := js.TicketOf(ctx)
			if strings.Contains(string(req), "quick") {
				tk.WhenTaken(func() { close(quickTaken) })
				tk.SetRank(0)
				return []byte(`{"result": "quick"}`)
			}
			// Sub is ranked once quick's answer is held, not before.
			p := callorder.ProgressOf(ctx)
			for {
				n, changed := p.Held()
				if n > 0 {
					break
				}
				select {
				case <-changed:
				case <-ctx.Done():
					return []byte(`{"result": "sub stopped"}`)
				}
			}
			tk.SetRank(1)
			select {
			case <-quickTaken:
			case <-time.After(testenv.Stretch(3 * time.Second)):
				gaveUp.Store(true)
			}
			return []byte(`{"result": "sub"}`)
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Stretch(30*time.Second))
	defer cancel()
	out, rec := s.runCtx(js.WithCallOrder(ctx, true), `const s = tool.sub({});
const q = tool.quick({});
console.log(await q);
console.log(await s);`)
	if out.Failed || rec.StdoutText() != "quick\nsub\n" {
		t.Fatalf("%+v %q %q; want quick's answer, then sub's", out, rec.StdoutText(), rec.StderrText())
	}
	if gaveUp.Load() {
		t.Fatal("the loop held quick's answer after sub was ranked after it, until sub's answer came")
	}
}
