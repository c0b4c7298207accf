package sandbox_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// attackSession is a session on base/root, with a secret next to the root
// (base/secret.txt) for escapes to reach.
func attackSession(t *testing.T, o sandbox.SessionOptions) (s *sandbox.Session, root string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(base, "root")
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"secret.txt": "SECRET", "root/hello.txt": "hello", "root/sub/inner.txt": "inner"} {
		if err := os.WriteFile(filepath.Join(base, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sb, err := sandbox.New(context.Background(), sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(context.Background()) })
	o.Root = root
	o.Env = map[string]string{"LANG": "C.UTF-8"}
	s, err = sb.NewSession(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return s, root
}

// hostLeavesRoot opens root+"/"+p as host code would (p is not cleaned:
// the kernel resolves "l/.." through l's target) and reports where it
// landed when that is outside the root.
func hostLeavesRoot(t *testing.T, root, p string) (string, bool) {
	t.Helper()
	fd, err := unix.Open(root+"/"+p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer unix.Close(fd)
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		t.Fatal(err)
	}
	return real, real != root && !strings.HasPrefix(real, root+"/")
}

// checkHostConfined resolves on the host the probes (each must stay
// inside the root as text) and every link in the root followed by "/.."
// as often as it is deep: a path that stays inside the root lexically
// must stay inside it for real.
func checkHostConfined(t *testing.T, root string, probes ...string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink != 0 {
			rel, _ := filepath.Rel(root, p)
			probes = append(probes, rel)
			probe := rel
			for range strings.Count(rel, "/") + 1 {
				probe += "/.."
				probes = append(probes, probe, probe+"/hello.txt")
			}
		}
		return nil
	})
	for _, p := range probes {
		if real, out := hostLeavesRoot(t, root, p); out {
			t.Errorf("on the host, %s leads out of the root to %s", p, real)
		}
	}
}

