package goja

import (
	"fmt"
	"runtime"
	"testing"
)

// A Map, a Set, a WeakMap and a WeakSet that grow one small entry at a time
// announce their growth (chargeEntries in native_alloc.go): a guard that
// refuses past a budget stops them with an error the script catches, near
// the entries the budget holds, and the refused entry is not made.
func TestAllocGuardStopsGrowingMaps(t *testing.T) {
	const (
		budget = 16 << 20
		keys   = "keys = Array.from({ length: 2e5 }, () => ({}))"
	)
	r := New()
	var told int64
	r.SetAllocGuard(func(n int64) {
		if told+n > budget && told >= 0 { // told < 0: free
			panic(r.newError(r.getRangeError(), "refused"))
		}
		told += n
	})
	if _, err := r.RunString(`
function grow(c, add) {
	let i = 0
	try {
		for (; i < 1e6; i++) add(c, i)
		return 'no error'
	} catch (e) {
		const made = c.size === undefined ? i : c.size
		return (e instanceof RangeError ? e.message : String(e)) + ' after ' + i + ' entries, ' + made + ' made'
	}
}
var keys = []
`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, setup, code string }{
		{"Map", "", "grow(new Map(), (m, i) => m.set(i, i))"},
		{"Set", "", "grow(new Set(), (s, i) => s.add(i))"},
		{"Map of texts", "", "grow(new Map(), (m, i) => m.set('k' + i, null))"},
		// The keys are made first: their array's growth is told too.
		{"WeakMap", keys, "grow(new WeakMap(), (m, i) => m.set(keys[i], i))"},
		{"WeakSet", keys, "grow(new WeakSet(), (s, i) => s.add(keys[i]))"},
	} {
		told = -1 << 40
		if _, err := r.RunString(c.setup); err != nil {
			t.Fatal(err)
		}
		told = 0
		v, err := r.RunString(c.code)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		// The budget holds budget/entryBytes entries: told in steps of a
		// quarter, the refused step is at most a fifth of them, and the
		// first step (8192 entries) is not told.
		most := budget/entryBytes + AllocGuardFrom/entryBytes
		var at, made int
		if _, err := fmt.Sscanf(v.String(), "refused after %d entries, %d made", &at, &made); err != nil {
			t.Errorf("%s: %s, want the guard's RangeError", c.name, v)
		} else if at < most*3/4 || at > most || made != at {
			t.Errorf("%s: refused after %d entries with %d made, want between %d and %d, the refused one not made", c.name, at, made, most*3/4, most)
		}
		if _, err := r.RunString("keys.length = 0"); err != nil {
			t.Fatal(err)
		}
	}
	// A small one tells nothing; the guard's budget left is not touched.
	told = budget
	v, err := r.RunString("grow(new Map(), (m, i) => { if (i == 8000) throw 'enough'; m.set(i, i) })")
	if err != nil || v.String() != "enough after 8000 entries, 8000 made" {
		t.Errorf("a map of 8000 entries: %v %v", v, err)
	}
	runtime.KeepAlive(r)
}

// BenchmarkMapSetMillion is a Map of a million entries made by set, with
// an allocation guard that lets all through: what announcing its growth
// costs a normal Map.set.
func BenchmarkMapSetMillion(b *testing.B) {
	r := New()
	r.SetAllocGuard(func(int64) {})
	prg := MustCompile("", "{ const m = new Map(); for (let i = 0; i < 1e6; i++) m.set(i, i) }", false)
	for b.Loop() {
		if _, err := r.RunProgram(prg); err != nil {
			b.Fatal(err)
		}
	}
}
