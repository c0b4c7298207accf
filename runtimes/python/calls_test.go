package python_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/python"
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

// nestedInstance is an instance whose host calls run their request's
// "code" as a cell nested in the waiting one (as a sub-agent evaluating
// into its parent's session does), and answer with its output.
func nestedInstance(t *testing.T) runtimes.Instance {
	t.Helper()
	return nestedInstanceOn(t, runtimeForTest(t))
}

// nestedInstanceOn is nestedInstance on runtime r.
func nestedInstanceOn(t *testing.T, r *python.Runtime) runtimes.Instance {
	t.Helper()
	var inst runtimes.Instance
	var err error
	inst, err = r.NewInstance(context.Background(), runtimes.InstanceOptions{
		Root: t.TempDir(),
		Call: func(ctx context.Context, req []byte) []byte {
			var q struct{ Code string }
			if err := json.Unmarshal(req, &q); err != nil {
				return []byte(`{"error":"bad request"}`)
			}
			var sub rec
			// No fuel budget of the waiting cell's: as the sandbox, which
			// gives each cell its own.
			o, err := inst.(runtimes.Reentrant).RunNested(runtimes.WithFuelBudget(ctx, 0), q.Code, &sub)
			if err != nil {
				return []byte(`{"error":` + strconv.Quote(err.Error()) + `}`)
			}
			b, _ := json.Marshal(map[string]any{"out": sub.out.String(), "failed": o.Failed, "interrupted": o.Interrupted})
			return b
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close(context.Background()) })
	return inst
}

// callHelper makes one host call from a cell, as the prelude's helpers do.
const callHelper = `import _wasmeval, json
def nest(code):
    cid = _wasmeval.call_start(json.dumps({"code": code}))
    i, resp = _wasmeval.call_wait()
    assert i == cid, (i, cid)
    return json.loads(resp)
`

// TestNestedCell: a cell run by the host while another waits in a host
// call runs in the waiting cell's interpreter: what it defines is there
// when the call returns, its output is its own, and it nests again.
func TestNestedCell(t *testing.T) {
	inst := nestedInstance(t)
	run(t, inst, callHelper)
	r, o := run(t, inst, `before = 1
got = nest("inner = before + 41\nprint('inner says', inner)")
print(got["out"].strip(), got["failed"], inner)
got = nest("deeper = nest('d = 3\\nprint(d)')\nprint('mid', deeper['out'].strip())")
print(got["out"].strip(), d)`)
	want := "inner says 42 False 42\nmid 3 3\n"
	if o.Failed || r.out.String() != want {
		t.Fatalf("%+v\n%s\nwant %q", o, r.out.String(), want)
	}
	// A nested cell that raises fails alone; the waiting cell goes on.
	r, o = run(t, inst, `got = nest("1/0")
print(got["failed"], "ZeroDivisionError" in got["out"], "<cell-" in got["out"])
print("parent goes on")`)
	if o.Failed || r.out.String() != "True True True\nparent goes on\n" {
		t.Fatalf("%+v %q", o, r.out.String())
	}
	// Without a running cell there is nothing to nest in.
	if _, err := inst.(runtimes.Reentrant).RunNested(context.Background(), "1", &rec{}); !errors.Is(err, runtimes.ErrNoCellWaiting) {
		t.Fatalf("RunNested between cells: %v, want ErrNoCellWaiting", err)
	}
}

// TestNestedCellCrash: a nested cell that ends the interpreter ends the
// cell it ran inside too, and the session restarts or rolls back; it never
// takes the host down.
func TestNestedCellCrash(t *testing.T) {
	inst := nestedInstance(t)
	run(t, inst, callHelper)
	r, o := run(t, inst, `nest("import os; os._exit(3)")
print("not reached")`)
	if !o.Failed || strings.Contains(r.out.String(), "not reached") {
		t.Fatalf("%+v %q", o, r.out.String())
	}
	r, o = run(t, inst, "print('alive')")
	if o.Failed || r.out.String() != "alive\n" {
		t.Fatalf("after the crash: %+v %q", o, r.out.String())
	}
}

// TestNestedCellTimeout: a nested cell stopped at its own deadline fails
// alone; the waiting cell goes on.
func TestNestedCellTimeout(t *testing.T) {
	r := runtimeForTest(t)
	var inst runtimes.Instance
	var err error
	inst, err = r.NewInstance(context.Background(), runtimes.InstanceOptions{
		Root: t.TempDir(),
		Call: func(ctx context.Context, req []byte) []byte {
			nctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			o, err := inst.(runtimes.Reentrant).RunNested(nctx, "while True: pass", &rec{})
			b, _ := json.Marshal(map[string]any{"interrupted": o.Interrupted, "err": err != nil})
			return b
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(context.Background())
	out, o := run(t, inst, callHelper+`
print(nest("x"))`)
	if o.Failed || out.out.String() != "{'err': False, 'interrupted': True}\n" {
		t.Fatalf("%+v %q", o, out.out.String())
	}
}

// TestNestedCellFuel: a nested cell's fuel is its own: the waiting cell's
// budget does not pay for it, and the nested cell reports what it used.
func TestNestedCellFuel(t *testing.T) {
	inst := nestedInstance(t)
	run(t, inst, callHelper)
	ctx := runtimes.WithFuelBudget(context.Background(), 50_000_000)
	var r rec
	o, err := inst.Run(ctx, `got = nest("for i in range(2_000_000): pass\nprint('spent')")
print(got["out"].strip())`, &r)
	if err != nil {
		t.Fatal(err)
	}
	if o.Failed || o.FuelExhausted || r.out.String() != "spent\n" {
		t.Fatalf("%+v %q", o, r.out.String())
	}
	if o.FuelUsed >= 50_000_000 {
		t.Fatalf("the waiting cell was charged %d units, its nested cell's included", o.FuelUsed)
	}
}
