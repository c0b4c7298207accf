package attack_test

import (
	"os"
	"testing"
	"time"
)

// stopped is a case whose cell must be stopped at its one-second timeout
// and come back within the bound (stretched by the machine's load).
func stopped(lang, name, code string, want ...string) attack {
	return attack{name: name, lang: lang, code: code, timeout: 1, status: fail, want: want, within: 8 * time.Second, maxOut: 64 << 10}
}

// TestHuntPythonPaths: path tricks on the guest's own file APIs and the
// helpers: NUL bytes, very long names, trailing slashes, renames over and
// into folders, special files and descriptors the guest may try to make.
// Each gets a clear error; nothing leaves the root.
func TestHuntPythonPaths(t *testing.T) {
	run(t, []attack{
		py("a NUL byte in open's path", `open('inside.txt\x00/../../outside/secret.txt')`, fail, "ValueError: embedded null byte"),
		py("a NUL byte in the read helper's path", `print(read('inside.txt\x00../outside/secret.txt'))`, fail, "NUL"),
		py("a NUL byte in the write helper's path", `write('x\x00y', 'z')`, fail, "NUL"),
		py("a 4 KiB path of folders", `open('a/' * 2100 + 'x', 'w')`, fail, "Error"),
		py("makedirs 2000 deep", `import os; os.makedirs('/'.join(['d'] * 2000))`, fail, "Error"),
		py("a trailing slash on a file", `open('inside.txt/')`, fail, "Error"),
		py("a file renamed over a folder", `import os; os.mkdir('rd1'); open('rf1', 'w').close(); os.rename('rf1', 'rd1')`, fail, "Error: [Errno"),
		py("a folder renamed into itself", `import os; os.makedirs('rd2/sub'); os.rename('rd2', 'rd2/sub/x')`, fail, "Error"),
		py("a folder renamed over the root", `import os; os.mkdir('rd3'); os.rename('rd3', '.')`, fail, "Error"),
		py("the root renamed away", `import os; os.rename('{{ROOT}}', 'moved')`, fail, "Error"),
		py("the root removed", `import os; os.rmdir('{{ROOT}}')`, fail, "Error"),
		py("mkfifo", `import os; os.mkfifo('fifo2')`, fail, "Error"),
		py("mknod of a device", `import os, stat; os.mknod('null2', 0o600 | stat.S_IFCHR, os.makedev(1, 3))`, fail, "Error"),
		py("a unix socket", `import socket; s = socket.socket(socket.AF_UNIX); s.bind('sock')`, fail, "Error"),
		py("O_TMPFILE", `import os; os.open('.', os.O_TMPFILE | os.O_RDWR)`, fail, "Error"),
		py("chmod the root to nothing", `import os; os.chmod('.', 0); print(read('inside.txt'))`, ok, insideText),
		py("a hard link stays one file", `import os; os.link('inside.txt', 'hl1'); print(os.stat('hl1').st_nlink >= 1, read('hl1'))`, ok, insideText),
		py("a symlink to a device path", `import os; os.symlink('/dev/zero', 'zero')`, fail, "Operation not permitted"),
		py("a symlink named like a parent", `import os; os.symlink('inside.txt', '..')`, fail, "Error"),
		py("the tree helper with a huge depth", `print(tree('.', max_depth=10**12)[:20])`, ok),
	})
}

