package js_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes"
)

type check struct{ code, want string }

func runChecks(t *testing.T, s *session, checks []check) {
	t.Helper()
	for _, c := range checks {
		out, rec := s.run(c.code)
		got := ""
		if r := rec.Results(); len(r) > 0 {
			got = r[0]["text/plain"]
		}
		if out.Failed || got != c.want {
			t.Errorf("%s\n got %s %s\nwant %s", c.code, got, rec.StderrText(), c.want)
		}
	}
}

// The globals the seed's eval tool promises its JavaScript cells.
func TestWebGlobals(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	runChecks(t, s, []check{
		{"Buffer.from('hi')", "<Buffer 68 69>"},
		{"[Buffer.from('aGk=', 'base64').toString(), Buffer.from('hi').toString('hex'), Buffer.byteLength('é')]", "[ 'hi', '6869', 2 ]"},
		{"const b = Buffer.alloc(4); b.writeUInt32BE(0xdeadbeef); [b.toString('hex'), b.readUInt16LE(0), Buffer.isBuffer(b), b instanceof Uint8Array]", "[ 'deadbeef', 44510, true, true ]"},
		{"const s = Buffer.from('hello').slice(1, 3); s[0] = 69; [s.toString(), Buffer.concat([s, Buffer.from('!')]).toString(), JSON.stringify(Buffer.from('a'))]",
			`[ 'El', 'El!', '{"type":"Buffer","data":[97]}' ]`},
		{"[Buffer.compare(Buffer.from('a'), Buffer.from('b')), Buffer.from('abcabc').indexOf('ca'), Buffer.from('x').equals(Buffer.from('x'))]", "[ -1, 2, true ]"},
		{"const u = new URL('../c?d=1#e', 'https://user@a.b/x/y'); [u.href, u.host, u.searchParams.get('d'), u.hash]",
			"[ 'https://user@a.b/c?d=1#e', 'a.b', '1', '#e' ]"},
		{"const q = new URLSearchParams({a: '1', b: 'x y'}); q.append('a', '2'); [q.toString(), q.getAll('a')]", "[ 'a=1&b=x+y&a=2', [ '1', '2' ] ]"},
		{"const seen = []; new URLSearchParams('a=1&b=2').forEach((v, k) => seen.push(k + ':' + v)); [seen, URL.name, URL.canParse('nope')]", "[ [ 'a:1', 'b:2' ], 'URL', false ]"},
		{"new URL('https://a.b/c?x=1').searchParams", "URLSearchParams { 'x' => '1' }"},
		{"[Buffer.from('hé', 'latin1'), Buffer.from('hi', 'utf16le').toString('ucs2'), Buffer.from([0xfb, 0xff]).toString('base64url'), Buffer.from('-_8', 'base64url')]",
			"[ <Buffer 68 e9>, 'hi', '-_8', <Buffer fb ff> ]"},
		{"new TextEncoder().encode('é€')", "Uint8Array(5) [ 195, 169, 226, 130, 172 ]"},
		{"[new TextDecoder().decode(new Uint8Array([0xc3, 0xa9, 0xff])), new TextDecoder('utf-16le').decode(new Uint8Array([104, 0, 105, 0]))]", "[ 'é�', 'hi' ]"},
		{"try { new TextDecoder('utf-8', {fatal: true}).decode(new Uint8Array([0xff])) } catch (e) { e.name + ': ' + e.code }", "'TypeError: ERR_ENCODING_INVALID_ENCODED_DATA'"},
		{"const d = new TextDecoder(); d.decode(new Uint8Array([0xe2, 0x82]), {stream: true}) + d.decode(new Uint8Array([0xac]))", "'€'"},
		{"[btoa('hi\\xff'), atob('aGn/'), atob(' aGk ')]", "[ 'aGn/', 'hiÿ', 'hi' ]"},
		{"try { btoa('€') } catch (e) { [e.name, e instanceof DOMException] }", "[ 'InvalidCharacterError', true ]"},
		{"const o = {d: new Date(0), m: new Map([[1, new Set([2])]]), r: /x/g, u: new Uint8Array([1, 2])}; o.self = o; const c = structuredClone(o); [c !== o, c.self === c, c.d.getTime(), c.m.get(1).has(2), c.r.flags, c.u[1]]",
			"[ true, true, 0, true, 'g', 2 ]"},
		{"try { structuredClone({f() {}}) } catch (e) { e.name }", "'DataCloneError'"},
		{"const ac = new AbortController(); let seen = ''; ac.signal.addEventListener('abort', (e) => { seen = e.type }); ac.abort(); [ac.signal.aborted, ac.signal.reason.name, seen]",
			"[ true, 'AbortError', 'abort' ]"},
		{"const sig = AbortSignal.timeout(5); await new Promise((r) => setTimeout(r, 20)); [sig.aborted, sig.reason.name]", "[ true, 'TimeoutError' ]"},
		{"try { AbortSignal.abort('why').throwIfAborted() } catch (e) { e }", "'why'"},
		{"const et = new EventTarget(); let n = 0; et.addEventListener('x', () => n++, {once: true}); et.dispatchEvent(new Event('x')); et.dispatchEvent(new Event('x')); n", "1"},
		{"[crypto.randomUUID().length, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID()), crypto.getRandomValues(new Uint32Array(3)).length]",
			"[ 36, true, 3 ]"},
		{"Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode('abc'))).toString('hex').slice(0, 16)", "'ba7816bf8f01cfea'"},
		{"const bl = new Blob(['ab', new Uint8Array([99])], {type: 'Text/Plain'}); [bl.size, bl.type, await bl.text(), await bl.slice(1).text()]", "[ 3, 'text/plain', 'abc', 'bc' ]"},
		{"const f = new File(['x'], 'a.txt'); [f.name, f.size, f instanceof Blob]", "[ 'a.txt', 1, true ]"},
		{"const h = new Headers({'Content-Type': 'text/plain'}); h.append('X-A', '1'); h.append('x-a', '2'); [h.get('content-type'), h.get('X-A'), [...h.keys()]]",
			"[ 'text/plain', '1, 2', [ 'content-type', 'x-a' ] ]"},
		{"const r = new Response(JSON.stringify({x: 1}), {status: 201, headers: {'content-type': 'application/json'}}); [r.ok, r.status, (await r.json()).x, r.bodyUsed]", "[ true, 201, 1, true ]"},
		{"const rj = Response.json({a: 1}); [rj.headers.get('content-type'), await rj.text()]", `[ 'application/json', '{"a":1}' ]`},
		{"const rq = new Request('https://x.y/z', {method: 'post', body: 'hi'}); [rq.method, rq.url, await rq.text(), rq.headers.get('content-type')]",
			"[ 'POST', 'https://x.y/z', 'hi', 'text/plain;charset=UTF-8' ]"},
		{"[process.platform, typeof process.arch, typeof fetch]", "[ 'linux', 'string', 'function' ]"},
	})
}

