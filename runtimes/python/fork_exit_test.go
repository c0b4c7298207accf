package python_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestForkOfHostileState: a fork sets the copy up by running the prelude's
// setup in it, with the source's state, which the guest may have patched.
// A setup that exits or never returns fails the fork within a bound; the
// source session is untouched. Before, a looping setup hung Fork forever
// (no cell context, so nothing interrupted it).
func TestForkOfHostileState(t *testing.T) {
	tests := []struct{ name, patch, want string }{
		{"exit", "import os\nos.chdir = lambda p: os._exit(0)", "the interpreter exited with status 0"},
		{"loop", "import os\ndef spin(p):\n    while True:\n        try:\n            while True: pass\n        except BaseException: pass\nos.chdir = spin", "did not finish"},
		{"raise", "import os\ndef bad(p): raise RuntimeError('nope')\nos.chdir = bad", "setup failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inst := newExitInstance(t, true, nil)
			mustRun(t, inst, "kept = 5\n"+tc.patch)
			start := time.Now()
			cp, err := inst.(runtimes.Forker).Fork(context.Background(), runtimes.InstanceOptions{Root: t.TempDir()})
			if err == nil {
				cp.Close(context.Background())
				t.Fatal("Fork of a state whose setup fails: no error")
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Fatalf("Fork took %v", d)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Fork: %v; want it to say %q", err, tc.want)
			}
			if r := mustRun(t, inst, "print(kept)"); r.out.String() != "5\n" {
				t.Fatalf("source after the failed fork: %q", r.out.String())
			}
		})
	}
}
