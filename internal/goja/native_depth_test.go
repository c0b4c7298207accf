package goja

import (
	"testing"
	"time"
)

// The fork's change (native_depth.go): recursion through native code, and
// past the call stack's limit, ends in a RangeError a try/catch sees, and
// the native recursion that has no call frame counts against the same
// limit (and never passes maxNativeDepth).

const nestings = `
function nest(n, f) { let a = []; for (let i = 0; i < n; i++) a = f(a); return a }
var deepArray = nest(1e5, (a) => [a]);
var deepObject = nest(1e5, (a) => ({ a }));
function catches(f) {
	try { f(); return 'no error' } catch (e) { return e instanceof RangeError ? e.message : 'not a RangeError: ' + e }
}
`

var deepCases = []string{
	"JSON.stringify(deepArray)",
	"JSON.stringify(deepObject, null, 1)",
	"JSON.stringify(deepObject, (k, v) => v)",
	"String(deepArray)",
	"deepArray.join()",
	"deepArray.toLocaleString()",
	"deepArray.flat(Infinity)",
	"JSON.parse('['.repeat(2e5) + ']'.repeat(2e5))",
	`JSON.parse('{"a":'.repeat(2e5) + '1' + '}'.repeat(2e5))`,
	"JSON.parse('['.repeat(3000) + ']'.repeat(3000), (k, v) => v)",
	"(function f() { return f() })()",
	"(function m() { return [1].map(m) })()",
	"{ const p = new Proxy({}, { get(t, k) { return p[k] } }); p.x }",
}

func TestNativeRecursionThrowsRangeError(t *testing.T) {
	r := New()
	r.SetMaxCallStackSize(1000)
	if _, err := r.RunString(nestings); err != nil {
		t.Fatal(err)
	}
	for _, code := range deepCases {
		start := time.Now()
		v, err := r.RunString("catches(() => " + code + ")")
		if err != nil {
			t.Errorf("%s: %v", code, err)
			continue
		}
		if got := v.String(); got != "Maximum call stack size exceeded" {
			t.Errorf("%s: caught %q, want the stack overflow's RangeError", code, got)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%s: took %v", code, took)
		}
		if r.vm.nativeDepth != 0 || len(r.vm.callStack) != 0 {
			t.Fatalf("after %s: nativeDepth %d, call stack %d, want both 0", code, r.vm.nativeDepth, len(r.vm.callStack))
		}
	}
	// Within the limit, native recursion works, and takes a place of the
	// call stack a level: 990 levels fit, 1010 do not.
	v, err := r.RunString(`[JSON.stringify(nest(990, (a) => [a])).length, nest(990, (a) => [a]).flat(Infinity).length,
		JSON.parse('['.repeat(990) + ']'.repeat(990)).length, catches(() => JSON.stringify(nest(1010, (a) => [a])))].join()`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), "1982,0,1,Maximum call stack size exceeded"; got != want {
		t.Errorf("nestings near the limit: %s, want %s", got, want)
	}
	// An uncaught overflow is an *Exception, a RangeError, not a
	// *StackOverflowError.
	_, err = r.RunString("String(deepArray)")
	if ex, ok := err.(*Exception); !ok || ex.Error() == "" || ex.Value().(*Object).Get("name").String() != "RangeError" {
		t.Errorf("an uncaught overflow: %T %v, want an *Exception of a RangeError", err, err)
	}
}

// TestNativeRecursionWithoutCallStackLimit: a runtime with upstream's
// unlimited call stack still bounds native recursion by maxNativeDepth, so
// Go's stack does not grow without bound.
func TestNativeRecursionWithoutCallStackLimit(t *testing.T) {
	r := New()
	if _, err := r.RunString(nestings + "var deeper = nest(maxNative + 10, (a) => [a]);"); err == nil {
		t.Fatal("maxNative is not defined, want an error")
	}
	r.Set("maxNative", maxNativeDepth)
	v, err := r.RunString(nestings + `var deeper = nest(maxNative + 10, (a) => [a]);
		[catches(() => JSON.stringify(deeper)), catches(() => deeper.flat(Infinity)), catches(() => String(deeper)),
		 JSON.stringify(nest(maxNative - 10, (a) => [a])).length].join()`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), "Maximum call stack size exceeded,Maximum call stack size exceeded,Maximum call stack size exceeded,19982"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