// fetch exists, and fails with what to use instead.
func TestFetchHasNoNetwork(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	want(t, "fetch", s.fails("await fetch('https://example.com/')"),
		`Uncaught TypeError: fetch("https://example.com/") failed: no network in the sandbox; use tool.<name>()`)
	if got, _ := s.ok("await fetch(new Request('http://127.0.0.1/')).catch((e) => e.code)"); got != "'ERR_NO_NETWORK'" {
		t.Errorf("fetch's error code = %s", got)
	}
}

// zeros is a Rand source of zero bytes: a seeded session.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// crypto's randomness is the session's Rand, so a seeded session replays.
func TestCryptoUsesSessionRand(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{Rand: zeros{}})
	runChecks(t, s, []check{
		{"crypto.randomUUID()", "'00000000-0000-4000-8000-000000000000'"},
		{"crypto.getRandomValues(new Uint8Array(3))", "Uint8Array(3) [ 0, 0, 0 ]"},
		{"require('crypto').randomBytes(2).toString('hex')", "'0000'"},
	})
	// Two sessions with the same seed make the same values.
	seed := func() []string {
		src := rand.NewChaCha8([32]byte{1, 2, 3})
		s := newSession(t, runtimes.InstanceOptions{Rand: src})
		a, _ := s.ok("crypto.randomUUID()")
		b, _ := s.ok("require('crypto').randomInt(1000000)")
		return []string{a, b}
	}
	if a, b := seed(), seed(); strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("same seed, different values: %v and %v", a, b)
	}
}

