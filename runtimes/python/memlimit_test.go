package python_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes/python"
)

// TestDefaultMemoryLimit pins the cap a session gets when it sets none
// (MemoryLimitBytes zero): 256 MiB of guest memory. Allocations that stay
// under it succeed; growing past it raises MemoryError and the session
// lives on. Growing in 8 MiB steps must stop between 224 and 256 MiB (the
// interpreter itself takes about 20 MiB), so a default that moved either
// way fails here.
func TestDefaultMemoryLimit(t *testing.T) {
	if python.DefaultMemoryLimit != 256<<20 {
		t.Fatalf("DefaultMemoryLimit = %d, want 256 MiB (README and DESIGN promise it)", python.DefaultMemoryLimit)
	}
	inst, _ := newInstance(t) // MemoryLimitBytes zero
	mustRun(t, inst, "kept = 'alive'")

	r, o := run(t, inst, "b = bytearray(200 << 20); b[-1] = 1; print(len(b) >> 20, b[-1]); del b")
	if o.Failed || r.out.String() != "200 1\n" {
		t.Fatalf("200 MiB under the default cap: %+v %q", o, r.out.String())
	}

	r, o = run(t, inst, "b = bytearray(300 << 20)")
	if !o.Failed || !strings.Contains(r.out.String(), "MemoryError") {
		t.Fatalf("300 MiB past the default cap: %+v %q", o, r.out.String())
	}

	r, o = run(t, inst, `
held = []
try:
    while True:
        held.append(bytearray(8 << 20))
except MemoryError:
    pass
got = len(held) * 8
del held
print(got)`)
	var got int
	if _, err := fmt.Sscanf(r.out.String(), "%d", &got); o.Failed || err != nil {
		t.Fatalf("growing to the cap: %+v %q", o, r.out.String())
	}
	if got < 224 || got >= 256 {
		t.Fatalf("grew to %d MiB before MemoryError; want the default cap of 256 MiB (224 to 255 MiB for the cell)", got)
	}

	if r, o := run(t, inst, "print(kept)"); o.Failed || r.out.String() != "alive\n" {
		t.Fatalf("after MemoryError: %+v %q", o, r.out.String())
	}
}
