package goja

import (
	"errors"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// The fork's change (native_interrupt.go): an iteration that goja steps in
// Go stops at an interrupt. The first cases step a built-in iterator that
// yields undefined 2^53-1 times and keeps nothing (a Set of one value; the
// Go API's ForOf, which the other built-ins' loops share with iterate), so
// that without the check they spin for ever on one core, and only that;
// the next two list the matches of a slow global regexp2 search, the last
// calls a slow native callback for each element of an array.
func TestNativeIterationStopsAtInterrupt(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(r *Runtime) error
	}{
		{"new Set", func(r *Runtime) error {
			_, err := r.RunString("new Set(Array.prototype.values.call({ length: 2 ** 53 - 1 }))")
			return err
		}},
		{"ForOf in a native function", func(r *Runtime) error {
			r.Set("forOf", func(call FunctionCall) Value {
				r.ForOf(call.Argument(0), func(Value) bool { return true })
				return nil
			})
			_, err := r.RunString("forOf(Array.prototype.values.call({ length: 2 ** 53 - 1 }))")
			return err
		}},
		// A global search with regexp2 (a backreference), each match slow:
		// one native call that searches for the next match until the text
		// ends (10000 matches of about 10 ms each).
		{"a global regexp2 search", func(r *Runtime) error {
			_, err := r.RunString(`('a'.repeat(16) + 'y').repeat(1e4).replace(/(a+)+\1x|y/g, '')`)
			return err
		}},
		// The same through a subclass: the generic paths call exec in a
		// loop, split at each position.
		{"split by a RegExp subclass", func(r *Runtime) error {
			_, err := r.RunString(`class R extends RegExp {}; ('a'.repeat(16) + 'y').repeat(1e4).split(new R('(a+)+\\1x|y'))`)
			return err
		}},
		// A built-in that calls a native callback (a slow match) for each
		// element: callChecked.
		{"forEach with a native callback", func(r *Runtime) error {
			_, err := r.RunString(`Array(1e4).fill('a'.repeat(16) + 'y').forEach(RegExp.prototype.test.bind(/(a+)+\1x|z/))`)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New()
			done := make(chan error, 1)
			go func() { done <- tc.run(r) }()
			time.Sleep(50 * time.Millisecond)
			r.Interrupt("stop")
			select {
			case err := <-done:
				var ie *InterruptedError
				if !errors.As(err, &ie) || ie.Value() != "stop" {
					t.Fatalf("%v, want the interrupt", err)
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
