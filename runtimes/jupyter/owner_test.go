package jupyter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

// These tests need wasmeval to run as root: only then does a local kernel
// run as another user, whose files the host's must become.

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the kernel runs as another user only when wasmeval runs as root; this test runs as uid " + strconv.Itoa(os.Geteuid()))
	}
}

func uidOf(t *testing.T, p string) uint32 {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Uid
}

// kernelSandbox is a sandbox whose sessions' Python is a local kernel,
// closed when the test ends.
func kernelSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{PythonBackend: sandbox.PythonJupyter,
		Jupyter: sandbox.JupyterOptions{Python: testenv.JupyterPython(t)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(ctx) })
	return sb
}

// evalOK runs Python cells and fails the test on an error result; it
// returns the result's text.
func evalOK(t *testing.T, s *sandbox.Session, code ...string) string {
	t.Helper()
	var cells []sandbox.Cell
	for _, c := range code {
		cells = append(cells, sandbox.Cell{Language: "py", Code: c})
	}
	res, err := s.Eval(context.Background(), sandbox.Request{Cells: cells})
	if err != nil {
		t.Fatal(err)
	}
	if res.Details.IsError {
		t.Fatalf("cells failed: %s", res.Content[0].Text)
	}
	return res.Content[0].Text
}

// kernelUID is the uid the session's kernel runs as.
func kernelUID(t *testing.T, s *sandbox.Session) uint32 {
	t.Helper()
	text := evalOK(t, s, "import os\nprint('uid=%d' % os.getuid())")
	_, after, ok := strings.Cut(text, "uid=")
	if !ok {
		t.Fatalf("no uid in %q", text)
	}
	uid, err := strconv.Atoi(strings.Fields(after)[0])
	if err != nil {
		t.Fatal(err)
	}
	if uid == 0 {
		t.Fatal("the kernel runs as root; want an unprivileged user when wasmeval is root")
	}
	return uint32(uid)
}

// TestHostWritesBelongToKernelUser: files and folders that write() creates
// in the root while the kernel runs as another user belong to that user,
// so the kernel edits them in place (append), not only replaces them.
func TestHostWritesBelongToKernelUser(t *testing.T) {
	requireRoot(t)
	ctx := context.Background()
	sb := kernelSandbox(t)
	root := t.TempDir()
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	uid := kernelUID(t, s)
	evalOK(t, s, "write('a.txt', 'x')\nwrite('d/e/b.txt', 'y')\nappend('c.txt', 'z')")
	for _, p := range []string{"a.txt", "d", "d/e", "d/e/b.txt", "c.txt"} {
		if got := uidOf(t, filepath.Join(root, p)); got != uid {
			t.Errorf("%s belongs to uid %d, want the kernel's %d", p, got, uid)
		}
	}
	text := evalOK(t, s, "open('a.txt', 'a').write('1')\nopen('d/e/b.txt', 'a').write('2')\nopen('c.txt', 'a').write('3')\n"+
		"open('d/e/new.txt', 'w').write('4')\nprint(read('a.txt') + read('d/e/b.txt') + read('c.txt') + read('d/e/new.txt'))")
	if !strings.Contains(text, "x1y2z34") {
		t.Errorf("after appending in the kernel: %q, want x1y2z34", text)
	}
}