// Node's built-in modules, by name and with the node: scheme, through
// require and import.
func TestBuiltinModules(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	runChecks(t, s, []check{
		{"const path = require('path'); [path.join('/a', 'b/../c', './d'), path.resolve('x') === process.cwd() + '/x', path.basename('/q/w.txt', '.txt'), path.extname('a.tar.gz'), path.relative('/a/b/c', '/a/d'), path.normalize('a//b/../c/'), path.dirname('/a/b/')]",
			"[ '/a/c/d', true, 'w', '.gz', '../../d', 'a/c/', '/a' ]"},
		{"require('path').parse('/home/u/f.txt')", "{ root: '/', dir: '/home/u', base: 'f.txt', ext: '.txt', name: 'f' }"},
		{"require('node:path') === require('path') && require('path').posix === require('path')", "true"},
		{"const util = require('util'); [util.format('%s=%d %j', 'x', 5, {a: 1}), util.inspect({a: [1, {b: 2}]}), util.types.isDate(new Date()), util.isDeepStrictEqual({a: [1]}, {a: [1]})]",
			`[ 'x=5 {"a":1}', '{ a: [ 1, { b: 2 } ] }', true, true ]`},
		{"const wait = require('util').promisify((ms, cb) => setTimeout(() => cb(null, ms * 2), ms)); await wait(3)", "6"},
		{"const EventEmitter = require('events'); const e = new EventEmitter(); const got = []; e.on('x', (v) => got.push(v)); e.once('x', (v) => got.push('once ' + v)); e.emit('x', 1); e.emit('x', 2); [got, e.listenerCount('x')]",
			"[ [ 1, 'once 1', 2 ], 1 ]"},
		{"const { once, EventEmitter: EE } = require('node:events'); const em = new EE(); setTimeout(() => em.emit('go', 7), 1); await once(em, 'go')", "[ 7 ]"},
		{"class My extends require('events') {}; try { new My().emit('error', new Error('boom')) } catch (e) { e.message }", "'boom'"},
		{"require('buffer').Buffer === Buffer", "true"},
		{"const { URL: U, fileURLToPath, pathToFileURL } = require('url'); [U === URL, fileURLToPath('file:///a/b%20c'), pathToFileURL('/x y').href]", "[ true, '/a/b c', 'file:///x%20y' ]"},
		{"require('crypto').createHash('sha1').update('abc').digest('hex')", "'a9993e364706816aba3e25717850c26c9cd0d89d'"},
		{"require('crypto').createHmac('sha256', 'key').update('msg').digest('base64')", "'LZPLwb4We8sWN6SiPL/wGnh48MUO6DOVTqUiG7G4xig='"},
		{"const assert = require('assert'); assert.deepStrictEqual({a: 1}, {a: 1}); try { assert.strictEqual(1, 2) } catch (e) { e.code }", "'ERR_ASSERTION'"},
		{"require('os').EOL + require('os').platform()", "'\\nlinux'"},
		{"await require('timers/promises').setTimeout(1, 'done')", "'done'"},
		{"const { StringDecoder } = require('string_decoder'); const sd = new StringDecoder('utf8'); sd.write(Buffer.from([0xe2, 0x82])) + sd.write(Buffer.from([0xac]))", "'€'"},
		{"import fs, { readFileSync } from 'fs'\nimport * as path from 'node:path'\n[typeof fs.writeFileSync, typeof readFileSync, typeof path.join, typeof path.default.join]",
			"[ 'function', 'function', 'function', 'function' ]"},
		{"const fsp = await import('fs/promises'); [typeof fsp.readFile, (await import('node:fs')).promises === fsp.default]", "[ 'function', true ]"},
		{"require.resolve('node:fs')", "'node:fs'"},
		{"fs === require('fs')", "true"}, // a global, as in the seed's VM
		{"require('node:tty').isatty(1)", "false"},
		{"const zlib = require('zlib'); const gz = zlib.gzipSync('hello hello hello'); [gz[0], gz[1], zlib.gunzipSync(gz).toString(), zlib.unzipSync(zlib.deflateSync('x')).toString(), zlib.inflateRawSync(zlib.deflateRawSync(Buffer.from('y'))).toString()]",
			"[ 31, 139, 'hello hello hello', 'x', 'y' ]"},
		{"await new Promise((res) => require('zlib').gunzip(Buffer.from('not gzip'), (err) => res(err.code)))", "'Z_DATA_ERROR'"},
		{"const qs = require('querystring'); [qs.stringify({a: [1, 2], b: 'x y'}), qs.parse('a=1&b=2&a=3+4').a]", "[ 'a=1&a=2&b=x%20y', [ '1', '3 4' ] ]"},
		{"fs.mkdirSync('lib'); fs.writeFileSync('lib/x.js', 'module.exports = require(\"./y\")'); fs.writeFileSync('lib/y.js', 'module.exports = 42')\n" +
			"import { createRequire, isBuiltin } from 'node:module'\n[createRequire(import.meta.url)('./lib/x.js'), createRequire(process.cwd() + '/lib/x.js')('./y'), isBuiltin('node:fs'), isBuiltin('http')]",
			"[ 42, 42, true, false ]"},
	})
	want(t, "missing built-in", s.fails("require('node:child_process')"),
		"Cannot find module 'node:child_process': the sandbox has no child_process module", "its built-in modules are assert, buffer")
	want(t, "net", s.fails("require('net')"), "Cannot find module 'net'", "no built-in module has that name")
}

