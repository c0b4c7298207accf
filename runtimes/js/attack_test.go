package js_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/js"
	"github.com/wasmeval/wasmeval/runtimes/runtimetest"
)

// Hostile values that end a cell: a Proxy, a getter or a conversion that
// throws or never returns while the host reports the value. Each used to
// panic out of Run (goja converts values by calling their code) and the
// guard then interrupted a VM that was gone, on a goroutine with no
// recover: the process died.

// hostileTimeout is the timeout of the hostile cells; each must end within
// it and a grace, which stretches by the machine's load (testenv.Stretch).
// The timeout stretches too for a cell that must fail with its own error,
// not the timeout (hostileTimeoutFor): it may take longer than 2 s to get
// there on a loaded machine (CI saw new Function of a 2 MB text stopped by
// the timeout before the parser's refusal at load 18).
const (
	hostileTimeout = 2 * time.Second
	hostileGrace   = 3 * time.Second
)

// interruptTimeout is the timeout of a hostile cell that must be stopped
// by it ("Interrupted"): short, so that the finite ones (a default sort of
// millions of elements in Go, about 2 s on an idle machine here) are
// still running when it comes on a fast machine; a loaded one only makes
// them longer.
const interruptTimeout = 500 * time.Millisecond

// hostileTimeoutFor is the timeout of a hostile cell that must end as want
// says: hostileTimeout, stretched by the machine's load, or for one that
// must be stopped by it, interruptTimeout, which a longer one would let
// finish.
func hostileTimeoutFor(want string) time.Duration {
	if want == "Interrupted" {
		return interruptTimeout
	}
	return testenv.Stretch(hostileTimeout)
}

func TestHostileThrownValues(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{"throw Proxy", "throw new Proxy({}, { get() { throw 1 } })", "Uncaught "},
		{"reject Proxy", "Promise.reject(new Proxy({}, { get() { throw 1 } }))", "Uncaught "},
		{"await rejected Proxy", "await Promise.reject(new Proxy({}, { get() { throw 1 } }))", "Uncaught "},
		{"async throw Proxy", "(async () => { throw new Proxy({}, { get() { throw 1 } }) })()", "Uncaught "},
		{"revoked Proxy thrown", "const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); throw proxy", "Uncaught "},
		{"revoked Proxy returned", "const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); await null; return proxy", "revoked"},
		{"every trap throws", "throw new Proxy({}, { getPrototypeOf() { throw 1 }, ownKeys() { throw 2 }, has() { throw 3 }, getOwnPropertyDescriptor() { throw 4 }, get() { throw 5 } })", "Uncaught "},
		{"getPrototypeOf recurses", "{ const p = new Proxy({}, { getPrototypeOf() { return Object.getPrototypeOf(p) } }); throw p }", "Uncaught [Proxy that cannot be inspected]"},
		{"ownKeys recurses", "{ const p = new Proxy({}, { ownKeys() { return Reflect.ownKeys(p) } }); throw p }", "Uncaught [Proxy that cannot be inspected]"},
		{"getPrototypeOf never returns", "{ const p = new Proxy({}, { getPrototypeOf() { for (;;); } }); throw p }", "Interrupted"},
		{"console.log of a throwing Proxy", "console.log(new Proxy({}, { get() { throw 1 } }))", "Uncaught 1"},
		{"console.log of a Proxy that never returns", "console.log(new Proxy({}, { ownKeys() { for (;;); } }))", "Interrupted"},
		{"result Proxy", "new Proxy({}, { get() { throw 1 }, ownKeys() { throw 2 } })", "Uncaught "},
		{"async result Proxy", "await null; return new Proxy({}, { ownKeys() { throw 2 } })", "Uncaught 2"},
		{"stack getter throws", "{ const e = new Error('x'); Object.defineProperty(e, 'stack', { get() { throw 1 } }); throw e }", "Error: x"},
		{"message getter throws", "{ const e = new Error('x'); Object.defineProperty(e, 'message', { get() { throw 1 } }); throw e }", "Uncaught "},
		{"stack getter never returns", "{ const e = new Error('x'); Object.defineProperty(e, 'stack', { get() { for (;;); } }); throw e }", "Interrupted"},
		{"toString throws", "throw { toString() { throw 1 } }", "Uncaught "},
		{"toString never returns", "throw { toString() { for (;;); } }", "Uncaught "},
		{"toPrimitive throws", "throw { [Symbol.toPrimitive]() { throw 1 } }", "Uncaught "},
		{"toPrimitive never returns", "throw { [Symbol.toPrimitive]() { for (;;); } }", "Uncaught "},
		{"rejected with a throwing stack", "Promise.reject({ get stack() { throw 1 } })", "Uncaught "},
		{"process.exit of a Proxy", "process.exitCode = new Proxy({}, { get() { throw 1 } }); process.exit()", "Uncaught 1"},
	}
	s := newSession(t, runtimes.InstanceOptions{})
	s.ok("let kept = 'still here'")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := hostileTimeoutFor(tt.want)
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			start := time.Now()
			out, rec := s.runCtx(ctx, tt.code)
			if d := time.Since(start); d > timeout+testenv.Stretch(hostileGrace) {
				t.Errorf("the cell took %v, want at most its timeout and %v", d, hostileGrace)
			}
			if !out.Failed {
				t.Errorf("outcome = %+v, want a failure", out)
			}
			want(t, "stderr", rec.StderrText(), tt.want)
			if strings.Contains(rec.StderrText(), "Internal error") {
				t.Errorf("stderr = %q: the runtime panicked", rec.StderrText())
			}
			if got, _ := s.ok("kept"); got != "'still here'" {
				t.Errorf("after the cell: kept = %s", got)
			}
		})
	}
}

