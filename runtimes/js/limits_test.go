package js_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes"
)

// The memory tests use a small limit so that they are quick; the host is
// safe if the process survives them.
const testMemoryLimit = 64 << 20

func TestMemoryLimits(t *testing.T) {
	tests := []struct {
		name, code string
		want       []string
	}{
		{"huge repeat", "'x'.repeat(2**30)", []string{"RangeError: Invalid string length"}},
		{"huge padEnd", "''.padEnd(2**31)", []string{"RangeError: Invalid string length"}},
		{"huge join", "new Array(2**32 - 1).join('ab')", []string{"RangeError: Invalid string length"}},
		{"huge fill", "new Array(1e9).fill(0)", []string{"RangeError: Invalid array length"}},
		{"huge Array.from", "Array.from({ length: 1e9 })", []string{"RangeError: Invalid array length"}},
		{"huge ArrayBuffer", "new ArrayBuffer(2**35)", []string{"RangeError: Array buffer allocation failed"}},
		{"huge typed array", "new Float64Array(2**31)", []string{"RangeError: Array buffer allocation failed"}},
		{"huge JSON.parse", "JSON.parse('[' + '1,'.repeat(5e6) + '1]')", []string{"RangeError: JSON.parse: the 10000003-byte input"}},
		// A walk at a safe point throws with the cell's position; the
		// monitor's estimate, which counts garbage a GC has not freed yet
		// and so may come first on an idle machine, stops it without one.
		{"endless push", "{ const a = []; while (true) a.push({ i: a.length }) }", []string{"RangeError: memory limit"}},
		// Either stop is right and which comes first depends on when the
		// heap was last measured: the reservation before the copy
		// ("memory limit exceeded") or goja's length cap.
		{"string doubling", "{ let s = 'x'; while (true) s += s }", []string{"Uncaught RangeError: "}},
		// Native recursion into deep nestings: Go's stack must not overflow.
		{"deep String()", "String(nest(1e5, (a) => [a]))", []string{"RangeError: Maximum call stack size exceeded"}},
		{"deep toLocaleString", "nest(1e5, (a) => [a]).toLocaleString()", []string{"RangeError: Maximum call stack size exceeded"}},
		{"deep JSON.stringify", "JSON.stringify(nest(1e5, (a) => ({ a })))", []string{"RangeError: Maximum call stack size exceeded"}},
		{"deep JSON.parse", "JSON.parse('['.repeat(3e5) + ']'.repeat(3e5))", []string{"RangeError: Maximum call stack size exceeded"}},
		{"endless push in an async cell", "{ await null; const m = new Map(); for (let i = 0; ; i++) m.set(i, [i]) }", []string{"RangeError: memory limit"}},
	}
	s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: testMemoryLimit})
	s.ok("const survivor = 'still here'")
	s.ok("function nest(n, f) { let a = []; for (let i = 0; i < n; i++) a = f(a); return a }")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			out, rec := s.run(tt.code)
			if !out.Failed || out.Interrupted {
				t.Fatalf("outcome = %+v, want Failed only; stderr %q", out, rec.StderrText())
			}
			want(t, "stderr", rec.StderrText(), tt.want...)
			t.Logf("failed after %v: %s", time.Since(start).Round(time.Millisecond), firstLine(rec.StderrText()))
			runtime.GC()
			if got, _ := s.ok("survivor"); got != "'still here'" {
				t.Errorf("after the cell: survivor = %s", got)
			}
		})
	}
	// What fits still works. An array's text takes three frames of the
	// call stack's 1000 a level (toString, join and the prelude's wrapper).
	if got, _ := s.ok(`[JSON.parse('[' + '1,'.repeat(1e5) + '1]').length, 'ab'.repeat(1e6).length, new Uint8Array(1e6).length,
  JSON.stringify(nest(500, (a) => ({ a }))).length, String(nest(300, (a) => [a, 1])).length]`); got != "[ 100001, 2000000, 1000000, 3002, 600 ]" {
		t.Errorf("small allocations: %s", got)
	}
}

func firstLine(s string) string {
	for i := range len(s) {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

func TestStackOverflow(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	s.ok("let kept = 1, depth = 0")
	tests := []string{
		"function f() { f() } f()",
		"const g = () => g(); g()",
		"async function h() { await null; h2() } function h2() { h2() } await h()",
		"const o = {}; Object.defineProperty(o, 'x', { get() { return this.x } }); o.x",
		// Through native frames: each level unwinds by a Go panic of its
		// own, in time quadratic in the depth that no interrupt stops.
		"const p = new Proxy({}, { get(t, k) { return p[k] } }); p.x",
		"const q = { toString() { return String(q) } }; String(q)",
		"function m() { return [1].map(m) } m()",
		"const v = { valueOf() { return v * 1 } }; v * 1",
		"depth = 0; const d = { get x() { depth++; return this.x } }; d.x",
	}
	for _, code := range tests {
		start := time.Now()
		want(t, code, s.fails(code), "Uncaught RangeError: Maximum call stack size exceeded", "at ")
		took := time.Since(start)
		t.Logf("%s: %v", code, took)
		// About 0.05-0.1 s on an idle machine, 0.5-3 s on a busy one (a
		// 2 s bound failed there). The stack's size, what makes it fast,
		// is checked by depth below.
		if took > testenv.Stretch(5*time.Second) {
			t.Errorf("%s: the overflow took %v", code, took)
		}
		if got, _ := s.ok("await null; kept"); got != "1" {
			t.Fatalf("after %q: kept = %s", code, got)
		}
	}
	// A getter takes two frames of the stack a level.
	if got, _ := s.ok("depth <= 1000 && depth > 400"); got != "true" {
		got, _ = s.ok("depth")
		t.Errorf("a getter recursed %s deep, want at most the stack's 1000 frames", got)
	}
	// Recursion within the limit works.
	if got, _ := s.ok("function r(n) { return n === 0 ? 0 : 1 + r(n - 1) } r(900)"); got != "900" {
		t.Errorf("r(900) = %s", got)
	}
}

func TestInterruptedAsyncCellLeavesAWorkingVM(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	for _, code := range []string{
		"await null; while (true) {}",
		"(async () => { while (true) {} })()",
		"async function spin() { for (;;) await null } await spin()",
		"function* gen() { for (;;) {} } gen().next()",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		out, _ := s.runCtx(ctx, code)
		cancel()
		if !out.Interrupted {
			t.Fatalf("%q: outcome = %+v, want Interrupted", code, out)
		}
		if got, stdout := s.ok("Promise.resolve().then(() => print('job')); await new Promise(r => setTimeout(r, 1)); 'ok'"); got != "'ok'" || stdout != "job\n" {
			t.Fatalf("after %q: result %q stdout %q", code, got, stdout)
		}
	}
}