// fsFixture is a session whose fs calls and helpers share a root and a
// disk quota.
func fsFixture(t *testing.T, maxBytes int64) *session {
	t.Helper()
	root := t.TempDir()
	calls, err := hostcalls.NewDispatcher(root, nil, hostcalls.DispatcherOptions{DiskQuotaBytes: maxBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { calls.Close() })
	return newSession(t, runtimes.InstanceOptions{Root: root, Call: calls.Call, DiskQuota: calls.DiskQuota()})
}

// require('fs') works on the session root: what the helpers write, fs
// reads, and the other way round.
func TestNodeFS(t *testing.T) {
	s := fsFixture(t, 0)
	root := s.root
	runChecks(t, s, []check{
		{"const fs = require('fs'); fs.writeFileSync('a.txt', 'hello'); fs.appendFileSync('a.txt', ' world'); fs.readFileSync('a.txt', 'utf8')", "'hello world'"},
		{"fs.readFileSync('a.txt')", "<Buffer 68 65 6c 6c 6f 20 77 6f 72 6c 64>"},
		{"await read('a.txt')", "'hello world'"},
		{"await write('from-helper.txt', 'via write()'); fs.readFileSync(process.cwd() + '/from-helper.txt', {encoding: 'utf8'})", "'via write()'"},
		{"fs.writeFileSync('bin.dat', Buffer.from([0, 255, 128])); [...fs.readFileSync('bin.dat')]", "[ 0, 255, 128 ]"},
		{"fs.writeFileSync('b64.txt', 'aGk=', 'base64'); fs.readFileSync('b64.txt', 'latin1')", "'hi'"},
		{"[fs.existsSync('a.txt'), fs.existsSync('nope'), fs.existsSync('../x')]", "[ true, false, false ]"},
		{"fs.mkdirSync('d/e/f', {recursive: true}) === process.cwd() + '/d'", "true"},
		{"fs.writeFileSync('d/e/f/g.txt', 'g'); fs.readdirSync('d', {recursive: true})", "[ 'e', 'e/f', 'e/f/g.txt' ]"},
		{"fs.readdirSync('.', {withFileTypes: true}).map((e) => e.name + (e.isDirectory() ? '/' : ''))",
			"[ 'a.txt', 'b64.txt', 'bin.dat', 'd/', 'from-helper.txt' ]"},
		{"const st = fs.statSync('a.txt'); [st.isFile(), st.isDirectory(), st.size, st.mtime instanceof Date, fs.statSync('d').isDirectory()]", "[ true, false, 11, true, true ]"},
		{"fs.renameSync('a.txt', 'd/moved.txt'); [fs.existsSync('a.txt'), fs.readFileSync('d/moved.txt', 'utf8')]", "[ false, 'hello world' ]"},
		{"fs.copyFileSync('d/moved.txt', 'copy.txt'); fs.unlinkSync('d/moved.txt'); [fs.readFileSync('copy.txt', 'utf8'), fs.existsSync('d/moved.txt')]", "[ 'hello world', false ]"},
		{"fs.rmSync('d', {recursive: true}); fs.rmSync('nothing', {force: true}); fs.existsSync('d')", "false"},
		{"const fd = fs.openSync('fd.txt', 'w+'); fs.writeSync(fd, 'abcdef'); const buf = Buffer.alloc(3); fs.readSync(fd, buf, 0, 3, 2); fs.closeSync(fd); buf.toString()", "'cde'"},
		{"const fsp = require('fs/promises'); await fsp.writeFile('p.txt', 'promised'); await fsp.appendFile('p.txt', '!'); [await fsp.readFile('p.txt', 'utf8'), (await fsp.stat('p.txt')).size, (await fsp.readdir('.')).length]",
			"[ 'promised!', 9, 6 ]"},
		{"await new Promise((res) => fs.readFile('p.txt', 'utf8', (err, data) => res([err, data])))", "[ null, 'promised!' ]"},
		{"const fh = await fsp.open('p.txt'); const t = await fh.readFile('utf8'); await fh.close(); t", "'promised!'"},
		{"fs.mkdirSync('lnk'); fs.writeFileSync('lnk/t.txt', 't'); fs.symlinkSync('t.txt', 'lnk/l'); [fs.readlinkSync('lnk/l'), fs.readFileSync('lnk/l', 'utf8'), fs.lstatSync('lnk/l').isSymbolicLink(), fs.realpathSync('lnk/l') === process.cwd() + '/lnk/t.txt']",
			"[ 't.txt', 't', true, true ]"},
		{"fs.linkSync('lnk/t.txt', 'hard.txt'); [fs.readFileSync('hard.txt', 'utf8'), fs.statSync('hard.txt').nlink]", "[ 't', 2 ]"},
	})
	// Streams: a file line by line, a pipeline, chunks of a read stream.
	runChecks(t, s, []check{
		{"fs.writeFileSync('lines.txt', 'one\\ntwo\\r\\nthree'); const rl = require('readline').createInterface({input: fs.createReadStream('lines.txt')}); const lines = []; rl.on('line', (l) => lines.push(l)); await require('events').once(rl, 'close'); lines",
			"[ 'one', 'two', 'three' ]"},
		{"const it = require('readline').createInterface({input: fs.createReadStream('lines.txt')})[Symbol.asyncIterator](); [(await it.next()).value, (await it.next()).value, (await it.next()).value, (await it.next()).done]",
			"[ 'one', 'two', 'three', true ]"},
		{"const { Readable, Transform, Writable } = require('stream'); const out = []; await require('stream/promises').pipeline(Readable.from(['a', 'b']), new Transform({objectMode: true, transform(c, e, cb) { cb(null, c.toUpperCase()) }}), new Writable({objectMode: true, write(c, e, cb) { out.push(c); cb() }})); out",
			"[ 'A', 'B' ]"},
		{"const ws = fs.createWriteStream('streamed.txt'); ws.write('hello '); ws.end('world'); await require('events').once(ws, 'finish'); const chunks = []; const rs = fs.createReadStream('streamed.txt', {highWaterMark: 4, encoding: 'utf8'}); rs.on('data', (c) => chunks.push(c)); await require('events').once(rs, 'end'); chunks",
			"[ 'hell', 'o wo', 'rld' ]"},
		{"await Readable.from([1, 2, 3]).toArray()", "[ 1, 2, 3 ]"},
	})
	if b, err := os.ReadFile(filepath.Join(root, "p.txt")); err != nil || string(b) != "promised!" {
		t.Errorf("p.txt on the host = %q, %v", b, err)
	}
	// Errors are Node's: an Error with code, errno, syscall and path.
	errs := []check{
		{"try { fs.readFileSync('missing.txt') } catch (e) { [e instanceof Error, e.code, e.errno, e.syscall, e.path, e.message] }",
			"[\n  true,\n  'ENOENT',\n  -2,\n  'open',\n  'missing.txt',\n  \"ENOENT: no such file or directory, open 'missing.txt'\"\n]"},
		{"try { fs.readFileSync('.') } catch (e) { e.code }", "'EISDIR'"},
		{"fs.mkdirSync('full'); fs.writeFileSync('full/x', ''); try { fs.rmdirSync('full') } catch (e) { e.code }", "'ENOTEMPTY'"},
		{"try { fs.mkdirSync('full') } catch (e) { e.code }", "'EEXIST'"},
		{"try { fs.writeFileSync('no/such/dir/f', 'x') } catch (e) { e.code }", "'ENOENT'"},
		{"try { fs.rmSync('full') } catch (e) { e.code }", "'ERR_FS_EISDIR'"},
		{"await fsp.readFile('missing.txt').catch((e) => e.code)", "'ENOENT'"},
		{"try { fs.writeFileSync('x', 'y', {flag: 'q'}) } catch (e) { e.code }", "'ERR_INVALID_ARG_VALUE'"},
	}
	runChecks(t, s, errs)
}

// fs refuses every way out of the root, as the helpers do.
func TestNodeFSEscapes(t *testing.T) {
	s, outside := escapeFixture(t)
	tests := []struct {
		name, code string
		want       []string
	}{
		{"dot dot", "require('fs').readFileSync('../outside/secret.txt', 'utf8')", []string{"EACCES", "leads outside the session root"}},
		{"absolute outside", "require('fs').readFileSync('" + outside + "/secret.txt', 'utf8')", []string{"EACCES", "is outside the session root"}},
		{"etc passwd", "require('fs').readFileSync('/etc/passwd', 'utf8')", []string{"EACCES", "outside the session root"}},
		{"symlink to a file outside", "require('fs').readFileSync('link.txt', 'utf8')", []string{"EACCES", "leads outside the session root", "symbolic link"}},
		{"relative symlink outside", "require('fs').readFileSync('rel.js', 'utf8')", []string{"EACCES", "leads outside the session root"}},
		{"through a directory symlink", "require('fs').readFileSync('dirlink/secret.txt', 'utf8')", []string{"EACCES", "leads outside the session root"}},
		{"readdir through a directory symlink", "require('fs').readdirSync('dirlink')", []string{"EACCES"}},
		{"write through a directory symlink", "require('fs').writeFileSync('dirlink/new.txt', 'x')", []string{"EACCES"}},
		{"write outside", "require('fs').writeFileSync('../outside/new.txt', 'x')", []string{"EACCES"}},
		{"mkdir outside", "require('fs').mkdirSync('/tmp/wasmeval-escape-test', {recursive: true})", []string{"EACCES"}},
		{"rename out", "require('fs').renameSync('inside.js', '../outside/moved.js')", []string{"EACCES"}},
		{"copy out", "require('fs').copyFileSync('inside.js', '" + outside + "/copied.js')", []string{"EACCES"}},
		{"copy in", "require('fs').copyFileSync('" + outside + "/secret.txt', 'stolen.txt')", []string{"EACCES"}},
		{"stat outside", "require('fs').statSync('/etc')", []string{"EACCES"}},
		{"rm the root", "require('fs').rmSync(process.cwd(), {recursive: true, force: true})", []string{"EPERM", "session root"}},
		{"new link out", "require('fs').symlinkSync('" + outside + "/secret.txt', 'made.txt'); require('fs').readFileSync('made.txt', 'utf8')", []string{"EPERM", "symlink"}},
		{"new relative link out", "require('fs').symlinkSync('../outside/secret.txt', 'made.txt')", []string{"EPERM", "symlink"}},
		{"hard link of a link out", "require('fs').linkSync('link.txt', 'hard.txt'); require('fs').readFileSync('hard.txt', 'utf8')", []string{"EPERM", "link"}},
		{"promises", "await require('fs/promises').readFile('link.txt', 'utf8')", []string{"EACCES"}},
		{"import", "import { readFileSync } from 'fs'; readFileSync('../outside/secret.txt')", []string{"EACCES"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, rec := s.run(tt.code)
			all := rec.All()
			if strings.Contains(all, "31337") {
				t.Fatalf("escaped: %q", all)
			}
			if !out.Failed {
				t.Fatalf("succeeded: %q", all)
			}
			want(t, "stderr", rec.StderrText(), tt.want...)
		})
	}
	// A named pipe the host planted cannot hang the cell.
	if err := syscall.Mkfifo(filepath.Join(s.root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	want(t, "read a pipe", s.fails("require('fs').readFileSync('pipe')"), "EACCES")
	want(t, "append to a pipe", s.fails("require('fs').appendFileSync('pipe', 'x')"), "EACCES")
	want(t, "open a pipe", s.fails("require('fs').openSync('pipe', 'r')"), "EACCES")
	if d := time.Since(start); d > testenv.Stretch(5*time.Second) {
		t.Errorf("the pipe held the cells for %v", d)
	}
	for _, name := range []string{"new.txt", "moved.js", "copied.js"} {
		if _, err := os.Stat(filepath.Join(outside, name)); err == nil {
			t.Errorf("the guest made %s outside its root", name)
		}
	}
	if _, err := os.Stat("/tmp/wasmeval-escape-test"); err == nil {
		t.Errorf("the guest made /tmp/wasmeval-escape-test")
	}
	if got, _ := s.ok("require('fs').readFileSync('good.js', 'utf8')"); got != "\"module.exports = 'inside'\"" {
		t.Errorf("a link inside the root: %s", got)
	}
}

// fs writes count against the session's disk quota, shared with the
// helpers.
func TestNodeFSQuota(t *testing.T) {
	s := fsFixture(t, 64<<10)
	s.ok("require('fs').writeFileSync('a.bin', Buffer.alloc(40 << 10))")
	want(t, "over quota", s.fails("require('fs').writeFileSync('b.bin', Buffer.alloc(40 << 10))"), "ENOSPC", "disk quota")
	want(t, "helper after fs", s.fails("await write('c.txt', 'x'.repeat(30 << 10))"), "disk quota exceeded")
	s.ok("require('fs').unlinkSync('a.bin'); await write('c.txt', 'x'.repeat(30 << 10))")
}

// fs reads a file no larger than the session's memory limit allows.
func TestNodeFSMemoryLimit(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "big.bin"), bytes.Repeat([]byte{1}, 40<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSession(t, runtimes.InstanceOptions{Root: root, MemoryLimitBytes: 64 << 20})
	want(t, "big read", s.fails("require('fs').readFileSync('big.bin')"), "ERR_FS_FILE_TOO_LARGE", "read it in parts")
	want(t, "big alloc", s.fails("Buffer.alloc(100 << 20)"), "RangeError", "out of range")
	want(t, "big text", s.fails("const big = Buffer.alloc(40 << 20); big.toString('hex')"), "RangeError", "ERR_STRING_TOO_LONG", "in parts")
	if got, _ := s.ok("big.toString('hex', 0, 2) + big.subarray(1, 3).toString('hex')"); got != "'00000000'" {
		t.Errorf("a part of a big buffer = %s", got)
	}
	s.ok("big = null")
	// A small gzip that expands past the limit.
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	if _, err := zw.Write(make([]byte, 200<<20)); err != nil || zw.Close() != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bomb.gz"), bomb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want(t, "zip bomb", s.fails("require('zlib').gunzipSync(require('fs').readFileSync('bomb.gz'))"), "ERR_BUFFER_TOO_LARGE", "decompresses to more than")
	if got, _ := s.ok("const fd = require('fs').openSync('big.bin'); const b = Buffer.alloc(4); require('fs').readSync(fd, b, 0, 4, 1000); require('fs').closeSync(fd); [...b]"); got != "[ 1, 1, 1, 1 ]" {
		t.Errorf("a read in parts = %s", got)
	}
}

// A long fs call ends with its cell: rm of a big tree stops when the cell's
// time is up, and the session goes on.
func TestNodeFSStopsWithTheCell(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "many")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := newSession(t, runtimes.InstanceOptions{Root: root})
	s.ok("require('fs').existsSync('many')") // the module is made before the clock runs
	// The cell is stopped once the rm has begun: rm takes the entries in
	// order of name, "0" first.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(dir, "0")); errors.Is(err, fs.ErrNotExist) {
				cancel()
				return
			}
			time.Sleep(50 * time.Microsecond)
		}
	}()
	start := time.Now()
	out, rec := s.runCtx(ctx, "require('fs').rmSync('many', {recursive: true})")
	if !out.Failed || !out.Interrupted {
		t.Fatalf("the cell was not stopped: %+v %s", out, rec.All())
	}
	if d := time.Since(start); d > testenv.Stretch(10*time.Second) {
		t.Errorf("the rm went on for %v", d)
	}
	left, err := os.ReadDir(dir)
	if err != nil || len(left) == 0 || len(left) == 3000 {
		t.Errorf("the rm did not start and stop: %d of 3000 files left, %v", len(left), err)
	}
	if got, _ := s.ok("require('fs').existsSync('many')"); got != "true" {
		t.Errorf("after the stop: %s", got)
	}
}