// TestHostWriteDoesNotFollowPlantedLink: a link the kernel plants where the
// host writes is replaced, not followed, by the write and its change of
// owner: a root-owned file it points to keeps its owner and content. Links
// that lead out of the root (to the file, or on the way to a new folder)
// are refused, and what they point to is untouched.
func TestHostWriteDoesNotFollowPlantedLink(t *testing.T) {
	requireRoot(t)
	ctx := context.Background()
	sb := kernelSandbox(t)
	root, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	uid := kernelUID(t, s)
	// A root-owned file inside the root, made after the kernel started
	// (as a host process other than wasmeval's helpers would).
	inner := filepath.Join(root, "rootowned.txt")
	if err := os.WriteFile(inner, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	evalOK(t, s, "import os\nos.symlink('rootowned.txt', 'in.txt')\nos.symlink("+strconv.Quote(secret)+", 'out.txt')\n"+
		"os.symlink("+strconv.Quote(outside)+", 'ld')\nos.symlink('rootowned.txt', 'dangling-dir')")
	evalOK(t, s, "write('in.txt', 'new')")
	for _, code := range []string{"write('out.txt', 'new')", "append('out.txt', 'new')", "write('ld/sub/f.txt', 'new')", "write('dangling-dir/f.txt', 'new')"} {
		res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: code}}})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Details.IsError {
			t.Errorf("%s: %s, want a refusal", code, res.Content[0].Text)
		}
	}
	for p, want := range map[string]string{secret: "keep", inner: "mine"} {
		if got := uidOf(t, p); got != 0 {
			t.Errorf("%s now belongs to uid %d, want 0 (kept)", p, got)
		}
		if b, _ := os.ReadFile(p); string(b) != want {
			t.Errorf("%s holds %q, want %q", p, b, want)
		}
	}
	if got := uidOf(t, outside); got != 0 {
		t.Errorf("the folder outside the root now belongs to uid %d, want 0", got)
	}
	if _, err := os.Lstat(filepath.Join(outside, "sub")); err == nil {
		t.Error("a folder was made outside the root")
	}
	fi, err := os.Lstat(filepath.Join(root, "in.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() || fi.Sys().(*syscall.Stat_t).Uid != uid {
		t.Errorf("in.txt is %s of uid %d, want a regular file of the kernel's uid %d", fi.Mode(), fi.Sys().(*syscall.Stat_t).Uid, uid)
	}
}

// TestFilesAPIPutBelongsToKernelUser: a file put through serve's files API
// into a jupyter session's root belongs to the kernel's user, who appends
// to it in place.
func TestFilesAPIPutBelongsToKernelUser(t *testing.T) {
	requireRoot(t)
	ctx := context.Background()
	sb := kernelSandbox(t)
	mgr, err := sandbox.NewManager(sb, sandbox.ManagerOptions{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mgr.Close(ctx) })
	const token = "owner-test-token"
	srv, err := server.New(server.Config{Sandbox: sb, Manager: mgr, Tokens: []string{token}, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	do := func(method, path string, body string, want int) []byte {
		t.Helper()
		req, err := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, b, want)
		}
		return b
	}
	var created struct{ ID string }
	if err := json.Unmarshal(do("POST", "/v1/sessions", "{}", http.StatusCreated), &created); err != nil {
		t.Fatal(err)
	}
	sess, err := mgr.Session(server.Owner(token), created.ID)
	if err != nil {
		t.Fatalf("session %s: %v", created.ID, err)
	}
	uid := kernelUID(t, sess)
	do("PUT", "/v1/sessions/"+created.ID+"/files/in/put.txt", "a", http.StatusCreated)
	for _, p := range []string{"in", "in/put.txt"} {
		if got := uidOf(t, filepath.Join(sess.Root(), p)); got != uid {
			t.Errorf("%s belongs to uid %d, want the kernel's %d", p, got, uid)
		}
	}
	eval := `{"cells":[{"language":"py","code":"open('in/put.txt', 'a').write('b')\nprint(open('in/put.txt').read())"}]}`
	out := do("POST", "/v1/sessions/"+created.ID+"/eval", eval, http.StatusOK)
	if !bytes.Contains(out, []byte("ab")) || bytes.Contains(out, []byte("PermissionError")) {
		t.Errorf("appending in the kernel to the put file: %s", out)
	}
}

// nobody is the user that owns the roots of the tests whose root is
// made another user's before any kernel starts.
const nobody = 65534

// nobodySession is a kernel session whose root belongs to nobody (so its
// kernel runs as nobody and the tree is not handed over at its start).
func nobodySession(t *testing.T) (root string, s *sandbox.Session) {
	t.Helper()
	ctx := context.Background()
	root = t.TempDir()
	if err := os.Chown(root, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	s, err := kernelSandbox(t).NewSession(ctx, sandbox.SessionOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(ctx) })
	return root, s
}