// TestGuardAfterClose is the crash as it happened: a cell fails, the
// instance is closed (the sandbox drops an instance whose Run failed), and
// only then does the cell's context end. Nothing may touch the closed VM.
func TestGuardAfterClose(t *testing.T) {
	for _, code := range []string{
		"throw new Proxy({}, { get() { throw 1 } })",
		"Promise.reject(new Proxy({}, { getPrototypeOf() { throw 1 } }))",
		"1",
	} {
		inst, err := js.New().NewInstance(context.Background(), runtimes.InstanceOptions{Root: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if _, err := inst.Run(ctx, code, &runtimetest.Recorder{}); err != nil {
			t.Fatalf("Run(%q): %v", code, err)
		}
		if err := inst.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		cancel()
		time.Sleep(20 * time.Millisecond) // the context's AfterFunc runs now
	}
}

// TestHostCallPanics: a host whose Call panics answers the guest with an
// error; the process and the session live on.
func TestHostCallPanics(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{Call: func(context.Context, []byte) []byte {
		panic("host bug: secret-token-123")
	}})
	out, rec := s.run("await read('x.txt')")
	if !out.Failed {
		t.Fatalf("outcome = %+v, want a failure", out)
	}
	want(t, "stderr", rec.StderrText(), "internal error")
	if strings.Contains(rec.All(), "secret-token-123") {
		t.Errorf("the host's panic reached the guest: %q", rec.All())
	}
	if got, _ := s.ok("1 + 1"); got != "2" {
		t.Errorf("after the call: %s", got)
	}
}

// TestLongNativePaths: code that runs long in goja's native code, where no
// interrupt lands, or asks Go for more memory than exists (which ends the
// process), stops within its timeout and a grace, with a clear message.
func TestLongNativePaths(t *testing.T) {
	tests := []struct{ name, code, want string }{
		// Backtracking regular expressions (regexp2).
		{"regexp lookahead test", "/^(a+)+(?=c)b$/.test('a'.repeat(40) + '!')", regexpStoppedText},
		{"regexp backreference test", "/^(a+)+\\1b$/.test('a'.repeat(40) + '!')", regexpStoppedText},
		{"regexp exec in a loop", "for (;;) /^(a+)+(?=c)b$/.exec('a'.repeat(40) + '!')", regexpStoppedText},
		{"regexp from lastIndex", "const r = /(a+)+b/g; for (;;) { r.lastIndex = 1; r.exec('a'.repeat(40)) }", regexpStoppedText},
		{"regexp in a loop that catches", "for (;;) try { /^(a+)+(?=c)b$/.test('a'.repeat(40)) } catch {}", "Interrupted"},
		// Sorting in native code.
		{"default sort of a long array", "{ const a = new Array(2e6).fill(5); a.push(1); a.sort() }", "Interrupted"},
		{"default sort of a long typed array", "{ const a = new Float64Array(6e6); a.fill(1, 0, 3e6); a.sort() }", "Interrupted"},
		{"slow comparator", "[...Array(1e5).keys()].sort((a, b) => { for (let i = 0; i < 1e4; i++); return a - b })", "Interrupted"},
		// Recursion through native frames.
		{"recursive Proxy trap", "const p = new Proxy({}, { get(t, k) { return p[k] } }); p.x", "Maximum call stack size exceeded"},
		{"recursive getter", "const o = {}; Object.defineProperty(o, 'x', { get() { return this.x } }); o.x", "Maximum call stack size exceeded"},
		// Proxy and prototype chains, which goja follows by recursing in Go.
		{"Proxy chain", "let p = {}; for (;;) p = new Proxy(p, {})", "the Proxy would nest more than 10000 deep"},
		{"Proxy handler chain", "let p = {}; for (;;) p = new Proxy({}, p)", "the Proxy would nest more than 10000 deep"},
		{"revocable Proxy chain", "let p = {}; for (;;) p = Proxy.revocable(p, {}).proxy", "the Proxy would nest more than 10000 deep"},
		{"Proxy chain through prototypes", "let p = {}; for (;;) p = new Proxy(Object.create(p), {})", "would nest more than 10000 deep"},
		{"Object.create chain", "let o = {}; for (;;) o = Object.create(o)", "the prototype chain would nest more than 10000 deep"},
		{"setPrototypeOf chain", "let o = {}; for (let i = 0; i < 9990; i++) o = Object.create(o); for (;;) o = Object.setPrototypeOf({}, o)", "the prototype chain would nest more than 10000 deep"},
		{"Reflect.setPrototypeOf chain", "let o = {}; for (let i = 0; i < 9990; i++) o = Object.create(o); for (;;) { const n = {}; Reflect.setPrototypeOf(n, o); o = n }", "the prototype chain would nest more than 10000 deep"},
		{"object literal __proto__ chain", "let o = {}; for (let i = 0; i < 9990; i++) o = Object.create(o); for (;;) o = { __proto__: o }", "the prototype chain would nest more than 10000 deep"},
		{"new F chain", "function F() {} let o = {}; for (let i = 0; i < 9990; i++) o = Object.create(o); for (;;) { F.prototype = o; o = new F() }", "the prototype chain would nest more than 10000 deep"},
		{"class extends chain", "let o = {}; for (let i = 0; i < 9990; i++) o = Object.create(o); function B() {} B.prototype = o; let C = B; for (;;) C = class extends C {}", "the prototype chain would nest more than 10000 deep"},
		{"__proto__ chain", "let o = {}; for (let i = 0; i < 9990; i++) o = Object.create(o); for (;;) { const n = {}; n.__proto__ = o; o = n }", "the prototype chain would nest more than 10000 deep"},
		// BigInt operators that would allocate without limit.
		{"BigInt power", "2n ** (2n ** 30n)", "Maximum BigInt size exceeded"},
		{"BigInt power of a power", "2n ** (2n ** 40n)", "Maximum BigInt size exceeded"},
		{"BigInt shift", "1n << (2n ** 40n)", "Maximum BigInt size exceeded"},
		{"BigInt negative right shift", "1n >> -(2n ** 40n)", "Maximum BigInt size exceeded"},
		{"BigInt power assignment", "let x = 2n; x **= 2n ** 40n", "Maximum BigInt size exceeded"},
		{"BigInt member shift assignment", "const o = { x: 1n }; o['x'] <<= 2n ** 40n", "Maximum BigInt size exceeded"},
		{"BigInt through valueOf", "({ valueOf() { return 2n } }) ** (2n ** 40n)", "Maximum BigInt size exceeded"},
		{"BigInt.asUintN", "BigInt.asUintN(2 ** 50, -1n)", "Maximum BigInt size exceeded"},
		{"BigInt of a long text", "BigInt('1'.repeat(1e6))", "more than the 100000"},
		{"BigInt of a long text through valueOf", "BigInt({ valueOf() { return '1'.repeat(1e7) } })", "more than the 100000"},
		{"BigInt product", "{ const x = 2n ** 2000000n; x * x }", "more than 2097152 bits"},
		{"BigInt squaring loop", "let x = 3n; for (;;) x = x * x", "Maximum BigInt size exceeded"},
		{"BigInt squaring assignment", "let x = 3n; for (;;) x *= x", "Maximum BigInt size exceeded"},
		{"BigInt member squaring", "const o = { x: 3n }; for (;;) o.x *= o.x", "Maximum BigInt size exceeded"},
		{"BigInt squaring in Function", "Function('let x = 3n; for (;;) x = x * x')()", "Maximum BigInt size exceeded"},
		{"BigInt literal of a million digits in eval", "eval('9'.repeat(1e6) + 'n')", "BigInt literal of 1000000 digits"},
		{"BigInt literal of a million digits in Function", "Function('return ' + '9'.repeat(1e6) + 'n')", "BigInt literal of 1000000 digits"},
		{"BigInt squaring of an object", "let x = { valueOf: () => 3n }; for (;;) x = x * x", "Maximum BigInt size exceeded"},
		{"BigInt product of members", "const o = { x: 3n }; for (;;) o.x = o.x * o['x']", "Maximum BigInt size exceeded"},
		{"BigInt grown past the limit to text", "let y = 2n ** 2097151n; y += y; y += y; y.toString()", "too large to turn into text in radix 10"},
		{"BigInt grown past the limit to locale text", "let y = 2n ** 2097151n; y += y; y += y; y.toLocaleString()", "too large to turn into text"},
		{"BigInt power in eval", "eval('2n ** (2n ** 40n)')", "Maximum BigInt size exceeded"},
		{"BigInt power in indirect eval", "globalThis['ev' + 'al']('1n << (2n ** 40n)')", "Maximum BigInt size exceeded"},
		{"BigInt power in Function", "new Function('return 2n ** (2n ** 40n)')()", "Maximum BigInt size exceeded"},
		{"BigInt power in AsyncFunction", "await (async function () {}).constructor('return 1n << (2n ** 40n)')()", "Maximum BigInt size exceeded"},
		{"BigInt power via constructor chain", "({}).constructor.constructor('return 1n << (2n ** 40n)')()", "Maximum BigInt size exceeded"},
		// Code that goja's parser or compiler would recurse on without end.
		{"deep brackets in eval", "eval('('.repeat(2e6))", "nests brackets more than"},
		{"deep arrays in eval", "eval('['.repeat(2e6))", "nests brackets more than"},
		{"deep templates in eval", "eval('`${'.repeat(1e6))", "nests brackets more than"},
		{"long prefix chain in eval", "eval('!'.repeat(3e6) + '1')", "chains more than"},
		{"long assignment chain in Function", "new Function('a=' .repeat(1e6) + '1')", "chains more than"},
		{"long binary chain in Function", "new Function('return ' + '1+'.repeat(1e5) + '1')", "nests expressions more than"},
		// Longer, its parse would take more than the session has left: the
		// parse's charge refuses it as it reads (internal/goja/parser/cost.go).
		{"huge binary chain in Function", "new Function('return ' + '1+'.repeat(1e6) + '1')", "RangeError: memory limit"},
		{"long binary chain in eval", "eval('1+'.repeat(1e5) + '1')", "nests expressions more than"},
		{"deep JSON.parse", "JSON.parse('['.repeat(1e6))", "Maximum call stack size exceeded"},
		// Allocations refused up front.
		{"huge repeat", "'x'.repeat(2 ** 28)", "Invalid string length"},
		{"huge fill", "Array(1e9).fill(0)", "Invalid array length"},
		{"huge join", "new Array(2 ** 32 - 1).join('x')", "Invalid string length"},
		{"huge padStart", "'x'.padStart(2 ** 30)", "Invalid string length"},
		{"4 GiB typed array", "new Uint8Array(2 ** 32)", "Array buffer allocation failed"},
		// Native loops and allocations over an array-like's whole length:
		// each of these asked Go for tens of GiB, which ends the process,
		// or looped for hours.
		{"apply with a huge array-like", "Math.max.apply(null, { length: 2 ** 32 - 1 })", "too many arguments"},
		{"Reflect.apply with a huge array-like", "Reflect.apply(Math.max, null, { length: 2 ** 31 })", "too many arguments"},
		{"Reflect.construct with a huge array-like", "Reflect.construct(Array, { length: 2 ** 31 })", "too many arguments"},
		{"sort of a sparse array", "const a = []; a.length = 2 ** 32 - 1; a.sort()", "Invalid array length"},
		{"concat of a sparse array", "Array(2 ** 31).concat([1]).length", "Invalid array length"},
		{"spread of a sparse array", "[...Array(2 ** 31)].length", "Invalid array length"},
		{"spread call of a sparse array", "Math.max(...Array(2 ** 31))", "Invalid array length"},
		{"indexOf of a huge array-like", "Array.prototype.indexOf.call({ length: 2 ** 53 - 1 }, 1)", "Invalid array length"},
		{"forEach of a sparse array", "Array(2 ** 32 - 1).forEach((x) => x)", "Invalid array length"},
		{"object spread of a long string", "({ ...'x'.repeat(3e7) })", "Invalid array length"},
		{"Object.assign of a long string", "Object.assign({}, 'x'.repeat(2e7))", "memory limit"},
		{"structuredClone of a deep nesting", "let a = []; for (let i = 0; i < 1e4; i++) a = [a]; structuredClone(a)", "Maximum call stack size exceeded"},
		{"no Atomics", "Atomics.wait(new Int32Array(4), 0, 0)", "Atomics is not defined"},
	}
	s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: 128 << 20})
	s.ok("let kept = 'still here'")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := hostileTimeoutFor(tt.want)
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			start := time.Now()
			out, rec := s.runCtx(ctx, tt.code)
			if d := time.Since(start); d > timeout+testenv.Stretch(hostileGrace) {
				t.Errorf("the cell took %v, want at most its timeout and %v", d, hostileGrace)
			}
			if !out.Failed {
				t.Errorf("outcome = %+v, want a failure; results %v", out, rec.Results())
			}
			want(t, "stderr", rec.StderrText(), tt.want)
			if got, _ := s.ok("kept"); got != "'still here'" {
				t.Errorf("after the cell: kept = %s", got)
			}
		})
	}
}

