package attack_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// TestFS: files outside the session root stay out of reach, by path, by
// '..', by symbolic links the guest makes or finds, by directory
// descriptors and through the read-only stdlib and prelude mounts; what is
// inside stays readable (so the refusals are not a broken filesystem).
func TestFS(t *testing.T) {
	run(t, []attack{
		py("the root is readable", `print(open('inside.txt').read())`, ok, insideText),
		py("/etc/passwd", `print(open('/etc/passwd').read())`, fail, "FileNotFoundError"),
		py("/proc/self/environ", `print(open('/proc/self/environ').read())`, fail, "FileNotFoundError"),
		py("/proc/self/mem", `print(open('/proc/self/mem', 'rb').read(16))`, fail, "FileNotFoundError"),
		py("/dev/mem", `print(open('/dev/mem', 'rb').read(16))`, fail, "FileNotFoundError"),
		py("relative ..", `print(open('../outside/secret.txt').read())`, fail, "FileNotFoundError"),
		py("deep ..", `print(open('../../../../../../etc/passwd').read())`, fail, "Error: [Errno"),
		py("absolute path of the secret", `print(open('{{SECRET}}').read())`, fail, "FileNotFoundError"),
		py("the parent lists only the root", `import os; print(sorted(os.listdir('..')), sorted(os.listdir('/')))`, ok, "['root']"),
		py("chdir out and back", `import os
try:
    os.chdir('../..')
    print(os.listdir('.'), os.path.exists('{{OUTSIDE}}'))
    print(open('outside/secret.txt').read())
finally:
    os.chdir('{{ROOT}}')`, fail, "FileNotFoundError"),
		py("the operator's link out", `print(open('hostlink/secret.txt').read())`, fail, "No such file"),
		py("the operator's link listed", `import os; print(os.listdir('hostlink'))`, fail, "No such file"),
		py("the operator's link's target", `import os; print(os.readlink('hostlink'))`, fail, "Permission denied"),
		py("move the operator's link deeper", `import os; os.makedirs('deeper', exist_ok=True); os.rename('hostlink2', 'deeper/hl')`, fail, "Operation not permitted"),
		py("hard-link the operator's link", `import os; os.link('hostlink2', 'hl_copy')`, fail, "Operation not permitted"),
		py("remove the operator's link", `import os; os.remove('hostlink2'); print(os.path.lexists('hostlink2'))`, ok, "False"),
		{name: "open a named pipe", lang: "py", code: `print(open('pipe').read())`, status: fail, want: []string{"Permission denied"}, within: 5 * time.Second},
		{name: "write a named pipe", lang: "py", code: `open('pipe', 'w').write('x')`, status: fail, want: []string{"Permission denied"}, within: 5 * time.Second},
		{name: "the read helper on a named pipe", lang: "py", code: `print(read('pipe'))`, status: fail, want: []string{"not a regular file"}, within: 5 * time.Second},
		{name: "the append helper on a named pipe", lang: "py", code: `append('pipe', 'x')`, status: fail, want: []string{"append('pipe')"}, within: 5 * time.Second},
		py("realpath of the operator's link", `import os; print(os.path.realpath('hostlink/secret.txt'))`, fail, "Permission denied"),
		py("an operator's link inside the root still reads", `import os; print(os.readlink('innerlink'))`, ok, "inside.txt"),
		py("symlink to an absolute path outside", `import os
os.symlink('{{SECRET}}', 'abs_link')
print(open('abs_link').read())`, fail, "Operation not permitted"),
		py("symlink to ..", `import os; os.symlink('..', 'up'); print(os.listdir('up'))`, fail, "Operation not permitted"),
		py("symlink chain through a symlinked folder", `import os
os.makedirs('g1/g2', exist_ok=True)
try:
    os.symlink('g1/g2', 'g4')
    os.symlink('g4/..', 'g_up')
    print(os.listdir('g_up/..'))
    print(open('g_up/../../outside/secret.txt').read())
except OSError as e:
    print('refused:', e)`, ok, "refused"),
		py("swap a folder for a symlink", `import os, shutil
os.makedirs('sw/x', exist_ok=True)
shutil.rmtree('sw')
try:
    os.symlink('..', 'sw')
    print(open('sw/outside/secret.txt').read())
except OSError as e:
    print('refused:', e)`, ok, "refused"),
		py("os.open with O_NOFOLLOW and O_DIRECTORY flags", `import os
fd = os.open('..', os.O_RDONLY | os.O_DIRECTORY)
try:
    f = os.open('outside/secret.txt', os.O_RDONLY | getattr(os, 'O_NOFOLLOW', 0), dir_fd=fd)
    print(os.read(f, 100))
finally:
    os.close(fd)`, fail, "No such file"),
		py("os.open of the secret by its path", `import os; print(os.read(os.open('{{SECRET}}', os.O_RDONLY), 100))`, fail, "No such file"),
		py("stat of the secret", `import os; print(os.stat('{{SECRET}}'))`, fail, "No such file"),
		py("os.walk from /", `import os
seen = [os.path.join(d, f) for d, _, fs in os.walk('/') for f in fs if 'outside' in d or f == 'secret.txt']
print('seen', seen)`, ok, "seen []"),
		py("__file__ of the stdlib and ..", `import os, posixpath
p = posixpath.join(posixpath.dirname(os.__file__), '..', '..', '..', '..', 'etc', 'passwd')
print(open(p).read())`, fail, "Error"),
		py("zipimport of the stdlib zip reads only the stdlib", `import zipimport, sys
z = zipimport.zipimporter('/usr/local/lib/python311.zip')
print(z.get_data('../../../../etc/passwd'))`, fail, "OSError"),
		py("write into the stdlib mount", `open('/usr/local/lib/python311.zip', 'ab').write(b'x')`, fail, "Read-only file system"),
		py("write beside the stdlib", `open('/usr/local/lib/evil.py', 'w').write('x')`, fail, "Read-only file system"),
		py("write over the prelude", `open('/usr/local/lib/wasmeval/prelude.zip', 'wb').write(b'x')`, fail, "Read-only file system"),
		py("remove the prelude", `import os; os.remove('/usr/local/lib/wasmeval/prelude.zip')`, fail, "Read-only file system"),
		py("the prelude still works", `print(read('inside.txt'))`, ok, insideText),
		{name: "write beside the root", lang: "py", code: `open('../escape.txt', 'w').write('x')`, status: fail, want: []string{"Error"}, host: noFile("escape.txt")},
		{name: "write to /tmp", lang: "py", code: `open('/tmp/escape-attack.txt', 'w').write('x')`, status: fail, want: []string{"Read-only file system"},
			host: func(t *testing.T, w *world) {
				if _, err := os.Lstat("/tmp/escape-attack.txt"); err == nil {
					t.Error("the guest wrote /tmp/escape-attack.txt on the host")
				}
			}},
		py("the read helper refuses /etc/passwd", `print(read('/etc/passwd'))`, fail, "outside the session root"),
		py("the read helper refuses ..", `print(read('../outside/secret.txt'))`, fail, "outside the session root"),
		py("the read helper refuses the operator's link", `print(read('hostlink/secret.txt'))`, fail, "outside the session root"),
		py("the tree helper refuses ..", `print(tree('..'))`, fail, "outside the session root"),
		{name: "the write helper refuses ..", lang: "py", code: `write('../escape2.txt', 'x')`, status: fail, want: []string{"outside the session root"}, host: noFile("escape2.txt")},

		js("the root is readable", `print(await read('inside.txt'))`, ok, insideText),
		js("read /etc/passwd", `print(await read('/etc/passwd'))`, fail, "outside the session root"),
		js("read ..", `print(await read('../outside/secret.txt'))`, fail, "outside the session root"),
		js("read the secret by its path", `print(await read('{{SECRET}}'))`, fail, "outside the session root"),
		js("read through the operator's link", `print(await read('hostlink/secret.txt'))`, fail, "outside the session root"),
		js("tree of ..", `print(await tree('..'))`, fail, "outside the session root"),
		{name: "write ..", lang: "js", code: `await write('../escape3.txt', 'x')`, status: fail, want: []string{"outside the session root"}, host: noFile("escape3.txt")},
		{name: "append to the secret", lang: "js", code: `await append('{{SECRET}}', 'x')`, status: fail, want: []string{"outside the session root"}},
		js("require ..", `require('../outside/secret.txt')`, fail, "outside the session root"),
		js("require /etc/passwd", `require('/etc/passwd')`, fail, "outside the session root"),
		js("require through the operator's link", `require('./hostlink/secret.txt')`, fail, "Cannot find module"),
		js("dynamic import of ..", `await import('../outside/secret.txt')`, fail, "Cannot find module"),
		{name: "read a named pipe", lang: "js", code: `await read('pipe')`, status: fail, want: []string{"not a regular file"}, within: 5 * time.Second},
		{name: "require a named pipe", lang: "js", code: `require('./pipe')`, status: fail, want: []string{"Cannot find module './pipe'"}, within: 8 * time.Second},
		js("process.chdir out", `process.chdir('..'); print(await read('outside/secret.txt'))`, fail, "Error"),
	})
}