// FormData, as the seed's Web APIs have it: entries in order, Blobs as
// Files, a multipart/form-data body that formData() reads back, and
// urlencoded bodies.
func TestFormData(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	runChecks(t, s, []check{
		{"const fd = new FormData(); fd.append('a', '1'); fd.append('a', 2); fd.append('f', new Blob(['hé'], {type: 'text/plain'}), 'h.txt');\n[fd.getAll('a'), fd.get('f').name, fd.get('f') instanceof File, fd.has('b'), [...fd.keys()]]",
			"[ [ '1', '2' ], 'h.txt', true, false, [ 'a', 'a', 'f' ] ]"},
		{"fd.set('a', 'only'); fd.delete('f'); [...fd]", "[ [ 'a', 'only' ] ]"},
		{"const up = new FormData(); up.append('name', 'x\"y'); up.append('file', new File([new Uint8Array([0, 255, 10])], 'b.bin'));\nconst rq = new Request('https://x.y/', {method: 'POST', body: up});\nconst ct = rq.headers.get('content-type');\nconst back = await rq.clone().formData();\n[/^multipart\\/form-data; boundary=\\S+$/.test(ct), back.get('name'), back.get('file').name, [...await back.get('file').bytes()]]",
			"[ true, 'x\"y', 'b.bin', [ 0, 255, 10 ] ]"},
		{"const body = await new Request('https://x.y/', {method: 'POST', body: up}).text(); [body.includes('Content-Disposition: form-data; name=\"name\"'), body.includes('filename=\"b.bin\"'), body.includes('Content-Type: application/octet-stream')]",
			"[ true, true, true ]"},
		{"const form = await new Response('a=1&b=x+y', {headers: {'content-type': 'application/x-www-form-urlencoded'}}).formData(); [form.get('a'), form.get('b')]",
			"[ '1', 'x y' ]"},
		{"await new Response('{}', {headers: {'content-type': 'application/json'}}).formData().catch((e) => e.message)",
			"'Could not parse content as FormData: the content type is \"application/json\", not multipart/form-data or application/x-www-form-urlencoded'"},
		{"[self === globalThis, navigator.userAgent, navigator.hardwareConcurrency, typeof Symbol.asyncIterator]", "[ true, 'wasmeval', 1, 'symbol' ]"},
	})
}