// TestPythonSymlinksHostSafe replays issue 9's link chains from CPython:
// each link that host code could follow out of the root is refused with
// PermissionError, and no path through what the guest made leaves the
// root on the host.
func TestPythonSymlinksHostSafe(t *testing.T) {
	testenv.RequirePython(t)
	s, root := attackSession(t, sandbox.SessionOptions{})
	code := `import os, errno
def sym(target, name):
    try:
        os.symlink(target, name)
        print(name, "ok", os.readlink(name))
    except OSError as e:
        print(name, type(e).__name__, errno.errorcode.get(e.errno))
sym('.', 'g4')
sym('g4/..', 'g_up')
os.mkdir('gsub')
sym('gsub', 'g5')
sym('g5/..', 'g_up2')
sym('.', 'l1')
sym('l1/l1/..', 'l2')
os.makedirs('sw/x')
sym('sw/x/../../secret.txt', 'p')
os.rmdir('sw/x')
sym('.', 'sw/x')
sym('..', 'sw/x')
sym('', 'empty')
sym('a/../b', 'ab')
sym('./hello.txt', 'dot_slash')
sym(os.path.dirname(os.getcwd()), 'abs_parent')
sym(os.getcwd(), 'abs_root')
sym(os.getcwd() + '/sub/inner.txt', 'abs_in')
sym('sub', 'to_sub')
os.link('to_sub', 'sub/to_sub_again')
os.rename('g5', 'sub/g5_moved')
print(open('abs_in').read(), open('sub/to_sub_again/inner.txt').read() if os.path.isdir('sub/to_sub_again') else 'not a dir')
`
	out, res := evalLang(t, s, "py", code)
	if res.Details.IsError {
		t.Fatalf("cell failed:\n%s", out)
	}
	if strings.Contains(out, "empty ok") {
		t.Errorf("a link with an empty target was made:\n%s", out)
	}
	for _, want := range []string{
		"g4 PermissionError EPERM", "g_up PermissionError EPERM", "g5 ok gsub", "g_up2 PermissionError EPERM",
		"l1 PermissionError EPERM", "l2 PermissionError EPERM", "p PermissionError EPERM",
		"sw/x PermissionError EPERM", "ab PermissionError EPERM",
		"dot_slash PermissionError EPERM", "abs_parent PermissionError EPERM", "abs_root PermissionError EPERM",
		"abs_in ok sub/inner.txt", "to_sub ok sub", "inner",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	checkHostConfined(t, root, "g_up", "g_up/hello.txt", "g_up2", "l1/l1/..", "l2", "p", "sw/x/../../hello.txt", "sub/g5_moved/../..")
	// The session goes on.
	if out, _ := evalLang(t, s, "py", "print('alive')"); !strings.Contains(out, "alive") {
		t.Errorf("next cell: %q", out)
	}
}

// TestDiskQuota: writes past the session's disk quota fail, from the
// guest's own files (ENOSPC) and from the helpers (a message), in both
// languages; the session goes on and files under the cap work.
func TestDiskQuota(t *testing.T) {
	testenv.RequirePython(t)
	s, root := attackSession(t, sandbox.SessionOptions{DiskQuotaBytes: 4 << 20, DiskQuotaFiles: 100})
	py := `import errno, os
def tryit(label, f):
    try:
        f()
        print(label, "ok")
    except OSError as e:
        print(label, errno.errorcode.get(e.errno), e.strerror)
    except HostCallError as e:
        print(label, "HostCallError", e)
def big():
    with open('big', 'wb') as f:
        f.write(b'x' * (8 << 20))
tryit('big', big)
def sparse_truncate():
    with open('sparse', 'wb') as f:
        f.truncate(2 << 30)
tryit('sparse-truncate', sparse_truncate)
def sparse_seek():
    with open('sparse2', 'wb') as f:
        f.seek(2 << 30)
        f.write(b'x')
tryit('sparse-seek', sparse_seek)
tryit('helper-write', lambda: write('h.txt', 'y' * (5 << 20)))
tryit('helper-append', lambda: [append('h2.txt', 'z' * (1 << 20)) for _ in range(5)])
for i in range(3):
    tryit('small-%d' % i, lambda: open('small%d.txt' % i, 'w').write('fits'))
print('sizes', sorted((n, os.path.getsize(n)) for n in os.listdir('.') if not os.path.isdir(n)))
`
	out, res := evalLang(t, s, "py", py)
	if res.Details.IsError {
		t.Fatalf("cell failed:\n%s", out)
	}
	t.Logf("python:\n%s", out)
	for _, want := range []string{
		"big ENOSPC No space left on device",
		"sparse-truncate ENOSPC",
		"sparse-seek ENOSPC",
		"helper-write HostCallError write('h.txt'): disk quota exceeded: the session root holds",
		"helper-append HostCallError append('h2.txt'): disk quota exceeded: the session root holds",
		"small-0 ok", "small-1 ok", "small-2 ok",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("python output lacks %q", want)
		}
	}
	js := `try { await write('j.txt', 'q'.repeat(5 << 20)); print('js-write ok') } catch (e) { print('js-write', e.message) }
await write('j-small.txt', 'fits'); print('js-small ok')`
	out, _ = evalLang(t, s, "js", js)
	for _, want := range []string{"js-write write('j.txt'): disk quota exceeded: the session root holds", "js-small ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("js output lacks %q:\n%s", want, out)
		}
	}
	var total int64
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				total += info.Size()
			}
		}
		return nil
	})
	if total > 4<<20 {
		t.Errorf("the root holds %d bytes, past its 4 MiB quota", total)
	}
	if out, _ := evalLang(t, s, "py", "print('alive')"); !strings.Contains(out, "alive") {
		t.Errorf("next cell: %q", out)
	}
}

// TestDefaultDiskQuotaRefusesSparse: with no quota given, the default
// (1 GiB) refuses a 2 GiB sparse file, made either way.
func TestDefaultDiskQuotaRefusesSparse(t *testing.T) {
	testenv.RequirePython(t)
	s, root := attackSession(t, sandbox.SessionOptions{})
	out, _ := evalLang(t, s, "py", `import errno
for how in ('truncate', 'seek'):
    try:
        with open('hole-' + how, 'wb') as f:
            if how == 'truncate':
                f.truncate(2 << 30)
            else:
                f.seek(2 << 30)
                f.write(b'x')
        print(how, 'ok')
    except OSError as e:
        print(how, errno.errorcode.get(e.errno))
`)
	for _, want := range []string{"truncate ENOSPC", "seek ENOSPC"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, name := range []string{"hole-truncate", "hole-seek"} {
		if info, err := os.Stat(filepath.Join(root, name)); err == nil && info.Size() > 1<<30 {
			t.Errorf("%s is %d bytes", name, info.Size())
		}
	}
}

// rssMiB is the process's resident memory, for the log.
func rssMiB() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return -1
	}
	var size, rss int64
	fmt.Sscan(string(b), &size, &rss)
	return rss * int64(os.Getpagesize()) >> 20
}