// TestRootsOverlappingTheCache: no session root may be, contain or lie
// inside the cache that later wasmeval processes load compiled code from
// (by path or through a symlink), or a guest could plant code there.
func TestRootsOverlappingTheCache(t *testing.T) {
	sb := sharedSandbox(t)
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("skipped: no user cache folder: %v", err)
	}
	dir := filepath.Join(cache, "wasmeval")
	inside := filepath.Join(dir, "attack-inside")
	if err := os.MkdirAll(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(inside)
	link := filepath.Join(t.TempDir(), "cache-link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{dir, cache, inside, link} {
		s, err := sb.NewSession(context.Background(), sandbox.SessionOptions{Root: root})
		if err == nil {
			s.Close(context.Background())
		}
		if !errors.Is(err, sandbox.ErrRootOverlap) {
			t.Errorf("NewSession with the root %s: %v, want ErrRootOverlap", root, err)
		}
	}
}

// TestFSMovesThatLeadOut: moves the guest may not make because of what the
// host sees afterwards: a folder that holds an operator's upward link (moved
// up the tree, the link would lead host tools out of the root), and a folder
// moved into a deep one (its content would lie past PATH_MAX, out of reach of
// the disk quota's recount). Each language, through its own file calls.
func TestFSMovesThatLeadOut(t *testing.T) {
	deep := strings.Repeat("d", 200)
	chain := strings.TrimSuffix(strings.Repeat(deep+"/", 12), "/")
	cases := map[string]struct{ code, want string }{
		"py": {`import os
try:
    os.rename('opdir/sub', 'sub_up')
except OSError as e:
    print('folder with the link:', e.strerror)
try:
    os.rename('opdir', 'elsewhere')
except OSError as e:
    print('its parent:', e.strerror)
os.makedirs('a/` + chain + `'); os.makedirs('b/` + chain + `')
try:
    os.rename('a', 'b/` + chain + `/a')
except OSError as e:
    print('deep move:', e.strerror)
try:
    write('c/` + chain + `/` + chain + `/f', 'x')
except Exception as e:
    print('deep write:', str(e)[:6], str(e).split('; ')[-1])
`, "folder with the link: Operation not permitted\nits parent: Operation not permitted\ndeep move: Filename too long\ndeep write: write( a path in the session root must be shorter than 4096 bytes (PATH_MAX)"},
		"js": {`const fs = require('fs')
for (const [from, to] of [['opdir/sub', 'sub_up'], ['opdir', 'elsewhere']]) {
  try { fs.renameSync(from, to) } catch (e) { console.log(from, e.code) }
}
fs.mkdirSync('a/` + chain + `', {recursive: true}); fs.mkdirSync('b/` + chain + `', {recursive: true})
try { fs.renameSync('a', 'b/` + chain + `/a') } catch (e) { console.log('deep move', e.code) }
`, "opdir/sub EPERM\nopdir EPERM\ndeep move ENAMETOOLONG"},
	}
	for _, lang := range []string{"py", "js"} {
		t.Run(lang, func(t *testing.T) {
			if lang == "py" {
				testenv.RequirePython(t)
			}
			w := newWorld(t)
			if err := os.MkdirAll(filepath.Join(w.root, "opdir", "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			// Inside where the operator put it; one level up it would be
			// the base's inside.txt, a canary.
			if err := os.Symlink("../../inside.txt", filepath.Join(w.root, "opdir", "sub", "up")); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(w.base, "inside.txt"), []byte(canaryFile), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := sharedSandbox(t).NewSession(context.Background(), sessionOptions(w.root))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			out, _ := eval(t, s, lang, cases[lang].code, 20)
			if !strings.Contains(out, cases[lang].want) {
				t.Errorf("output:\n%s\nwant it to hold:\n%s", clip(out), cases[lang].want)
			}
			// The host still finds the link where it was, reading inside.
			for _, p := range []string{"opdir/sub/up", "sub_up/up", "elsewhere/sub/up"} {
				if data, err := os.ReadFile(filepath.Join(w.root, p)); err == nil && string(data) != insideText+"\n" {
					t.Errorf("on the host, %s reads %q", p, data)
				}
			}
			alive(t, s, lang)
		})
	}
}

// TestDiskQuotaSeesHostFiles: files the host puts into a session's root
// behind its back (a fork's copy, an operator) count against the quota
// before the guest can use the same room: the guest cannot pass its cap
// through them. And room the host frees comes back.
func TestDiskQuotaSeesHostFiles(t *testing.T) {
	cases := map[string][2]string{
		"py": {`open('big', 'wb').write(b'x' * (5 << 20))`, "No space left on device"},
		"js": {`require('fs').writeFileSync('big', 'x'.repeat(5 << 20))`, "ENOSPC"},
	}
	for _, lang := range []string{"py", "js"} {
		t.Run(lang, func(t *testing.T) {
			if lang == "py" {
				testenv.RequirePython(t)
			}
			w := newWorld(t)
			s, err := sharedSandbox(t).NewSession(context.Background(), sessionOptions(w.root))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			planted := filepath.Join(w.root, "planted")
			if err := os.WriteFile(planted, make([]byte, 7<<20), 0o644); err != nil { // of the 8 MiB quota
				t.Fatal(err)
			}
			if out, status := eval(t, s, lang, cases[lang][0], 20); status != fail || !strings.Contains(out, cases[lang][1]) {
				t.Errorf("5 MiB into a root the host filled to 7 of 8 MiB: %s %q", status, clip(out))
			}
			if err := os.Remove(planted); err != nil {
				t.Fatal(err)
			}
			// The quota walks the root again for a refused change, but after
			// a change refused despite a walk it waits ten times that walk's
			// time before the next (a guest retrying in a loop), so the room
			// the host freed is seen within that wait: retry as a guest would.
			deadline := time.Now().Add(testenv.Stretch(5 * time.Second))
			for {
				out, status := eval(t, s, lang, cases[lang][0], 20)
				if status == ok {
					break
				}
				if !strings.Contains(out, cases[lang][1]) || time.Now().After(deadline) {
					t.Errorf("5 MiB after the host freed the room: %s %q", status, clip(out))
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}
