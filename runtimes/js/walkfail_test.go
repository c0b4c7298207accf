package js

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/runtimetest"
)

// TestWalkPanicIsContained: a walk of a session that panics (goja's layout
// not as the walk expects, or data changing under it; CI once saw a panic
// from inside a walk at a cell's end) fails neither the host nor a cell
// within its limit: the session's size bound stands in for the walk, the
// cell's result is kept, and the session goes on. A cell whose bound is
// over the limit still fails with the limit's message.
func TestWalkPanicIsContained(t *testing.T) {
	freshSize() // walked once per process: not a walk of a session
	preludeGlobals()
	walkFault = func() { panic("a walk that cannot go on") }
	defer func() { walkFault = nil }()

	in, _ := testInstance(t, 256<<20)
	run := func(in *instance, code string) (string, runtimes.Outcome) {
		t.Helper()
		var rec runtimetest.Recorder
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := in.Run(ctx, code, &rec)
		if err != nil {
			t.Fatalf("Run(%q): %v", code, err)
		}
		var b strings.Builder
		for _, e := range rec.Events() {
			b.WriteString(e.Text + e.Bundle["text/plain"])
		}
		return b.String(), out
	}
	// 24 MiB grown: past the growth after which a cell's end walks.
	if text, out := run(in, "globalThis.big = 'x'.repeat(24 << 20); big.length"); out.Failed {
		t.Fatalf("a cell within its limit failed when the walk at its end panicked: %+v\n%s", out, text)
	}
	if got := in.ResidentBytes(); got < 24<<20 {
		t.Errorf("after a failed walk the session counts %d bytes, less than the 24 MiB it holds", got)
	}
	if text, out := run(in, "big.length + 1"); out.Failed || !strings.Contains(text, "25165825") {
		t.Errorf("the session did not go on after the failed walk: %+v\n%s", out, text)
	}

	small, _ := testInstance(t, 16<<20)
	if text, out := run(small, "globalThis.a = []; for (let i = 0; i < 4e5; i++) a.push({ i, s: 'y'.repeat(64) + i }); 1"); !out.Failed || !strings.Contains(text, "memory") {
		t.Errorf("a cell whose size bound passes its 16 MiB limit was not failed for its memory when the walk panicked: %+v\n%s", out, text)
	}
}

// TestTypeFactsCompleteWhenShared: the walk's facts about a type, shared
// by every goroutine that walks (other sessions', the memory monitor),
// are never seen half made: a walk that read a struct's facts while
// another goroutine was still filling them skipped its pointers, or read
// a torn list of fields.
func TestTypeFactsCompleteWhenShared(t *testing.T) {
	const fields = 200
	for round := range 50 {
		var sf []reflect.StructField
		var want []int
		for i := range fields {
			typ := reflect.TypeFor[int64]()
			if i%3 == 2 {
				typ = reflect.TypeFor[*int]()
				want = append(want, i)
			}
			sf = append(sf, reflect.StructField{Name: fmt.Sprintf("F%d_%d", round, i), Type: typ})
		}
		typ := reflect.StructOf(sf) // a type no walk has seen
		start := make(chan struct{})
		var wg sync.WaitGroup
		bad := make(chan string, 8)
		for range 8 {
			wg.Go(func() {
				<-start
				if !hasPointers(typ) {
					bad <- "hasPointers is false"
					return
				}
				if got := pointerFields(typ); !slices.Equal(got, want) {
					bad <- fmt.Sprintf("%d pointer fields, want %d", len(got), len(want))
				}
			})
		}
		close(start)
		wg.Wait()
		close(bad)
		for b := range bad {
			t.Fatalf("round %d: a goroutine saw the facts of a struct of %d fields half made: %s", round, fields, b)
		}
	}
}