// regexpStoppedText is how a regexp2 match stopped at its time limit
// fails.
const regexpStoppedText = "took longer than 1s to match and was stopped; simplify it"

// TestRegExpStoppedMatchThrows: a backtracking match stopped at its time
// limit is a RangeError the guest can catch, from every method that
// matches; goja itself takes it for "no match" and answers wrongly.
func TestRegExpStoppedMatchThrows(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	s.ok("const evil = 'a'.repeat(40) + '!'; let kept = 'still here'")
	s.ok(`function stops(f) {
  const t = Date.now()
  try { f() } catch (e) { return e instanceof RangeError ? e.message : 'other: ' + e }
  return 'no error'
}`)
	tests := []struct{ name, code string }{
		{"test", "/^(a+)+(?=c)b$/.test(evil)"},
		{"exec", "/^(a+)+(?=c)b$/.exec(evil)"},
		{"exec from lastIndex of an RE2 pattern", "{ const r = /(a+)+b/y; r.lastIndex = 1; r.exec(evil) }"},
		{"unicode", "/^(a+)+(?=c)b$/u.exec(evil)"},
		{"match", "evil.match(/^(a+)+(?=c)b$/)"},
		{"global match", "evil.match(/(a+)+(?=c)b/g)"},
		{"matchAll", "[...evil.matchAll(/(a+)+(?=c)b/g)]"},
		{"replace", "evil.replace(/^(a+)+(?=c)b$/, 'x')"},
		{"replace with a function", "evil.replace(/^(a+)+(?=c)b$/, () => 'x')"},
		{"replaceAll", "evil.replaceAll(/(a+)+(?=c)b/g, 'x')"},
		{"search", "evil.search(/^(a+)+(?=c)b$/)"},
		{"split", "evil.split(/(a+)+(?=c)b/)"},
		{"new RegExp", "new RegExp('^(a+)+(?=c)b$').exec(evil)"},
		{"RegExp()", "RegExp('^(a+)+(?=c)b$').test(evil)"},
		{"compile", "{ const r = /x/; r.compile('^(a+)+(?=c)b$'); r.test(evil) }"},
		{"subclass", "class R extends RegExp {}; new R('^(a+)+(?=c)b$').exec(evil)"},
		{"subclass with its own exec", "class Q extends RegExp { exec(s) { return super.exec(s) } }; 'x'.replace(new Q('^(a+)+(?=c)b$', 'g'), '') ; evil.replace(new Q('^(a+)+(?=c)b$', 'g'), '')"},
		{"eval", "eval('/^(a+)+(?=c)b$/').test(evil)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := s.ok("stops(() => { " + tt.code + " })")
			if !strings.Contains(got, regexpStoppedText) {
				t.Errorf("stops(() => { %s }) = %s, want a RangeError saying %q", tt.code, got, regexpStoppedText)
			}
		})
	}
	// A long but finite backtracking stack is no reason to fail.
	if got, _ := s.ok("[/^(?:a|b)*(?=$)/.test('ab'.repeat(1e5)), /(?<=a)b/g.exec('xab').index]"); got != "[ true, 2 ]" {
		t.Errorf("long matches: %s", got)
	}
	if got, _ := s.ok("kept"); got != "'still here'" {
		t.Errorf("kept = %s", got)
	}
}