// evalJSOK runs a JavaScript cell and fails the test on an error result.
func evalJSOK(t *testing.T, s *sandbox.Session, code string) {
	t.Helper()
	res, err := s.Eval(context.Background(), sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: code}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Details.IsError {
		t.Fatalf("the JavaScript cell failed: %s", res.Content[0].Text)
	}
}

// wantOwned checks that each of paths (in root) belongs to uid.
func wantOwned(t *testing.T, root string, uid uint32, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if got := uidOf(t, filepath.Join(root, p)); got != uid {
			t.Errorf("%s belongs to uid %d, want %d", p, got, uid)
		}
	}
}

// TestHostWritesBeforeKernelBelongToKernelUser: in a root that already
// belongs to a user (so the kernel runs as that user and the tree is not
// handed over at its start), what the host wrote before the first kernel
// started (write() and append() from a JavaScript cell) is given to the
// kernel's user when the kernel starts, so the kernel edits it in place.
// It stayed root's, and the kernel could not open it for writing.
func TestHostWritesBeforeKernelBelongToKernelUser(t *testing.T) {
	requireRoot(t)
	root, s := nobodySession(t)
	evalJSOK(t, s, "await write('early.txt', 'x'); await write('sub/dir/early2.txt', 'y'); await append('logs/early.log', 'z')")
	wantOwned(t, root, 0, "early.txt") // before any kernel: the host's
	if uid := kernelUID(t, s); uid != nobody {
		t.Fatalf("the kernel runs as uid %d, want the root's owner %d", uid, nobody)
	}
	wantOwned(t, root, nobody, "early.txt", "sub", "sub/dir", "sub/dir/early2.txt", "logs", "logs/early.log")
	text := evalOK(t, s, "open('early.txt', 'a').write('1')\nopen('sub/dir/early2.txt', 'a').write('2')\nopen('logs/early.log', 'a').write('3')\n"+
		"open('sub/dir/new.txt', 'w').write('4')\nprint(read('early.txt') + read('sub/dir/early2.txt') + read('logs/early.log') + read('sub/dir/new.txt'))")
	if !strings.Contains(text, "x1y2z34") {
		t.Errorf("after appending in the kernel: %q, want x1y2z34", text)
	}
}

// TestJavaScriptFilesBelongToKernelUser: files and folders that
// JavaScript's fs module creates in the root (through the guest's own
// filesystem, not write()) are given to the kernel's user: those made
// before the first kernel started when it starts, those made after at
// once, so the kernel edits them in place. They stayed root's, and the
// kernel could not open them for writing.
func TestJavaScriptFilesBelongToKernelUser(t *testing.T) {
	requireRoot(t)
	root, s := nobodySession(t)
	evalJSOK(t, s, "const fs = require('fs'); fs.writeFileSync('early.txt', 'x'); fs.mkdirSync('ed/sub', {recursive: true}); "+
		"fs.writeFileSync('ed/sub/f.txt', 'y')")
	wantOwned(t, root, 0, "early.txt") // before any kernel: the host's
	if uid := kernelUID(t, s); uid != nobody {
		t.Fatalf("the kernel runs as uid %d, want the root's owner %d", uid, nobody)
	}
	evalJSOK(t, s, "const fs = require('fs'); fs.writeFileSync('late.txt', 'z'); fs.mkdirSync('ld'); "+
		"const fd = fs.openSync('ld/g.txt', 'w'); fs.writeSync(fd, 'w'); fs.closeSync(fd)")
	wantOwned(t, root, nobody, "early.txt", "ed", "ed/sub", "ed/sub/f.txt", "late.txt", "ld", "ld/g.txt")
	text := evalOK(t, s, "open('early.txt', 'a').write('1')\nopen('ed/sub/f.txt', 'a').write('2')\nopen('late.txt', 'a').write('3')\n"+
		"open('ld/g.txt', 'a').write('4')\nopen('ld/new.txt', 'w').write('5')\n"+
		"print(read('early.txt') + read('ed/sub/f.txt') + read('late.txt') + read('ld/g.txt') + read('ld/new.txt'))")
	if !strings.Contains(text, "x1y2z3w45") {
		t.Errorf("after appending in the kernel: %q, want x1y2z3w45", text)
	}
}
