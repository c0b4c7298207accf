package js_test

import (
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestRegExpBacktrackingCap: a backtracking match whose stack would pass
// the cap (2^21 slots) stops with the RangeError that says so, and the
// cell may catch it; one under the cap matches. Without the cap the stack
// grew as far as the match timeout let it, and the RegExp tests here and
// in attack passed (the mutation pass of docs/mutations.md).
func TestRegExpBacktrackingCap(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	got, _ := s.ok(`{ let why = 'no error'; try { /^(?:(a)|b)*(?=$)/.test('ab'.repeat(3e6)) } catch (e) { why = e instanceof RangeError ? e.message : 'other: ' + e }; why }`)
	// On a loaded machine the match's 1 s timeout may come first: either
	// stop is the sandbox's, and the cap is what kept the stack small
	// until then (without it this match grew the heap past the 256 MiB
	// memory limit, an uncaught error here).
	if !strings.Contains(got, "needs more backtracking than the sandbox allows") && !strings.Contains(got, regexpStoppedText) {
		t.Errorf("a match past the backtracking cap: %s, want a RangeError that says it needs more backtracking than the sandbox allows", got)
	}
	if got, _ := s.ok("/^(?:a|b)*(?=$)/.test('ab'.repeat(1e5))"); got != "true" {
		t.Errorf("a match under the cap: %s", got)
	}
}