// TestBigIntTextIsQuick: the largest BigInt the operators make turns into
// decimal text within a fraction of a second (goja's conversion is
// quadratic and cannot be interrupted: 16 Mbit took 7 s).
func TestBigIntTextIsQuick(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	start := time.Now()
	got, _ := s.ok("let big = 2n ** 2097151n; [String(big).length, `${big}`.length, (big + '').length, big.toString(16).length]")
	if got != "[ 631306, 631306, 631306, 524288 ]" {
		t.Errorf("lengths = %s", got)
	}
	if d := time.Since(start); d > testenv.Stretch(3*time.Second) {
		t.Errorf("three conversions took %v", d)
	}
	want(t, "one bit more", s.fails("big * 2n"), "Maximum BigInt size exceeded: the result would have more than 2097152 bits")
	// A smaller memory limit makes smaller BigInts.
	small := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: 4 << 20})
	want(t, "4 MiB limit", small.fails("const b = 2n ** 600000n; b * b"), "more than 1048576 bits")
}

// TestGuardedCodeStillWorks: what the guards rewrite or wrap behaves as
// before for ordinary code.
func TestGuardedCodeStillWorks(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	tests := []struct{ code, want string }{
		{"String([2n ** 10n, 3n ** 3n, 1n << 10n, 1024n >> 3n, -1024n >> 3n, 2 ** 10, 1 << 4, -8 >> 1])",
			"'1024,27,1024,128,-128,1024,16,-4'"},
		{"let y = 3n; y **= 2n; const o = { v: 1n, w: 5 }; o.v <<= 4n; o['w'] **= 2; [y, o.v, o.w]", "[ 9n, 16n, 25 ]"},
		{"let n = 2; n **= 3; let m = 1; m <<= n; [n, m, 2 ** -1, (-2) ** 2]", "[ 8, 256, 0.5, 4 ]"},
		{"const e = []; try { 1n ** 2 } catch (x) { e.push(x.constructor.name) } try { 1n << 2 } catch (x) { e.push(x.constructor.name) } e", "[ 'TypeError', 'TypeError' ]"},
		{"[BigInt.asUintN(8, 257n), BigInt.asIntN(8, 255n), BigInt.asUintN(2 ** 40, 5n), BigInt('12345'), typeof BigInt(1)]", "[ 1n, -1n, 5n, 12345n, 'bigint' ]"},
		{"const e = []; const two = 2, six = 6n, seven = 7n; try { two * six } catch (x) { e.push(x.constructor.name) } [six * seven, two * 21, '6' * two, [3] * [4], e[0]]", "[ 42n, 42, 12, 12, 'TypeError' ]"},
		{"let a = 5, b = 4n; a *= 2; b *= b; const o = { v: 3n }; o.v *= 2n; [a, b, o.v, 1.5 * 2, ({ valueOf: () => 3 }) * 2, 0.1 * 3]", "[ 10, 16n, 6n, 3, 6, 0.30000000000000004 ]"},
		{"let p = {}; for (let i = 0; i < 9000; i++) p = new Proxy(p, {}); let o = { v: 1 }; for (let i = 0; i < 9000; i++) o = Object.create(o); [p.x, o.v, typeof Proxy, Proxy.length, Proxy.prototype, Proxy.revocable({}, {}).proxy !== null]",
			"[ undefined, 1, 'function', 2, undefined, true ]"},
		{"class A { m() { return 'a' } } class B extends A {} function F() {} F.prototype = { f: 1 }; F['prototype'].g = 2; const o = { __proto__: { p: 3 }, q: 4 }; const n = { __proto__: null }; class N extends null {} [new B().m(), new F().f + new F().g, o.p + o.q, Object.getPrototypeOf(n), typeof N]",
			"[ 'a', 3, 7, null, 'function' ]"},
		{"const e = []; try { Proxy({}, {}) } catch (x) { e.push(x.constructor.name) } const o = {}; o.__proto__ = { z: 3 }; [o.z, Object.create({ y: 2 }, { x: { value: 1 } }).x, Object.setPrototypeOf({}, null).toString, Reflect.setPrototypeOf({}, {}), e]",
			"[ 3, 1, undefined, true, [ 'TypeError' ] ]"},
		{"const log = []; const f = (v) => (log.push(v), v); const a = 'x', b = 2, d = new Date(0), o = { valueOf: () => 4 }; [f('p') + f('q'), a + b, b + a, b + b, o + o, typeof (d + d), [1] + [2], null + undefined, 1n + 2n, log.join('')].map(String).join('|')",
			"'pq|x2|2x|4|8|string|12|NaN|3|pq'"},
		{"const n = 3, s = 'b', sym = Symbol('q'); const e = []; try { `${sym}` } catch (x) { e.push(x.constructor.name) } try { s + sym } catch (x) { e.push(x.constructor.name) } [`a${n}${s}c`, `${{ toString: () => 'o' }}`, `${[1, 2]}`, `x${`y${n}`}`, String.raw`a${n}\\n`, e]",
			"[ 'a3bc', 'o', '1,2', 'xy3', 'a3\\\\n', [ 'TypeError', 'TypeError' ] ]"},
		// Templates of two or more substitutions (templates.go).
		{"let i = 0; const o = { n: 'm', toString: () => 'O', valueOf: () => 9 }, n = 2, s = 'b', big = 'x'.repeat(300000); const sym = Symbol('q'); const e = []; try { `${n}${sym}` } catch (x) { e.push(x.constructor.name) } try { `${o.n}${sym}` } catch (x) { e.push(x.constructor.name) } JSON.stringify([`${n}-${s}`, `<${o.n}|${o}|${i++}|${i++}>`, `${[1, 2]}${null}${undefined}${true}${3n}`, `${n}${`${s}${n}`}`, `${big}${big}`.length, `${big}${o.n}`.length, e])",
			`'["2-b","<m|O|0|1>","1,2nullundefinedtrue3","2b2",600000,300001,["TypeError","TypeError"]]'`},
		{"let t = 0; const xs = [1.5, 2.5]; for (const x of xs) t += x; let u = ''; for (const x of xs) u += x; let w = 1; w += w; [t, u, w]", "[ 4, '1.52.5', 2 ]"},
		{"[BigInt({ valueOf: () => '77' }), BigInt({ [Symbol.toPrimitive]: () => 5n }), (255n).toString(16), (255n).toString(), (10n ** 30n).toLocaleString().length]", "[ 77n, 5n, 'ff', '255', 31 ]"},
		{"[eval('let q = 1; q + 1'), eval('var g1 = 5; g1'), typeof q, g1, eval(42)]", "[ 2, 5, 'undefined', 5, 42 ]"},
		{"[new Function('a', 'b', 'return a + b')(1, 2), Function('return this')() === globalThis, (function () {}) instanceof Function]", "[ 3, true, true ]"},
		{"const G = Object.getPrototypeOf(function* () {}).constructor; [...G('yield 1; yield 2')()]", "[ 1, 2 ]"},
		{"const A = Object.getPrototypeOf(async function () {}).constructor; await A('return 7')()", "7"},
		{"try { Function('a) { return 1 }); (function (', '') } catch (e) { e.name }", "'SyntaxError'"},
		{"const a = Array.from({ length: 200001 }, (_, i) => (i * 7919) % 1000003); a.sort(); [a.every((v, i) => i === 0 || String(a[i - 1]) <= String(v)), a.length, a[0]]", "[ true, 200001, 0 ]"},
		// sort with a comparator sorts a list of the values and writes it
		// back: a comparator that shrinks the array made goja index past
		// its end (a Go panic, "Internal error").
		{"const a = [...Array(1e3).keys()]; a.sort((x, y) => { a.length = 0; a.push(y, x); return y - x }); const h = [3, , 1, undefined, 2]; const r = h.sort((x, y) => x - y); JSON.stringify([a.length, a[0], a[999], r === h, h, 4 in h, 3 in h])",
			"'[1000,999,0,true,[1,2,3,null,null],false,true]'"},
		{"const t = new Float64Array([3, NaN, -0, 0, -1, 2]); Array.from(t.sort()).map(String)", "[ '-1', '0', '0', '2', '3', 'NaN' ]"},
		{"/(?<=a)b/.test('ab') && 'xaby'.replace(/(?=b)/, '-') === 'xa-by'", "true"},
		{"let [p, ...q] = [1, 2, 3]; ({ a: p, ...q } = { a: 1, b: 2 }); JSON.stringify([Math.max(...[1, 5, 3]), [...'ab', ...[1]], { ...{ x: 1 } }, q, Math.max.apply(null, [1, 9]), Reflect.construct(Date, [0]).getTime(), Object.assign({}, { a: 1 }, 'xy')])",
			`'[5,["a","b",1],{"x":1},{"b":2},9,0,{"0":"x","1":"y","a":1}]'`},
		{"let n = 0; for (let i = 0; i < 200000; i++) { if (i % 2) continue; n++ } outer: for (const x of [1, 2]) { for (;;) { continue outer } } let m = 0; do { m++ } while (m < 70000); [n, m]", "[ 100000, 70000 ]"},
	}
	for _, tt := range tests {
		if got, _ := s.ok(tt.code); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.code, got, tt.want)
		}
	}
}