// TestHuntPythonResources: CPU and memory bombs in Python's C code (regex
// backtracking, big-number arithmetic and conversion, decimal precision,
// repetition, compression bombs, huge messages, finalizers): each is
// stopped at its cap or its timeout and the session goes on.
func TestHuntPythonResources(t *testing.T) {
	run(t, []attack{
		py("state before", `kept = 'still here'`, ok),
		stopped("py", "catastrophic re backtracking", `import re; re.match(r'(a+)+$', 'a' * 64 + '!')`, "timed out"),
		stopped("py", "re.sub backtracking", `import re; re.sub(r'(x+x+)+y', '', 'x' * 64)`, "timed out"),
		py("the str of a huge int under the digit limit", `print(str(10 ** 100_000))`, fail, "ValueError: Exceeds the limit"),
		stopped("py", "the str of a huge int with the digit limit lifted", `import sys; sys.set_int_max_str_digits(0); print(len(str(7 ** 30_000_000)))`, "timed out"),
		stopped("py", "math.factorial of ten million", `import math; math.factorial(10 ** 7)`, "timed out"),
		stopped("py", "a huge power", `x = 3 ** (10 ** 9)`, "timed out"),
		py("decimal with the largest precision", `import decimal
decimal.getcontext().prec = decimal.MAX_PREC
print(decimal.Decimal(1) / decimal.Decimal(7))`, fail, "Error"),
		py("str times a huge count", `'ab' * (1 << 40)`, fail, "OverflowError"),
		py("bytes times a huge count", `b'ab' * (1 << 40)`, fail, "OverflowError"),
		py("str times the largest count", `import sys; 'ab' * (sys.maxsize // 2)`, fail, "MemoryError"),
		py("bytearray growth", `b = bytearray()
while True: b += b'x' * (1 << 20)`, fail, "MemoryError"),
		py("list growth by doubling", `a = [0]
while True: a = a + a`, fail, "MemoryError"),
		{name: "zlib bomb", lang: "py", code: `import zlib
c = zlib.compressobj(9)
bomb = b''.join(c.compress(bytes(1 << 20)) for _ in range(512)) + c.flush()
print(len(bomb) < 2 << 20)
zlib.decompress(bomb)`, timeout: 30, status: fail, want: []string{"True", "MemoryError"}, within: 40 * time.Second},
		{name: "gzip bomb", lang: "py", code: `import gzip, io
buf = io.BytesIO()
with gzip.GzipFile(fileobj=buf, mode='wb', compresslevel=9) as g:
    for _ in range(512): g.write(bytes(1 << 20))
gzip.decompress(buf.getvalue())`, timeout: 30, status: fail, want: []string{"MemoryError"}, within: 40 * time.Second},
		{name: "tar bomb past the disk quota", lang: "py", code: `import tarfile, io
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode='w:gz') as t:
    info = tarfile.TarInfo('big.bin'); info.size = 10 << 20
    t.addfile(info, io.BytesIO(bytes(10 << 20)))
buf.seek(0)
with tarfile.open(fileobj=buf, mode='r:gz') as t: t.extractall('untarred')`, timeout: 30, status: fail, want: []string{"No space left on device"}, within: 40 * time.Second},
		py("space is back after the tar bomb", `import shutil; shutil.rmtree('untarred', ignore_errors=True); open('small', 'w').write('x' * 1000); print('written')`, ok, "written"),
		{name: "an exception with a 50 MB message", lang: "py", code: `raise Exception('x' * (50 << 20))`, status: fail, want: []string{"Exception"}, maxOut: 1 << 20},
		stopped("py", "a repr that never returns", "class C:\n    def __repr__(self):\n        while True: pass\nC()", "timed out"),
		stopped("py", "time.sleep of a billion seconds", `import time; time.sleep(10 ** 9)`, "timed out"),
		py("time.sleep of infinity", `import time; time.sleep(float('inf'))`, fail, "OverflowError"),
		py("the state survives", `print(kept)`, ok, "still here"),
	})
}

