package url

import (
	"errors"
	"runtime"
	"testing"

	"github.com/wasmeval/wasmeval/internal/goja"
)

// TestSearchParamsAnnounceAllocations: parsing a query, listing the
// parameters of an object or an iterable and encoding them tell the
// runtime's allocation guard at least what they allocate, before they do,
// and a guard that throws stops them; they announced nothing ('a&' made
// a parameter of about 100 bytes of each 2 bytes of text).
func TestSearchParamsAnnounceAllocations(t *testing.T) {
	vm := goja.New()
	module := vm.NewObject()
	_ = module.Set("exports", vm.NewObject())
	Require(vm, module)
	exports := module.Get("exports").ToObject(vm)
	_ = vm.Set("URL", exports.Get("URL"))
	_ = vm.Set("URLSearchParams", exports.Get("URLSearchParams"))
	if _, err := vm.RunString(`
var short = 'a&'.repeat(5e5), escaped = 'a=%41%42&'.repeat(3e5), query = '?' + short;
var wide = new URLSearchParams(); for (let i = 0; i < 1000; i++) wide.append('\u00e9' + i, '\u00e9 &'.repeat(1000));
var obj = {}; for (let i = 0; i < 3e5; i++) obj['k' + i] = 'v';
var pairs = []; for (let i = 0; i < 3e5; i++) pairs.push(['k', 'v']);
var url = new URL('http://x/'), url2 = new URL('http://x/');
`); err != nil {
		t.Fatal(err)
	}
	cases := []string{
		"new URLSearchParams(short)",
		"new URLSearchParams(escaped)",
		"wide.toString()",
		"new URLSearchParams(obj)",
		"new URLSearchParams(pairs)",
		"url.search = query, url.searchParams",
		"url2.searchParams, url2.search = query",
	}
	// An iterable's parameters are listed as its iterator gives them:
	// what the list holds is announced as it grows, and the garbage
	// of the iteration is any loop's.
	held := map[string]bool{"new URLSearchParams(pairs)": true}
	var asked int64
	room := int64(-1)
	vm.SetAllocGuard(func(n int64) {
		asked = max(asked, n) // the whole, each time
		if room >= 0 && n > room {
			panic(vm.NewGoError(errors.New("refused")))
		}
	})
	for _, code := range cases {
		asked = 0
		_, _ = vm.RunString("0") // lets go of the last result
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		v, err := vm.RunString(code)
		runtime.ReadMemStats(&m1)
		if err != nil {
			t.Errorf("%s: %v", code, err)
			continue
		}
		took := int64(m1.TotalAlloc - m0.TotalAlloc)
		if held[code] {
			runtime.GC()
			runtime.ReadMemStats(&m1)
			took = int64(m1.HeapAlloc - m0.HeapAlloc)
		}
		runtime.KeepAlive(v)
		t.Logf("%s: took %d, announced %d", code, took, asked)
		if asked < took*9/10 {
			t.Errorf("%s: announced %d bytes and took %d", code, asked, took)
		}
	}
	room = 1 << 20
	for _, code := range cases[:5] {
		v, err := vm.RunString("try { " + code + "; 'made' } catch (e) { String(e) }")
		if err != nil {
			t.Fatal(err)
		}
		if got := v.String(); got != "GoError: refused" {
			t.Errorf("%s with 1 MiB of room: %s, want the guard's error", code, got)
		}
	}
}
