package js

import (
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

// stderrSink keeps what a cell writes to stderr.
type stderrSink struct{ strings.Builder }

func (s *stderrSink) Stdout(string)                 {}
func (s *stderrSink) Stderr(text string)            { s.WriteString(text) }
func (s *stderrSink) Display(runtimes.Bundle, bool) {}
func (s *stderrSink) Status(string, string)         {}

// TestReleaseGrownJustUnderLimit: after a cell that failed for memory, an
// older global that grew is released when the session, its cell's own
// globals let go, holds more than seven eighths of its limit, though not
// more than the limit: a bomb stopped at 130 MiB once measured 127 of 128
// MiB after it, the grown global was kept, and every later cell that grew
// the session failed (attack's TestJavaScriptBombs, "a bomb that grows the
// older global"). Where the bomb stops varies, so the failed cell's end is
// played here: a cell grows the older array by 3 MiB, to about 61 of 64
// MiB, and releaseGlobals runs as it does after a memory failure.
func TestReleaseGrownJustUnderLimit(t *testing.T) {
	const limit = 64 << 20
	in, run := testInstance(t, limit)
	run("var small = { n: 1 }; var a = []")
	// Grows the session by more than an eighth of its limit: walked at its
	// end, so the shares the next cell starts from have a at ~58 MiB.
	run("for (let i = 0; i < 58; i++) a.push(String(i).padEnd(1 << 20, 'x'))")
	before := globalCount(in.vm)
	run("for (let i = 0; i < 3; i++) a.push(String(i).padEnd(1 << 20, 'z'))")
	var sink stderrSink
	in.vmMu.Lock()
	err := in.releaseGlobals(before, &sink)
	in.vmMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	got := sink.String()
	t.Logf("%s", got)
	if !strings.Contains(got, "Older globals that grew were released too: a (") || !strings.Contains(got, "The session now holds") {
		t.Errorf("after a failed cell that left the session at about 61 of 64 MiB: %q, want a released", got)
	}
	run("if (typeof a !== 'undefined' || small.n !== 1) throw new Error('a kept, or small lost')")
	run("globalThis.again = 'y'.repeat(32 << 20)")
}