// TestHuntJavaScript: the JavaScript runtime's corners an attacker reaches
// for: shared memory and Atomics, finalizers, getters and traps that run
// while the result is shown, thenables, microtask and async-generator
// floods, stack-trace hooks, huge messages and sources. Each ends with a
// clear error or a bounded result, within its timeout, and the session
// goes on.
func TestHuntJavaScript(t *testing.T) {
	run(t, []attack{
		js("state before", `globalThis.kept = 'still here'`, ok),
		stopped("js", "Atomics.wait for ever", `Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)`),
		stopped("js", "Atomics.wait for a year", `Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3.15e10)`),
		js("a FinalizationRegistry callback", `globalThis.fr = new FinalizationRegistry(v => print('finalized ' + v)); for (let i = 0; i < 1000; i++) fr.register({}, i); 'registered'`, ok),
		js("a WeakRef", `globalThis.wr = new WeakRef({ a: 1 }); print(typeof wr.deref())`, ok),
		{name: "a result whose getter never returns is not called", lang: "js", code: `({ get x() { for (;;); } })`, status: ok, want: []string{"[Getter]"}, within: 8 * time.Second},
		{name: "a result Proxy whose traps throw", lang: "js", code: `new Proxy({}, { ownKeys() { throw new Error('trap') }, get() { throw new Error('trap') }, getOwnPropertyDescriptor() { throw new Error('trap') }, getPrototypeOf() { throw new Error('trap') } })`},
		{name: "a result Proxy that answers with itself", lang: "js", code: `{ const p = new Proxy({}, { get: () => p, ownKeys: () => ['a', 'b'], getOwnPropertyDescriptor: () => ({ value: p, enumerable: true, configurable: true }) }); p }`},
		{name: "print of a Symbol.toPrimitive that never returns", lang: "js", code: `print({ [Symbol.toPrimitive]() { for (;;); } })`, timeout: 1, within: 8 * time.Second},
		stopped("js", "String of a Symbol.toPrimitive that never returns", `String({ [Symbol.toPrimitive]() { for (;;); } })`, "timed out"),
		js("a toString that returns 256 MB", "`${{ toString() { return 'x'.repeat(1 << 28) } }}`", fail, "RangeError"),
		js("a thenable that never resolves", `await { then() {} }`, fail, "never settles"),
		stopped("js", "a microtask flood", `(function f() { queueMicrotask(f) })(); await new Promise(r => setTimeout(r, 10))`),
		stopped("js", "a promise-chain flood", `(function f() { Promise.resolve().then(f) })(); await null`),
		stopped("js", "an async generator without end", `for await (const x of (async function* () { for (;;) yield 1 })());`),
		stopped("js", "an await loop", `for (;;) await null`),
		stopped("js", "Error.prepareStackTrace that never returns", `Error.prepareStackTrace = () => { for (;;); }; throw new Error('x')`),
		js("Error.prepareStackTrace that throws", `Error.prepareStackTrace = () => { throw new Error('hook') }; throw new Error('x')`, fail),
		{name: "an endless stack trace", lang: "js", code: `Error.stackTraceLimit = Infinity; function f(n) { if (n === 0) throw new Error('deep'); f(n - 1) } f(400)`,
			status: fail, want: []string{"deep"}, maxOut: 256 << 10},
		{name: "an error with a 50 MB message", lang: "js", code: `throw new Error('x'.repeat(50 << 20))`, status: fail, want: []string{"Error"}, maxOut: 1 << 20},
		stopped("js", "a timer a month away", `await new Promise(r => setTimeout(r, 2 ** 31 - 1))`),
		js("eval of a 10 MB expression", `eval('1+'.repeat(5e6) + '1')`, fail),
		{name: "a function of a million parameters", lang: "js", code: `new Function(...Array.from({ length: 1e6 }, (_, i) => 'a' + i), 'return 1')`},
		js("padStart to a gigabyte", `'x'.padStart(2 ** 30)`, fail),
		js("join of the longest sparse array", `new Array(2 ** 32 - 1).join('x')`, fail),
		js("a JSON replacer that nests for ever", `JSON.stringify({ a: 1 }, function (k, v) { return k === '' ? v : { a: v } })`, fail),
		js("Array.from a billion", `Array.from({ length: 2 ** 30 })`, fail),
		js("the state survives", `print(kept)`, ok, "still here"),
	})
}

