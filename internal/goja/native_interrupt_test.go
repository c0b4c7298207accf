package goja

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// sortSetup makes what the sorts' cases sort, before their clock starts.
const sortSetup = `
var ta = new Float64Array(2e6), a = [];
for (let i = 0; i < ta.length; i++) ta[i] = Math.random();
for (let i = 0; i < 3e5; i++) a.push(Math.random());
`

// finite names the cases whose loop ends, without the check, where the
// interrupt should have stopped it: the next instruction throws it then.
var finite = map[string]bool{
	"toLocaleString over a length": true,
	"a typed array's sort":         true,
	"an array's sort by strings":   true,
}

// The fork's change (native_interrupt.go): an iteration that goja steps in
// Go stops at an interrupt. The first cases step a built-in iterator that
// yields undefined 2^53-1 times and keeps nothing (a Set of one value; the
// Go API's ForOf, which the other built-ins' loops share with iterate), so
// that without the check they spin for ever on one core, and only that;
// the next two list the matches of a slow global regexp2 search, the next
// calls a slow native callback for each element of an array, and the last
// loop in Go over an array-like's length or sort.
func TestNativeIterationStopsAtInterrupt(t *testing.T) {
	for _, tc := range []struct {
		name, code string
	}{
		{"new Set", "new Set(Array.prototype.values.call({ length: 2 ** 53 - 1 }))"},
		{"ForOf in a native function", "forOf(Array.prototype.values.call({ length: 2 ** 53 - 1 }))"},
		// A global search with regexp2 (a backreference), each match slow:
		// one native call that searches for the next match until the text
		// ends (10000 matches of about 10 ms each).
		{"a global regexp2 search", `('a'.repeat(16) + 'y').repeat(1e4).replace(/(a+)+\1x|y/g, '')`},
		// The same through a subclass: the generic paths call exec in a
		// loop, split at each position.
		{"split by a RegExp subclass", `class R extends RegExp {}; ('a'.repeat(16) + 'y').repeat(1e4).split(new R('(a+)+\\1x|y'))`},
		// A built-in that calls a native callback (a slow match) for each
		// element: callChecked.
		{"forEach with a native callback", `Array(1e4).fill('a'.repeat(16) + 'y').forEach(RegExp.prototype.test.bind(/(a+)+\1x|z/))`},
		// Built-ins that loop in Go over an array-like's length, element
		// or not: over 2^53-1 holes, for ever, and keeping nothing.
		{"indexOf over a length", "Array.prototype.indexOf.call({ length: 2 ** 53 - 1 }, 1)"},
		{"join over a length", "Array.prototype.join.call({ length: 2 ** 53 - 1 }, '')"},
		{"reverse over a length", "Array.prototype.reverse.call({ length: 2 ** 53 - 1 })"},
		{"forEach over holes", "Array.prototype.forEach.call({ length: 2 ** 53 - 1 }, (x) => x)"},
		// toLocaleString writes a comma for each hole: 2^24 of them take
		// about 1 s and 16 MiB, and without the check the call ends with
		// its string where the interrupt should have stopped it.
		{"toLocaleString over a length", "Array.prototype.toLocaleString.call({ length: 2 ** 24 }).length"},
		// Sorts: a comparison in Go for each pair, about 1 s for these
		// (made before the clock starts), which end sorted without the
		// check.
		{"a typed array's sort", "ta.sort()"},
		{"an array's sort by strings", "a.sort()"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New()
			if _, err := r.RunString(sortSetup); err != nil {
				t.Fatal(err)
			}
			// forOf steps an iterator through the Go API's ForOf.
			r.Set("forOf", func(call FunctionCall) Value {
				r.ForOf(call.Argument(0), func(Value) bool { return true })
				return nil
			})
			done := make(chan error, 1)
			go func() { _, err := r.RunString(tc.code); done <- err }()
			time.Sleep(50 * time.Millisecond)
			r.Interrupt("stop")
			select {
			case err := <-done:
				var ie *InterruptedError
				if !errors.As(err, &ie) || ie.Value() != "stop" {
					t.Fatalf("%v, want the interrupt", err)
				}
				// Thrown in the native call, not by the next instruction
				// once a finite loop has returned.
				if finite[tc.name] && !strings.Contains(ie.String(), "(native)") {
					t.Fatalf("the interrupt, thrown at %q, want it thrown in a native call", ie.String())
				}
			case <-time.After(testenv.Stretch(10 * time.Second)):
				t.Fatal("the iteration went on 10 s after the interrupt")
			}
			// The runtime runs code again once the interrupt is cleared.
			r.ClearInterrupt()
			if v, err := r.RunString("1 + 1"); err != nil || v.ToInteger() != 2 {
				t.Fatalf("after the interrupt: %v %v", v, err)
			}
		})
	}
}
