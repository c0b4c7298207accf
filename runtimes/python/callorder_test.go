package python_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/callorder"
)

// TestHeldAnswerTurnComesWithRank: a replayed cell starts sub, then
// quick, and waits at once. Quick's answer comes while sub has no rank
// yet, and is held (sub's might have been recorded first); then sub is
// ranked after quick, and its answer waits until the cell has taken
// quick's, as a replayed call whose host ran an eval nested in a later
// wait of the cell does. The wait takes quick's answer when sub is
// ranked. Before, nothing woke it then: it waited for sub's answer, which
// waited for it, until the cell's timeout (here, sub's handler gives up
// after a while and answers, and the test fails).
func TestHeldAnswerTurnComesWithRank(t *testing.T) {
	r := runtimeForTest(t)
	quickTaken := make(chan struct{})
	var gaveUp atomic.Bool
	inst, err := r.NewInstance(context.Background(), runtimes.InstanceOptions{
		Root: t.TempDir(),
		Call: func(ctx context.Context, req []byte) []byte {
			tk := callorder.TicketOf(ctx)
			if strings.Contains(string(req), "quick") {
				tk.WhenTaken(func() { close(quickTaken) })
				tk.SetRank(0)
				return []byte(`"quick"`)
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
					return []byte(`"sub stopped"`)
				}
			}
			tk.SetRank(1)
			select {
			case <-quickTaken:
			case <-time.After(testenv.Stretch(3 * time.Second)):
				gaveUp.Store(true)
			}
			return []byte(`"sub"`)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Stretch(30*time.Second))
	defer cancel()
	var out rec
	o, err := inst.Run(callorder.With(ctx, true), `import _wasmeval, json
s = _wasmeval.call_start('{"name": "sub"}')
q = _wasmeval.call_start('{"name": "quick"}')
got = []
while len(got) < 2:
    i, resp = _wasmeval.call_wait()
    got.append(json.loads(resp))
print(got)`, &out)
	if err != nil {
		t.Fatal(err)
	}
	if o.Failed || out.out.String() != "['quick', 'sub']\n" {
		t.Fatalf("%+v %q; want quick's answer, then sub's", o, out.out.String())
	}
	if gaveUp.Load() {
		t.Fatal("the wait held quick's answer after sub was ranked after it, until sub's answer came")
	}
}
