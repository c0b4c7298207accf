package js_test

import (
	"context"
	"strings"
	"testing"
	"time"

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
// it and a grace.
const (
	hostileTimeout = 2 * time.Second
	hostileGrace   = 3 * time.Second
)

func TestHostileThrownValues(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{"throw Proxy", "throw new Proxy({}, { get() { throw 1 } })", "Uncaught "},
		{"reject Proxy", "Promise.reject(new Proxy({}, { get() { throw 1 } }))", "Uncaught "},
		{"await rejected Proxy", "await Promise.reject(new Proxy({}, { get() { throw 1 } }))", "Uncaught "},
		{"async throw Proxy", "(async () => { throw new Proxy({}, { get() { throw 1 } }) })()", "Uncaught "},
		{"revoked Proxy thrown", "const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); throw proxy", "Uncaught "},
		{"revoked Proxy returned", "const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); await null; return proxy", "revoked"},
		{"every trap throws", "throw new Proxy({}, { getPrototypeOf() { throw 1 }, ownKeys() { throw 2 }, has() { throw 3 }, getOwnPropertyDescriptor() { throw 4 }, get() { throw 5 } })", "Uncaught "},
		{"getPrototypeOf recurses", "{ const p = new Proxy({}, { getPrototypeOf() { return Object.getPrototypeOf(p) } }); throw p }", "Maximum call stack size exceeded"},
		{"ownKeys recurses", "{ const p = new Proxy({}, { ownKeys() { return Reflect.ownKeys(p) } }); throw p }", "Maximum call stack size exceeded"},
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
			ctx, cancel := context.WithTimeout(context.Background(), hostileTimeout)
			defer cancel()
			start := time.Now()
			out, rec := s.runCtx(ctx, tt.code)
			if d := time.Since(start); d > hostileTimeout+hostileGrace {
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
