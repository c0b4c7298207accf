package python_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes"
)

// exitCases are guest ways to end or crash the interpreter (WASI
// proc_exit, traps) and their harmless siblings. Each cell first sets
// marker, so the state after it says whether it was rolled back.
var exitCases = []struct {
	name string
	code string
	want string // in the cell's output
	// lost: the interpreter ended, so the cell's own changes are gone (the
	// state is the checkpoint's, or a fresh Python's).
	lost bool
}{
	{"os._exit(0)", "import os; os._exit(0)", "the Python interpreter exited with status 0", true},
	{"os._exit(7) in a finally", "import os\ndef f():\n    try:\n        raise ValueError\n    finally:\n        os._exit(7)\nf()", "exited with status 7", true},
	{"os._exit from an atexit handler", "import atexit, os; atexit.register(os._exit, 3); atexit._run_exitfuncs()", "exited with status 3", true},
	{"os._exit from a __del__", "import os, gc\nclass C:\n    def __del__(self): os._exit(0)\nc = C(); del c", "exited with status 0", true},
	{"os.abort", "import os; os.abort()", "the Python runtime crashed (wasm error: unreachable)", true},
	{"SIGTERM", "import signal; signal.raise_signal(signal.SIGTERM)", "the Python runtime crashed", true},
	{"SIGABRT", "import signal; signal.raise_signal(signal.SIGABRT)", "the Python runtime crashed", true},
	{"SIGSEGV", "import faulthandler; faulthandler._sigsegv()", "the Python runtime crashed", true},
	// Recursion through C (map) under a raised limit: deeper than the wasm
	// stack holds, below the recursion cap (_wasmeval_recursion.py).
	// Recursion through C stops with RecursionError at the C recursion
	// cap (wasm/python/patches); hashing nested tuples is C recursion
	// that CPython itself does not check, so it still runs the stack out.
	{"C stack exhausted", "a = ()\nfor i in range(1_000_000): a = (a,)\nhash(a)", "the Python runtime crashed", true},

	{"sys.exit is a SystemExit", "import sys; sys.exit(4)", "SystemExit: 4", false},
	{"SystemExit in a finally", "try:\n    pass\nfinally:\n    raise SystemExit(3)", "SystemExit: 3", false},
	{"SIGINT is a KeyboardInterrupt", "import signal; signal.raise_signal(signal.SIGINT)", "KeyboardInterrupt", false},
	{"no threads", "import threading, os; threading.Thread(target=os._exit, args=(0,)).start()", "can't start new thread", false},
	{"no kill", "import os; os.kill(os.getpid(), 9)", "has no attribute 'kill'", false},
	{"deep parser nesting", "eval('(' * 100000)", "SyntaxError: too many nested parentheses", false},
	{"deep regex nesting", "import re; re.compile('(' * 5000 + ')' * 5000)", "RecursionError", false},
}

// TestGuestExit: no way for a cell to end or crash its interpreter takes
// the host down. The cell fails and says what happened; the session goes
// on, rolled back to before the cell (with checkpoints) or with a fresh
// Python (without). Before the fix os._exit killed the process (SIGSEGV in
// code called after wazero had closed the module and unmapped its memory).
func TestGuestExit(t *testing.T) {
	for _, ckpt := range []bool{true, false} {
		for _, tc := range exitCases {
			name := tc.name
			if !ckpt {
				name += " without checkpoints"
			}
			t.Run(name, func(t *testing.T) {
				inst := newExitInstance(t, ckpt, nil)
				run(t, inst, "kept = 5")
				var r rec
				o, err := inst.Run(context.Background(), "marker = 1\n"+tc.code, &r)
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				out := r.out.String()
				if !o.Failed || !strings.Contains(out, tc.want) {
					t.Fatalf("outcome %+v, output %q; want failed with %q", o, out, tc.want)
				}
				after := "([1], True)" // kept, marker present
				switch {
				case tc.lost && ckpt:
					after = "([1], False)"
					if !strings.Contains(out, "the session's Python state was rolled back to before this cell") {
						t.Fatalf("output %q does not say the state was rolled back", out)
					}
				case tc.lost:
					after = "(None, False)"
					if !strings.Contains(out, "Python was restarted and the session's Python state was lost") {
						t.Fatalf("output %q does not say Python was restarted", out)
					}
				}
				r2, o2 := run(t, inst, "[kept] if 'kept' in globals() else None, 'marker' in globals()")
				if o2.Failed || len(r2.result) != 1 || r2.result[0]["text/plain"] != strings.Replace(after, "[1]", "[5]", 1) {
					t.Fatalf("after the cell: %+v %q %v; want %s", o2, r2.out.String(), r2.result, after)
				}
			})
		}
	}
}

// TestExitWithHostCallInFlight: a guest that exits while its host calls
// run ends its cell at once; the calls are cancelled.
func TestExitWithHostCallInFlight(t *testing.T) {
	cancelled := make(chan struct{}, 1)
	inst := newExitInstance(t, true, func(ctx context.Context, _ []byte) []byte {
		<-ctx.Done()
		cancelled <- struct{}{}
		return []byte(`{}`)
	})
	var r rec
	start := time.Now()
	o, err := inst.Run(context.Background(), "import _wasmeval, os\n_wasmeval.call_start('{\"op\": \"tool\"}')\nos._exit(0)", &r)
	if err != nil || !o.Failed || !strings.Contains(r.out.String(), "exited with status 0") {
		t.Fatalf("Run: %+v %v %q", o, err, r.out.String())
	}
	select {
	case <-cancelled:
	case <-time.After(testenv.Stretch(5 * time.Second)):
		t.Fatal("the host call was not cancelled")
	}
	if d := time.Since(start); d > testenv.Stretch(5*time.Second) {
		t.Fatalf("the cell took %v", d)
	}
	if r2, o := run(t, inst, "print('alive')"); o.Failed || r2.out.String() != "alive\n" {
		t.Fatalf("after: %+v %q", o, r2.out.String())
	}
}

// TestRepeatedExitsReleaseMemory: each exit's interpreter is unmapped once
// it is replaced (wazero's Free is deferred to our Release): a loop of
// exits does not pile up mappings.
func TestRepeatedExitsReleaseMemory(t *testing.T) {
	inst := newExitInstance(t, true, nil)
	run(t, inst, "kept = 5")
	mappings := func() int {
		b, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Skip("no /proc/self/maps")
		}
		return strings.Count(string(b), "\n")
	}
	var r rec
	inst.Run(context.Background(), "import os; os._exit(0)", &r) // warm up
	before := mappings()
	for i := 0; i < 20; i++ {
		var r rec
		o, err := inst.Run(context.Background(), "import os; os._exit(1)", &r)
		if err != nil || !o.Failed {
			t.Fatalf("exit %d: %+v %v %q", i, o, err, r.out.String())
		}
	}
	if after := mappings(); after > before+10 {
		t.Fatalf("mappings grew from %d to %d over 20 exits", before, after)
	}
	if r2, o := run(t, inst, "kept"); o.Failed || r2.result[0]["text/plain"] != "5" {
		t.Fatalf("after: %+v %q", o, r2.out.String())
	}
}

func newExitInstance(t *testing.T, checkpoints bool, call func(context.Context, []byte) []byte) runtimes.Instance {
	t.Helper()
	inst, err := runtimeForTest(t).NewInstance(context.Background(), runtimes.InstanceOptions{
		Root: t.TempDir(), Checkpoints: checkpoints, Call: call,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close(context.Background()) })
	return inst
}