// TestBigIntComparedWithLongText: a BigInt compared with a long decimal
// text gives the right answer within its timeout, where goja's own
// comparison parsed the text in time quadratic in its length (a million
// digits took seconds, in native code no interrupt stops); the session
// goes on. Long hexadecimal literals, whose decimal text would take as
// long, are refused.
func TestBigIntComparedWithLongText(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: 128 << 20})
	s.ok("var nines = '9'.repeat(3e6), big = 10n ** 200000n, o = { v: 7n }, p = { t: nines }")
	tests := []struct{ code, want string }{
		{"String([1n < nines, 1n > nines, 1n == nines, 1n != nines, nines > 1n, nines == 5n])", "'true,false,false,true,true,false'"},
		{"String([o.v < p.t, p.t <= o.v, o.v >= p.t, -o.v < '-' + p.t, o.v < ' ' + p.t + '\\n', o.v == p.t + 'x', o.v != p.t + 'x'])",
			"'true,false,false,false,true,false,true'"},
		{"const s = '9'.repeat(2e5); String([big < s, big > s, big - 1n == s, s == big - 1n, big - 1n <= s, -big < '-' + s])",
			"'false,true,true,true,true,true'"},
		{"String([{ valueOf: () => 5n } < nines, 0n == '0'.repeat(1e6), -5n < '-' + '0'.repeat(1e6) + '4', 3n < '0x' + 'f'.repeat(1e5), 3n < '0o' + '7'.repeat(5e5), 0n == '0b' + '0'.repeat(1e5), 1n < '0x' + 'g'.repeat(1e5)])",
			"'true,true,true,true,true,true,false'"},
		{"String([2n < 3, 3 > 2n, 2n == '2', 'a' < 'b', null == undefined, o == o, o != p, 1n < '  7  '])", "'true,true,true,true,true,true,true,true'"},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithTimeout(context.Background(), testenv.Stretch(hostileTimeout))
		start := time.Now()
		out, rec := s.runCtx(ctx, tt.code)
		cancel()
		if d := time.Since(start); d > testenv.Stretch(hostileTimeout+hostileGrace) {
			t.Errorf("%s: took %v", tt.code, d)
		}
		if out.Failed {
			t.Errorf("%s: %s", tt.code, rec.StderrText())
		} else if r := rec.Results(); len(r) != 1 || r[0]["text/plain"] != tt.want {
			t.Errorf("%s = %v, want %s", tt.code, r, tt.want)
		}
	}
	for _, code := range []string{"eval('0x' + 'f'.repeat(1e6) + 'n')", "Function('return 0b' + '1'.repeat(3e6) + 'n')"} {
		want(t, code, s.fails(code), "BigInt literal of", "bits, more than the 2097152 the sandbox makes")
	}
	for _, code := range []string{"BigInt.asIntN(64, nines)", "BigInt.asUintN(64, { valueOf: () => nines })"} {
		want(t, code, s.fails(code), "characters, more than the 100000 the sandbox parses")
	}
	if got, _ := s.ok("[eval('0x' + 'f'.repeat(5e5) + 'n') > 0n, 0x1fn, 0o17n, 0b101n, BigInt.asUintN(8, '257'), BigInt.asIntN(8, 255n)]"); got != "[ true, 31n, 15n, 5n, 1n, -1n ]" {
		t.Errorf("short radix literals: %s", got)
	}
}
