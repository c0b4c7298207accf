package goja

import (
	"runtime/metrics"
	"testing"
)

// The fork's change (native_alloc.go): each big allocation path of the
// built-ins tells the guard its size before it allocates, and a guard that
// throws stops it: the script catches the error and the heap has not grown
// by the allocation.

func heapObjects() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

func TestAllocGuardRefusesBeforeAllocating(t *testing.T) {
	r := New()
	const room = 32 << 20 // what the guard lets through
	var asked int64
	r.SetAllocGuard(func(n int64) {
		asked = max(asked, n)
		if n > room {
			panic(r.newError(r.getRangeError(), "refused"))
		}
	})
	if _, err := r.RunString(`
var ascii = 'x'.repeat(40 << 20), wide = '\u00e9'.repeat(20 << 20);
function refused(f) { try { f(); return 'no error' } catch (e) { return e instanceof RangeError ? e.message : String(e) } }
`); err == nil {
		t.Fatal("a 40 MiB repeat was let through")
	}
	cases := []string{
		"{ const s = 'x'.repeat(24 << 20); s + s }",                                  // concatenation
		"'ab'.repeat(20 << 20)",                                                      // repeat
		"'\\u00e9'.repeat(20 << 20)",                                                 // repeat, two bytes a character
		"''.padStart(40 << 20)",                                                      // padStart
		"'x'.padEnd(40 << 20, '\\u00e9')",                                            // padEnd, two bytes
		"'x'.concat('y'.repeat(20 << 20), 'z'.repeat(20 << 20))",                     // concat
		"new Array(1 << 20).fill('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL').join('')", // join
		"'x'.repeat(1 << 20).split('')",                                              // split: 48 MiB of parts
		"'x'.repeat(1 << 20).replaceAll('x', 'xx')",                                  // replaceAll's matches
		"{ const a = []; for (let i = 0; i < 4e6; i++) a.push(i) }",                  // array growth
		"{ const a = []; for (let i = 0; i < 4e6; i++) a[i] = i }",                   // array growth
		"{ const a = new Array(3e6).fill(0); [...a] }",                               // spread
		"{ const a = new Array(3e6).fill(0); Math.max(...a) }",                       // spread into arguments
		"Array.from({ length: 4e6 })",                                                // growth from an array-like
		"new Float64Array(5e6)",                                                      // typed array
		"new ArrayBuffer(40 << 20)",                                                  // buffer
		"new Uint8Array(4e6).map(x => x).slice().subarray(0).map(x => x) && new Float64Array(new Uint8Array(5e6))", // typed array from another
	}
	for _, code := range cases {
		asked = 0
		before := heapObjects()
		v, err := r.RunString("refused(() => " + code + ")")
		if err != nil {
			t.Errorf("%s: %v", code, err)
			continue
		}
		if got := v.String(); got != "refused" {
			t.Errorf("%s: %s (the guard was asked for at most %d bytes), want the guard's RangeError", code, got, asked)
		}
		// The refused allocation never happened (what the script made
		// before it, up to the room, may have, and the garbage of an
		// array's steps of growth).
		if grown := heapObjects() - before; grown > 5*room {
			t.Errorf("%s: the heap grew by %d MiB", code, grown>>20)
		}
	}
	// Without a guard, and under it, the allocations are made.
	v, err := r.RunString("[('x'.repeat(1 << 20) + 'y').length, 'ab'.repeat(1 << 18).split('b').length, new Float64Array(1 << 20).length].join()")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), "1048577,262145,1048576"; got != want {
		t.Errorf("allocations under the guard's room: %s, want %s", got, want)
	}
}