// TestHuntRootAndQuota: the guest attacks its own root and its disk
// quota by the routes the file helpers do not take: removing the root
// itself, truncating and extending files to a terabyte, folders and links
// past the entry quota, the same through Node's fs. The root stays, the
// quota holds with a clear error, and the session goes on.
func TestHuntRootAndQuota(t *testing.T) {
	rootStays := func(t *testing.T, w *world) {
		t.Helper()
		if fi, err := os.Stat(w.root); err != nil || !fi.IsDir() {
			t.Errorf("the session root is gone on the host: %v", err)
		}
	}
	run(t, []attack{
		{name: "rmtree of the root", lang: "py", code: `import shutil; shutil.rmtree('{{ROOT}}', ignore_errors=True); import os; print(os.path.isdir('{{ROOT}}'))`, status: ok, want: []string{"True"}, host: rootStays},
		py("files can be made after it", `open('after.txt', 'w').write('x'); print(read('after.txt'))`, ok, "x"),
		py("truncate to a terabyte", `open('t1', 'w').close(); import os; os.truncate('t1', 1 << 40)`, fail, "No space left on device"),
		py("ftruncate to a terabyte", `import os; fd = os.open('t2', os.O_CREAT | os.O_RDWR); os.ftruncate(fd, 1 << 40)`, fail, "No space left on device"),
		py("a write at 2**62", `f = open('t3', 'wb'); f.seek(1 << 62); f.write(b'x'); f.close()`, fail, "Error"),
		py("posix_fallocate of a terabyte", `import os; fd = os.open('t4', os.O_CREAT | os.O_RDWR); os.posix_fallocate(fd, 0, 1 << 40)`, fail, "Error"),
		py("folders past the entry quota", `import os
for i in range(3000): os.mkdir(f'q{i}')`, fail, "No space left on device"),
		py("links past the entry quota", `import os
for i in range(3000): os.symlink('inside.txt', f'l{i}')`, fail, "Error"),
		py("entries come back when they go", `import os, shutil
for n in os.listdir('.'):
    if n[0] in 'ql' and n[1:].isdigit():
        os.remove(n) if os.path.islink(n) or os.path.isfile(n) else shutil.rmtree(n)
os.mkdir('fresh'); print('made')`, ok, "made"),
		{name: "fs.rmSync of the root", lang: "js", code: `const fs = require('fs'); try { fs.rmSync('{{ROOT}}', { recursive: true, force: true }) } catch (e) { print(e.code || e.message) } print(fs.existsSync('{{ROOT}}'))`, status: ok, want: []string{"true"}, host: rootStays},
		js("fs.truncateSync to a terabyte", `const fs = require('fs'); fs.writeFileSync('jt1', ''); fs.truncateSync('jt1', 2 ** 40)`, fail, "ENOSPC", "disk quota"),
		js("fs.symlinkSync to /etc", `require('fs').symlinkSync('/etc', 'etc_link')`, fail, "Error"),
		js("fs.linkSync of the operator's link", `require('fs').linkSync('hostlink', 'hl_js')`, fail, "EPERM"),
		js("fs.readFileSync with a NUL byte", `require('fs').readFileSync('inside.txt\0../outside/secret.txt', 'utf8')`, fail, "without null bytes"),
		js("fs.renameSync of the root", `require('fs').renameSync('{{ROOT}}', 'moved')`, fail, "Error"),
		js("fs.mkdirSync past the entry quota", `const fs = require('fs'); for (let i = 0; i < 3000; i++) fs.mkdirSync('jq' + i)`, fail, "ENOSPC"),
		js("files can be made after it", `const fs = require('fs'); for (let i = 0; i < 3000; i++) fs.rmSync('jq' + i, { recursive: true, force: true }); fs.writeFileSync('after_js', 'y'); print(fs.readFileSync('after_js', 'utf8'))`, ok, "y"),
	})
}