// Bun, the global the seed's VM has: Bun.file and Bun.write on the session
// root, through the same rules as fs; Bun.env; a clear error for what
// needs a process.
func TestBunGlobal(t *testing.T) {
	s := fsFixture(t, 0)
	runChecks(t, s, []check{
		{"await Bun.write('out/a.json', JSON.stringify({x: 1}))", "7"},
		{"const f = Bun.file('out/a.json'); [(await f.json()).x, await f.text(), f.size, f.type, await f.exists(), await Bun.file('nope.txt').exists(), Bun.file('nope.txt').size]",
			`[ 1, '{"x":1}', 7, 'application/json;charset=utf-8', true, false, 0 ]`},
		{"await Bun.write(Bun.file('copy.json'), Bun.file('out/a.json')); await Bun.write('bytes.bin', new Uint8Array([1, 2, 3])); await Bun.write('r.txt', new Response('from a response'));\n[await read('copy.json'), [...await Bun.file('bytes.bin').bytes()], await Bun.file('r.txt').text()]",
			`[ '{"x":1}', [ 1, 2, 3 ], 'from a response' ]`},
		{"await Bun.file('r.txt').delete(); await Bun.file('r.txt').exists()", "false"},
		{"[Bun.env === process.env, typeof Bun.version, Bun.deepEquals({a: [1]}, {a: [1]}), Bun.inspect({a: 1}), Bun.nanoseconds() > 0, Bun.which('ls')]",
			"[ true, 'string', true, '{ a: 1 }', true, null ]"},
		{"Bun.escapeHTML('<a href=\"x\">&</a>')", "'&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;'"},
		{"await Bun.sleep(1); let msg; try { Bun.spawn(['ls']) } catch (e) { msg = e.message }; msg",
			"\"Bun.spawn: there are no processes in the sandbox; use tool.<name>() to call one of the session's tools (e.g. bash), which runs outside it\""},
		{"await Bun.file('/etc/passwd').text().catch((e) => e.code)", "'EACCES'"},
	})
	if _, err := os.Stat(filepath.Join(s.root, "out", "a.json")); err != nil {
		t.Errorf("Bun.write did not write into the root: %v", err)
	}
}

