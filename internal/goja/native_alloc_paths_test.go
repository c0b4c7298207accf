package goja

import (
	"testing"
)

// The paths of FORK.md item 4 that a first pass left out (regexp matches,
// split of UTF-16 text, JSON.parse, lists from array-likes, the keys of
// arrays and typed arrays, text builders, eval) tell the guard of their
// allocation before they make it, and a guard that throws stops it.
func TestAllocGuardCoversEveryPath(t *testing.T) {
	r := New()
	const room = 32 << 20
	var asked int64
	r.SetAllocGuard(func(n int64) {
		asked = max(asked, n)
		if n > room {
			panic(r.newError(r.getRangeError(), "refused"))
		}
	})
	if _, err := r.RunString(`
var ascii = 'x'.repeat(4 << 20), wide = '\u00e9'.repeat(2 << 20);
var ta = new Uint8Array(4e6), fa = new Float64Array(2e6).fill(0.123456789012345), arr = new Array(1e6).fill(0);
var json = '[' + '0,'.repeat(4e6) + '0]', dense = '[' + '0,'.repeat(1e6) + ']', arrows = '[' + 'a=>a,'.repeat(2e5) + ']';
var map = new Map(); for (let i = 0; i < 3e5; i++) map.set(i, i);
var wider = '\u00e9'.repeat(5 << 20), cjk = '\u1234'.repeat(4 << 20);
function refused(f) { try { f(); return 'no error' } catch (e) { return e instanceof RangeError ? e.message : String(e) } }
`); err != nil {
		t.Fatal(err)
	}
	cases := []string{
		"ascii.replace(/x/g, 'xx')",                      // regexp replace: the list of matches
		"ascii.replace(/x/g, () => 'y')",                 // with a function
		"ascii.replace(/x(?=x)/g, 'y')",                  // regexp2
		"wide.replace(/\\u00e9/g, 'a')",                  // UTF-16 text
		"ascii.match(/x/g)",                              // match
		"ascii.split(/(?:)/)",                            // split by a RegExp
		"wide.split('')",                                 // split of UTF-16 text
		"(wide + 'a').split('\\u00e9')",                  // by a separator
		"JSON.parse(json)",                               // JSON.parse of a long array
		"Math.max.apply(null, { length: 1e7 })",          // Function.prototype.apply of an array-like
		"Reflect.apply(Math.max, null, { length: 1e7 })", // Reflect.apply
		"Reflect.construct(Array, { length: 1e7 })",      // Reflect.construct
		"String.raw({ raw: { length: 1e7 } })",           // String.raw
		"Object.keys(ta)",                                // keys of a typed array
		"Object.getOwnPropertyNames(ta)",
		"Reflect.ownKeys(ta)",
		"Object.values(ta)",
		"Object.entries(arr)",
		"Object.getOwnPropertyDescriptors(ta)",
		"Object.assign({}, ta)",
		"Array.prototype.fill.call({ length: 1e7 }, 0)", // a plain object's properties
		"fa.join(',')",                                  // typed array join
		"fa.toString()",
		"new Function('return ' + dense)", // parse and compile
		"eval(dense)",
		"eval(arrows)",            // 1 MB of code, 350 MB to parse and compile
		"escape(cjk + cjk)",       // escape: 6 bytes a character
		"encodeURIComponent(cjk)", // 9 bytes a character
		"wider.toUpperCase()",     // through x/text and back
		"wider.toLowerCase()",
		"wider.normalize('NFD')",
		"wider.localeCompare(wider)",
		"JSON.stringify(new Array(1e6).fill('x'.repeat(40)))", // many values
		"JSON.stringify([ascii, ascii, ascii, ascii, ascii])", // long texts
		"Array.from(map.entries())",                           // a Map's entries: an array of two each
		"Array.from(map)",
		"[...map]",
		"[0, ...map.entries()]",
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
		if grown := heapObjects() - before; grown > 5*room { // with the garbage of what was let through
			t.Errorf("%s: the heap grew by %d MiB", code, grown>>20)
		}
	}
}

// TestAllocGuardedResultsAreUpstreams: under a guard that lets everything
// through, the guarded paths (a regexp's matches searched in doubling
// steps, the builders, the keys) give what they give without one.
func TestAllocGuardedResultsAreUpstreams(t *testing.T) {
	const setup = `var s = 'ab'.repeat(300000) + 'a\u00e9b', w = s.repeat(2);`
	code := `[
	s.replace(/a/g, 'c').length, s.replace(/a(b)/g, '$1$1').slice(-12), s.replace(/(?<=a)b/g, () => 'B').slice(-9),
	s.match(/b/g).length, s.match(/ab|\u00e9/g).length, s.split(/a/).length, s.split(/(a)/, 100001).length,
	w.split('').length, w.split('\u00e9').length, w.replace(/\u00e9/g, 'e').length,
	Object.keys(new Uint8Array(70000)).length, Object.entries(new Array(70000).fill(1)).length,
	String.raw({ raw: { length: 300000 } }).length, new Float64Array(100000).fill(1.5).join().length,
	JSON.parse('[' + '1,'.repeat(200000) + '1]').length,
	(() => { const re = /ab/y; return s.replace(re, 'x').length + ':' + re.lastIndex })(),
	(() => { const re = /a/g; re.lastIndex = 5; return s.replace(re, '').length })(),
].join()`
	run := func(guard bool) (string, int64) {
		r := New()
		var asked int64
		if guard {
			r.SetAllocGuard(func(n int64) { asked += n })
		}
		if _, err := r.RunString(setup); err != nil {
			t.Fatal(err)
		}
		v, err := r.RunString(code)
		if err != nil {
			t.Fatal(err)
		}
		return v.String(), asked
	}
	want, _ := run(false)
	got, asked := run(true)
	if got != want {
		t.Errorf("guarded: %s\nwant (upstream): %s", got, want)
	}
	if asked == 0 {
		t.Error("the guard was never asked")
	}
}

// TestAllocGuardCopiesOfArrays: the built-ins that copy an array's values
// into a new slice of their size announce it first.
func TestAllocGuardCopiesOfArrays(t *testing.T) {
	r := New()
	if _, err := r.RunString(`
var arr = new Array(2e6).fill(0);
function refused(f) { try { f(); return 'no error' } catch (e) { return e instanceof RangeError ? e.message : String(e) } }
`); err != nil {
		t.Fatal(err)
	}
	const room = 16 << 20 // the array's values are 32 MB
	r.SetAllocGuard(func(n int64) {
		if n > room {
			panic(r.newError(r.getRangeError(), "refused"))
		}
	})
	for _, code := range []string{
		"arr.slice()", "arr.splice(0, 2e6 - 1)", "arr.map((x) => x)", "arr.toSorted()", "arr.toSpliced(0, 0, 1)",
		"Array.from(arr)", "Array.from({ length: 2e6 })",
	} {
		v, err := r.RunString("refused(() => " + code + ")")
		if err != nil {
			t.Errorf("%s: %v", code, err)
		} else if got := v.String(); got != "refused" {
			t.Errorf("%s: %s, want the guard's RangeError", code, got)
		}
	}
	if v, _ := r.RunString("arr.length"); v.String() != "2000000" {
		t.Errorf("the refused splice changed the array: length %s", v)
	}
}
