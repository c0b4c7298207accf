package attack_test

import (
	"testing"
	"time"
)

// TestResources: loops, allocations, recursion, output floods, exits and
// disk bombs each stop at their cap, in time, and leave the session usable
// (run checks 1+1 after every case).
func TestResources(t *testing.T) {
	const flood = 200 << 10 // a flood's output comes back cut to about 50 KB
	run(t, []attack{
		{name: "infinite loop", lang: "py", code: `while True: pass`, timeout: 1, status: fail,
			want: []string{"timed out after 1 second"}, within: 8 * time.Second},
		{name: "loop that swallows KeyboardInterrupt", lang: "py", code: `while True:
    try:
        while True: pass
    except BaseException:
        pass`, timeout: 1, status: fail, want: []string{"timed out"}, within: 15 * time.Second},
		py("one huge allocation", `x = bytearray((1 << 31) - 1)`, fail, "MemoryError"),
		py("allocation growth past the cap", `def grow():
    l = []
    while True: l.append(bytearray(1 << 20))
grow()`, fail, "MemoryError"),
		py("the state survives the allocation bomb", `x = 41; print(x + 1)`, ok, "42"),
		py("deep recursion", `def f(): return f()
f()`, fail, "RecursionError"),
		// Python calls stay off the C stack: a huge limit used to let a
		// runaway recursion fill the memory, crawl to the timeout and
		// fail to format its traceback. The limit is capped (memory cap /
		// 2 KiB), so it fails fast, with a short traceback.
		{name: "recursion past a huge recursion limit", lang: "py", code: `import sys; sys.setrecursionlimit(10**8)
print(sys.getrecursionlimit())
def g(): return g()
g()`, timeout: 30, status: fail, within: 10 * time.Second,
			want:  []string{"capped at 65536", "RecursionError: maximum recursion depth exceeded", "frames from the middle of this traceback are not shown"},
			never: []string{"could not format", "timed out", "KeyboardInterrupt"}},
		{name: "a deep recursion that catches its RecursionError", lang: "py", code: `import sys; sys.setrecursionlimit(10**9)
def g(n): return g(n + 1)
try:
    g(0)
except RecursionError:
    print('caught', sys.getrecursionlimit())
x = 1`, timeout: 30, status: ok, within: 10 * time.Second, want: []string{"caught 65536"}},
		py("the state survives the recursion", `print(x + 41)`, ok, "42"),
		// Recursion through C has its own cap (TestDeepCRecursion), so it
		// raises RecursionError instead of running the wasm stacks out.
		{name: "recursion through C past the C recursion cap", lang: "py", code: `import sys; sys.setrecursionlimit(10**6)
def f(n): return 0 if n == 0 else list(map(f, [n - 1]))[0]
f(60000)`, timeout: 30, status: fail, within: 10 * time.Second, want: []string{"RecursionError: maximum recursion depth exceeded"},
			never: []string{"crashed", "rolled back"}},
		{name: "a smaller limit still works", lang: "py", code: `import sys; sys.setrecursionlimit(5000)
def g(n): return n if n == 4000 else g(n + 1)
print(g(0), sys.getrecursionlimit())`, status: ok, want: []string{"4000 5000"}},
		{name: "output flood", lang: "py", code: `while True: print('x' * 10000)`, timeout: 1, status: fail,
			want: []string{"cut", "timed out"}, maxOut: flood, within: 8 * time.Second},
		py("os._exit ends the interpreter only", `import os; os._exit(0)`, fail, "the Python interpreter exited with status 0"),
		py("os._exit with a status", `import os; os._exit(77)`, fail, "exited with status 77"),
		py("sys.exit", `import sys; sys.exit(3)`, fail, "SystemExit"),
		{name: "log() in a loop hits the hard limit", lang: "py", code: `while True: log('x')`, timeout: 1, status: fail,
			want: []string{"timed out after"}, within: 20 * time.Second},
		py("a file past the disk quota", `open('big', 'wb').write(b'x' * (9 << 20))`, fail, "No space left on device"),
		py("a sparse file past the disk quota", `f = open('sparse', 'wb'); f.seek(1 << 40); f.write(b'x'); f.close()`, fail, "No space left on device"),
		py("the write helper past the disk quota", `write('big2', 'x' * (9 << 20))`, fail, "disk quota"),
		// Each open file is a descriptor of the host process: a guest may
		// not take them all from the other sessions (and serve's listener).
		py("open files in a loop", `open('fd_probe', 'w').close()
held = []
try:
    for i in range(100000):
        held.append(open('fd_probe'))
except OSError as e:
    print(len(held), e.strerror)
for f in held:
    f.close()
print(len(open('fd_probe').read()))`, ok, "1024 No file descriptors available", "\n0"),
		py("space comes back when files go", `import os
for f in ('big', 'sparse', 'big2'):
    if os.path.exists(f): os.remove(f)
open('small', 'wb').write(b'x' * (1 << 20)); print('ok')`, ok, "ok"),

		{name: "infinite loop", lang: "js", code: `for (;;) {}`, timeout: 1, status: fail,
			want: []string{"timed out after 1 second"}, within: 8 * time.Second},
		{name: "loop that catches the interrupt", lang: "js", code: `while (true) { try { for (;;) {} } catch (e) {} }`, timeout: 1, status: fail,
			want: []string{"timed out"}, within: 8 * time.Second},
		js("one huge allocation", `new ArrayBuffer(2 ** 40)`, fail, "RangeError"),
		js("a huge array", `new Array(2 ** 32)`, fail, "Invalid array length"),
		js("deep recursion", `function f() { return f() } f()`, fail, "Maximum call stack size exceeded"),
		{name: "output flood", lang: "js", code: `for (;;) console.log('x'.repeat(10000))`, timeout: 1, status: fail,
			want: []string{"cut", "timed out"}, maxOut: flood, within: 8 * time.Second},
		js("an await that never settles", `await new Promise(() => {})`, fail, "never settles"),
		{name: "a timer that never ends", lang: "js", code: `setInterval(() => {}, 0)`, timeout: 1, status: fail,
			want: []string{"timed out"}, within: 8 * time.Second},
		{name: "log() in a loop hits the hard limit", lang: "js", code: `for (;;) log('x')`, timeout: 1, status: fail,
			want: []string{"timed out after"}, within: 20 * time.Second},
		js("throw a Proxy", `throw new Proxy({}, {})`, fail, "Uncaught"),
		js("throw a Proxy whose traps throw", `throw new Proxy({}, {get() { throw new Error('trap') }})`, fail, "Uncaught"),
		js("reject with a Proxy in an async path", `await Promise.reject(new Proxy({}, {get() { throw 1 }}))`, fail, "Uncaught"),
		js("an unawaited async throw of a Proxy", `(async () => { throw new Proxy({}, {getPrototypeOf() { throw 1 }}) })(); await null`, fail, "Uncaught"),
		js("throw an object whose getters throw", `throw {get message() { throw 1 }, toString() { throw 2 }}`, fail, "Uncaught"),
		js("a Proxy that throws itself", `const p = new Proxy(function () {}, {apply() { throw p }}); p()`, fail, "Uncaught"),
		js("open files in a loop", `const fs = require('fs'); fs.writeFileSync('fd_probe', '')
const held = []
try { for (;;) held.push(fs.openSync('fd_probe', 'r')) } catch (e) { console.log(held.length, e.code) }
for (const fd of held) fs.closeSync(fd)`, ok, "EMFILE"),
		// A 9 MiB argument is JSON-encoded char by char in goja: ~0.5 s of
		// CPU, which a loaded machine stretches past the 5 s default.
		{name: "the write helper past the disk quota", lang: "js", code: `await write('bigjs', 'x'.repeat(9 << 20))`, timeout: 60, status: fail,
			want: []string{"disk quota"}},
	})
}