// TestHostCallsMemoryBounded: with a 64 MiB session, the host calls that
// made the host grow by gigabytes (read, write, diff of large data, many
// at once) are refused or wait their turn, and say what to do instead.
// RSS is logged, not asserted: the refusals are what the test checks.
func TestHostCallsMemoryBounded(t *testing.T) {
	testenv.RequirePython(t)
	s, root := attackSession(t, sandbox.SessionOptions{MemoryLimitBytes: 64 << 20})
	if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(strings.Repeat("line of text\n", 3<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "ctl.bin"), []byte(strings.Repeat("\x01", 3<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "mid.txt"), []byte(strings.Repeat("x", 3<<19)), 0o644); err != nil {
		t.Fatal(err)
	}
	before := rssMiB()
	py := `import _wasmeval, json
def tryit(label, f):
    try:
        r = f()
        print(label, "ok", len(r) if hasattr(r, '__len__') else r)
    except HostCallError as e:
        print(label, "refused", e)
for i in range(20):
    tryit('read-big-%d' % i, lambda: read('big.txt'))
tryit('read-piece', lambda: read('big.txt', offset=1000, limit=1000))
tryit('read-escapes', lambda: read('ctl.bin'))
tryit('diff-big', lambda: diff('\n' * (3 << 20), '\n' * (3 << 20 - 1) + 'x', text=True))
tryit('parallel-reads', lambda: parallel([lambda: read('mid.txt') for _ in range(16)], concurrency=16))
# Raw calls that never wait: the host holds at most the session's budget.
req = json.dumps({"op": "write", "path": "w", "content": "z" * (15 << 20)})
ids = [_wasmeval.call_start(req) for _ in range(40)]
answers = [_wasmeval.call_wait()[1] for i in ids if i >= 0]
print('flood', sum('hold' in a for a in answers), 'refused of', len(answers))
`
	out, res := evalLang(t, s, "py", py)
	t.Logf("RSS %d MiB -> %d MiB\n%s", before, rssMiB(), out)
	if res.Details.IsError {
		t.Fatalf("cell failed:\n%s", out)
	}
	for _, want := range []string{
		"read-big-0 refused read('big.txt'): the selected text is larger than the 4 MiB one read may return; give offset and limit",
		"read-big-19 refused",
		"read-piece ok 13000",
		"read-escapes refused read('ctl.bin'): the answer is 18.0 MiB as JSON (escapes included), more than the 8.1 MiB one host call of this session may return",
		"diff-big refused diff: the texts are too large to compare at once",
		"parallel-reads ok 16",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if !strings.Contains(out, "flood ") || strings.Contains(out, "flood 0 refused") {
		t.Errorf("the flood of raw calls was not refused: %s", out)
	}
	js := `try { await write('j', 'q'.repeat(9 << 20)); print('js-write ok') } catch (e) { print('js-write', e.message) }`
	out, _ = evalLang(t, s, "js", js)
	if !strings.Contains(out, "more than the 8 MiB one write may carry") && !strings.Contains(out, "a host call of this session may carry") {
		t.Errorf("js write: %s", out)
	}
	if out, _ := evalLang(t, s, "py", "print('alive')"); !strings.Contains(out, "alive") {
		t.Errorf("next cell: %q", out)
	}
}

// TestJSHostCallsBounded: JavaScript's host calls count against the same
// budget: large calls at once past it are refused instead of the host
// holding a copy of each.
func TestJSHostCallsBounded(t *testing.T) {
	// Each served call is held 3 s, long enough that all four are asked
	// while the first two are in flight even on a loaded machine (with
	// 500 ms the first ones sometimes ended before the last was asked).
	sb, err := sandbox.New(context.Background(), sandbox.Options{Host: &countingHost{delay: 3 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(context.Background())
	// A 32 MiB session: its runtime may hold 16 MiB for calls in flight;
	// each call below holds twice its 3 MiB request.
	s, err := sb.NewSession(context.Background(), sandbox.SessionOptions{Root: t.TempDir(), MemoryLimitBytes: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	js := `const big = 'x'.repeat(3 << 20);
const ps = [];
for (let i = 0; i < 4; i++) ps.push(llm(big).then(() => 'ok', (e) => e.message));
const r = await Promise.all(ps);
print('refused', r.filter((m) => m.includes('host calls in flight of this session hold')).length, 'ok', r.filter((m) => m === 'ok').length);
print(r.find((m) => m !== 'ok') || '');`
	out, _ := evalLang(t, s, "js", js)
	t.Logf("%s", out)
	var refused, ok int
	fmt.Sscanf(out, "refused %d ok %d", &refused, &ok)
	if refused != 2 || ok != 2 {
		t.Errorf("want two calls served and two refused by the budget: %s", out)
	}
}