// Recent built-ins goja lacks, which agents' code uses.
func TestNewerBuiltins(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	runChecks(t, s, []check{
		{"const g = Object.groupBy([1, 2, 3, 4], (n) => (n % 2 ? 'odd' : 'even')); [g.odd, g.even, Object.getPrototypeOf(g)]", "[ [ 1, 3 ], [ 2, 4 ], null ]"},
		{"const mg = Map.groupBy(['a', 'bb', 'c'], (w) => w.length); [...mg]", "[ [ 1, [ 'a', 'c' ] ], [ 2, [ 'bb' ] ] ]"},
		{"const { promise, resolve } = Promise.withResolvers(); setTimeout(() => resolve('done'), 1); await promise", "'done'"},
		{"async function* three() { yield 1; yield 2; yield 3 }\n[await Array.fromAsync(three()), await Array.fromAsync([Promise.resolve(1), 2], (x) => x * 10)]", "[ [ 1, 2, 3 ], [ 10, 20 ] ]"},
		{"const target = {a: 1}; const ref = new WeakRef(target); new FinalizationRegistry(() => {}).register(target, 'x'); ref.deref() === target", "true"},
	})
}

// Intl, which goja lacks: a small one that formats as en-US.
func TestIntl(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{})
	runChecks(t, s, []check{
		{"[(1234567.891).toLocaleString(), (0.5).toLocaleString('en-US', {style: 'percent'}), (1234.5).toLocaleString('de-DE', {minimumFractionDigits: 2})]", "[ '1,234,567.891', '50%', '1,234.50' ]"},
		{"const usd = new Intl.NumberFormat('en-US', {style: 'currency', currency: 'USD'}); [usd.format(1234.5), usd.format(-3), new Intl.NumberFormat('en', {style: 'currency', currency: 'EUR'}).format(2), new Intl.NumberFormat('en', {style: 'currency', currency: 'JPY'}).format(1234.5)]",
			"[ '$1,234.50', '-$3.00', '€2.00', '¥1,235' ]"},
		{"const c = new Intl.NumberFormat('en', {notation: 'compact'}); [c.format(999), c.format(1234), c.format(12345), c.format(1234567), c.format(2.5e9)]", "[ '999', '1.2K', '12K', '1.2M', '2.5B' ]"},
		{"[new Intl.NumberFormat('en', {maximumSignificantDigits: 3}).format(123456), new Intl.NumberFormat('en', {maximumFractionDigits: 0}).format(2.5), new Intl.NumberFormat('en', {signDisplay: 'always'}).format(5), new Intl.NumberFormat().resolvedOptions().locale]",
			"[ '123,000', '3', '+5', 'en-US' ]"},
		{"const d = new Date(Date.UTC(2024, 0, 5, 15, 4, 9)); [new Intl.DateTimeFormat('en-US', {timeZone: 'UTC'}).format(d), new Intl.DateTimeFormat('en-US', {dateStyle: 'long', timeZone: 'UTC'}).format(d), new Intl.DateTimeFormat('en-US', {dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC'}).format(d)]",
			"[ '1/5/2024', 'January 5, 2024', 'Jan 5, 2024, 3:04 PM' ]"},
		{"[d.toLocaleDateString('en-US', {weekday: 'long', year: 'numeric', month: 'long', day: 'numeric', timeZone: 'UTC'}), d.toLocaleTimeString('en-US', {timeZone: 'UTC'}), d.toLocaleDateString('en-US', {month: 'short', day: 'numeric', timeZone: 'UTC'})]",
			"[ 'Friday, January 5, 2024', '3:04:09 PM', 'Jan 5' ]"},
		{"try { new Intl.DateTimeFormat('en', {timeZone: 'Mars/Base'}) } catch (e) { e instanceof RangeError && e.message.startsWith('Invalid time zone specified: Mars/Base') }", "true"},
		{"[['b', 'a', 'C'].sort(new Intl.Collator().compare), ['x10', 'x9', 'x1'].sort(new Intl.Collator('en', {numeric: true}).compare), new Intl.Collator('en', {sensitivity: 'base'}).compare('é', 'E')]",
			"[ [ 'a', 'b', 'C' ], [ 'x1', 'x9', 'x10' ], 0 ]"},
		{"[new Intl.PluralRules().select(1), new Intl.PluralRules().select(2)]", "[ 'one', 'other' ]"},
		{"const pr = new Intl.PluralRules('en', {type: 'ordinal'}); [1, 2, 3, 11, 22].map((n) => pr.select(n)).join(' ')", "'one two few other two'"},
		{"[...new Intl.Segmenter().segment('e\u0301a')].map((s) => s.segment.length)", "[ 2, 1 ]"},
		{"['a-b', 'ab'].sort(new Intl.Collator('en', {ignorePunctuation: true}).compare).length", "2"},
		{"[new Intl.ListFormat('en').format(['a', 'b', 'c']), new Intl.ListFormat('en', {type: 'disjunction'}).format(['a', 'b'])]", "[ 'a, b, and c', 'a or b' ]"},
		{"const rtf = new Intl.RelativeTimeFormat('en', {numeric: 'auto'}); [rtf.format(-1, 'day'), rtf.format(3, 'weeks'), new Intl.RelativeTimeFormat().format(-2, 'hour')]", "[ 'yesterday', 'in 3 weeks', '2 hours ago' ]"},
		{"[...new Intl.Segmenter('en', {granularity: 'word'}).segment('Hi, you!')].filter((s) => s.isWordLike).map((s) => s.segment)", "[ 'Hi', 'you' ]"},
	})
}
