package python_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestHostCallsConcurrent: calls a cell starts with call_start run at the
// same time on the host, and call_wait hands each response back.
func TestHostCallsConcurrent(t *testing.T) {
	r := runtimeForTest(t)
	var inFlight, peak atomic.Int32
	release := make(chan struct{})
	var once sync.Once
	inst, err := r.NewInstance(context.Background(), runtimes.InstanceOptions{
		Root: t.TempDir(),
		Call: func(ctx context.Context, req []byte) []byte {
			n := inFlight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			if n == 4 {
				once.Do(func() { close(release) }) // all four are in flight
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			inFlight.Add(-1)
			return []byte(`{"echo":` + string(req) + `}`)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(context.Background())
	rec, o := run(t, inst, `import _wasmeval, json
ids = [_wasmeval.call_start(json.dumps({"n": i})) for i in range(4)]
got = {}
while len(got) < 4:
    i, resp = _wasmeval.call_wait()
    got[i] = json.loads(resp)["echo"]["n"]
print(sorted(got.values()), sorted(got) == sorted(ids))`)
	if o.Failed || rec.out.String() != "[0, 1, 2, 3] True\n" {
		t.Fatalf("%+v %q", o, rec.out.String())
	}
	if peak.Load() != 4 {
		t.Fatalf("peak in-flight calls = %d, want 4", peak.Load())
	}
}

// TestHostCallInterrupted: a cell waiting on a slow host call is
// interrupted at its timeout, the call's context is cancelled, and the
// session stays.
func TestHostCallInterrupted(t *testing.T) {
	r := runtimeForTest(t)
	cancelled := make(chan struct{})
	inst, err := r.NewInstance(context.Background(), runtimes.InstanceOptions{
		Root: t.TempDir(),
		Call: func(ctx context.Context, req []byte) []byte {
			<-ctx.Done()
			close(cancelled)
			return []byte(`{}`)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(context.Background())
	run(t, inst, "kept = 'yes'")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var rc rec
	o, err := inst.Run(ctx, "import _wasmeval\n_wasmeval.call_start('{}')\n_wasmeval.call_wait()", &rc)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Interrupted || !strings.Contains(rc.out.String(), "KeyboardInterrupt") {
		t.Fatalf("%+v %q", o, rc.out.String())
	}
	select {
	case <-cancelled:
	default:
		t.Fatal("the host call outlived its cell")
	}
	if r2, o := run(t, inst, "kept"); o.Failed || r2.result[0]["text/plain"] != "'yes'" {
		t.Fatalf("state after interrupt: %q", r2.out.String())
	}
}

// TestHostCallsWithoutHandler: with no handler every call gets an error
// response saying so.
func TestHostCallsWithoutHandler(t *testing.T) {
	inst, _ := newInstance(t)
	rec, o := run(t, inst, "import _wasmeval\ni = _wasmeval.call_start('{\"op\": \"read\"}')\nprint(_wasmeval.call_wait()[1])")
	if o.Failed || !strings.Contains(rec.out.String(), "no host calls configured") {
		t.Fatalf("%+v %q", o, rec.out.String())
	}
}
