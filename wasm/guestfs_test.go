package wasm_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wasmeval/wasmeval/wasm"
)

const (
	gfsZipPath = "/usr/local/lib/python311.zip"
	gfsZipData = "zipdata"
	gfsOptPath = "/opt/tool/readme.txt"
)

// guestFSFixture is a session root with hostile and friendly content around it:
//
//	base/outside/secret.txt   a host file the guest must never see
//	base/root2/x.txt          a sibling whose name extends the root's
//	base/root/                the session root
type guestFSFixture struct {
	base, root, outside string
	fs                  *wasm.GuestFS
}

// rel turns a guest absolute path into what wazero passes a FS mounted at "/".
func gfsRel(p string) string {
	return strings.TrimPrefix(p, "/")
}

// r is the wazero-style path of name inside the session root.
func (fx *guestFSFixture) r(name string) string {
	if name == "" {
		return gfsRel(fx.root)
	}
	return gfsRel(fx.root) + "/" + name
}

func newGuestFSFixture(t *testing.T) *guestFSFixture {
	t.Helper()
	base := t.TempDir()
	fx := &guestFSFixture{
		base:    base,
		root:    filepath.Join(base, "root"),
		outside: filepath.Join(base, "outside"),
	}
	write := func(name, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	symlink := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(fx.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(fx.outside, "secret.txt"), "secret")
	write(filepath.Join(base, "root2", "x.txt"), "sibling")
	write(filepath.Join(fx.root, "hello.txt"), "hello")
	write(filepath.Join(fx.root, "sub", "inner.txt"), "inner")
	symlink("/etc/passwd", "evil_abs")
	symlink("../outside/secret.txt", "evil_rel")
	symlink("../outside", "evil_dir")
	symlink(fx.outside, "evil_absdir")
	symlink("..", "evil_up")
	symlink("../../../../../../../../../../etc/passwd", "evil_deep")
	symlink("loop2", "loop1")
	symlink("loop1", "loop2")
	symlink("sub/inner.txt", "good_rel")
	symlink(filepath.Join(fx.root, "hello.txt"), "good_abs")
	symlink("sub", "good_dir")
	symlink("../root/hello.txt", "good_roundtrip")
	symlink(gfsZipPath, "to_zip")
	symlink("created.txt", "dangling")

	g, err := wasm.NewGuestFS(fx.root, map[string][]byte{
		gfsZipPath: []byte(gfsZipData),
		gfsOptPath: []byte("opt"),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	fx.fs = g
	return fx
}

func gfsReadAll(t *testing.T, f experimentalsys.File) string {
	t.Helper()
	var buf bytes.Buffer
	chunk := make([]byte, 3) // small, to exercise repeated reads
	for {
		n, errno := f.Read(chunk)
		if errno != 0 {
			t.Fatalf("read: %v", errno)
		}
		if n == 0 {
			return buf.String()
		}
		buf.Write(chunk[:n])
	}
}

func TestGuestFSOpen(t *testing.T) {
	fx := newGuestFSFixture(t)
	sock := filepath.Join(fx.root, "sock")
	if l, err := net.Listen("unix", sock); err == nil {
		t.Cleanup(func() { l.Close() })
	} else {
		t.Logf("no unix socket: %v", err)
		sock = ""
	}
	home, _ := os.UserHomeDir()

	tests := []struct {
		name      string
		path      string
		flag      experimentalsys.Oflag
		wantErrno experimentalsys.Errno
		wantData  string
		skip      bool
	}{
		// Escapes.
		{name: "etc passwd", path: "etc/passwd", wantErrno: experimentalsys.ENOENT},
		{name: "etc passwd with leading slash", path: "/etc/passwd", wantErrno: experimentalsys.ENOENT},
		{name: "proc self environ", path: "proc/self/environ", wantErrno: experimentalsys.ENOENT},
		{name: "proc", path: "proc", wantErrno: experimentalsys.ENOENT},
		{name: "dev null", path: "dev/null", wantErrno: experimentalsys.ENOENT},
		{name: "host home", path: gfsRel(home) + "/.profile", wantErrno: experimentalsys.ENOENT,
			skip: home == "" || strings.HasPrefix(fx.base, home)},
		{name: "leading dotdot", path: "../../../etc/passwd", wantErrno: experimentalsys.ENOENT},
		{name: "dotdot chain from root", path: fx.r("../../../../../../../../../etc/passwd"), wantErrno: experimentalsys.ENOENT},
		{name: "dotdot to sibling", path: fx.r("../outside/secret.txt"), wantErrno: experimentalsys.ENOENT},
		{name: "sibling absolute", path: gfsRel(fx.outside) + "/secret.txt", wantErrno: experimentalsys.ENOENT},
		{name: "sibling sharing the root's prefix", path: gfsRel(fx.base) + "/root2/x.txt", wantErrno: experimentalsys.ENOENT},
		{name: "symlink absolute to etc passwd", path: fx.r("evil_abs"), wantErrno: experimentalsys.ENOENT},
		{name: "symlink relative outside", path: fx.r("evil_rel"), wantErrno: experimentalsys.ENOENT},
		{name: "symlink deep dotdot", path: fx.r("evil_deep"), wantErrno: experimentalsys.ENOENT},
		{name: "file under symlinked outside dir", path: fx.r("evil_dir/secret.txt"), wantErrno: experimentalsys.ENOENT},
		{name: "file under absolute symlinked outside dir", path: fx.r("evil_absdir/secret.txt"), wantErrno: experimentalsys.ENOENT},
		{name: "symlink to parent then sibling", path: fx.r("evil_up/outside/secret.txt"), wantErrno: experimentalsys.ENOENT},
		{name: "symlink to parent then prefix sibling", path: fx.r("evil_up/root2/x.txt"), wantErrno: experimentalsys.ENOENT},
		{name: "symlink loop", path: fx.r("loop1"), wantErrno: experimentalsys.ELOOP},
		{name: "nofollow on symlink", path: fx.r("good_rel"), flag: experimentalsys.O_NOFOLLOW, wantErrno: experimentalsys.ELOOP},
		{name: "directory flag on file", path: fx.r("hello.txt"), flag: experimentalsys.O_DIRECTORY, wantErrno: experimentalsys.ENOTDIR},
		{name: "file as directory", path: fx.r("hello.txt/x"), wantErrno: experimentalsys.ENOTDIR},
		{name: "trailing slash on file", path: fx.r("hello.txt/"), wantErrno: experimentalsys.ENOTDIR},
		{name: "socket", path: fx.r("sock"), wantErrno: experimentalsys.EACCES, skip: sock == ""},
		{name: "missing", path: fx.r("missing.txt"), wantErrno: experimentalsys.ENOENT},
		{name: "too long", path: fx.r(strings.Repeat("sub/..//", 512) + "hello.txt"), wantErrno: experimentalsys.ENAMETOOLONG},
		{name: "long but not too long", path: fx.r(strings.Repeat("sub/../", 500) + "hello.txt"), wantData: "hello"},
		{name: "create next to root", path: gfsRel(fx.base) + "/new.txt", flag: experimentalsys.O_CREAT | experimentalsys.O_RDWR, wantErrno: experimentalsys.EROFS},
		{name: "create in missing outside dir", path: "etc/new.txt", flag: experimentalsys.O_CREAT | experimentalsys.O_RDWR, wantErrno: experimentalsys.ENOENT},
		{name: "create through symlink outside", path: fx.r("evil_dir/new.txt"), flag: experimentalsys.O_CREAT | experimentalsys.O_RDWR, wantErrno: experimentalsys.ENOENT},
		{name: "write root dir", path: fx.r(""), flag: experimentalsys.O_RDWR, wantErrno: experimentalsys.EISDIR},

		// The read-only file.
		{name: "zip", path: gfsRel(gfsZipPath), wantData: gfsZipData},
		{name: "zip write", path: gfsRel(gfsZipPath), flag: experimentalsys.O_WRONLY, wantErrno: experimentalsys.EROFS},
		{name: "zip read write", path: gfsRel(gfsZipPath), flag: experimentalsys.O_RDWR, wantErrno: experimentalsys.EROFS},
		{name: "zip truncate", path: gfsRel(gfsZipPath), flag: experimentalsys.O_TRUNC, wantErrno: experimentalsys.EROFS},
		{name: "zip append", path: gfsRel(gfsZipPath), flag: experimentalsys.O_APPEND, wantErrno: experimentalsys.EROFS},
		{name: "zip create", path: gfsRel(gfsZipPath), flag: experimentalsys.O_CREAT | experimentalsys.O_RDWR, wantErrno: experimentalsys.EROFS},
		{name: "zip create exclusive", path: gfsRel(gfsZipPath), flag: experimentalsys.O_CREAT | experimentalsys.O_EXCL | experimentalsys.O_RDWR, wantErrno: experimentalsys.EEXIST},
		{name: "zip as directory", path: gfsRel(gfsZipPath), flag: experimentalsys.O_DIRECTORY, wantErrno: experimentalsys.ENOTDIR},
		{name: "synthetic dir write", path: "usr/local", flag: experimentalsys.O_WRONLY, wantErrno: experimentalsys.EISDIR},
		{name: "create in synthetic dir", path: "usr/local/lib/new.txt", flag: experimentalsys.O_CREAT | experimentalsys.O_WRONLY, wantErrno: experimentalsys.EROFS},
		{name: "create at slash", path: "new.txt", flag: experimentalsys.O_CREAT | experimentalsys.O_WRONLY, wantErrno: experimentalsys.EROFS},

		// Symlinks that stay inside, and paths that wander and come back.
		{name: "plain", path: fx.r("hello.txt"), wantData: "hello"},
		{name: "leading slash", path: "/" + fx.r("hello.txt"), wantData: "hello"},
		{name: "dot components", path: "./" + fx.r("./sub/./inner.txt"), wantData: "inner"},
		{name: "dotdot inside root", path: fx.r("sub/../hello.txt"), wantData: "hello"},
		{name: "dotdot out of the root and back", path: fx.r("../root/hello.txt"), wantData: "hello"},
		{name: "dotdot above slash and back", path: "../../" + fx.r("hello.txt"), wantData: "hello"},
		{name: "symlink relative inside", path: fx.r("good_rel"), wantData: "inner"},
		{name: "symlink absolute inside", path: fx.r("good_abs"), wantData: "hello"},
		{name: "symlink through the parent and back", path: fx.r("good_roundtrip"), wantData: "hello"},
		{name: "symlink to in-memory file", path: fx.r("to_zip"), wantData: gfsZipData},
		{name: "symlinked dir", path: fx.r("good_dir/inner.txt"), wantData: "inner"},
		{name: "symlink to parent then back", path: fx.r("evil_up/root/hello.txt"), wantData: "hello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip {
				t.Skip("not applicable here")
			}
			f, errno := fx.fs.OpenFile(tt.path, tt.flag, 0o644)
			if errno != tt.wantErrno {
				if f != nil {
					f.Close()
				}
				t.Fatalf("OpenFile(%q, %#x) = %v, want %v", tt.path, tt.flag, errno, tt.wantErrno)
			}
			if errno != 0 {
				return
			}
			defer f.Close()
			if tt.wantData != "" {
				if got := gfsReadAll(t, f); got != tt.wantData {
					t.Errorf("read %q, want %q", got, tt.wantData)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(fx.base, "new.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a file appeared next to the root: %v", err)
	}
}

func TestGuestFSMutations(t *testing.T) {
	fx := newGuestFSFixture(t)
	zip := gfsRel(gfsZipPath)
	type (
		gfs   = *wasm.GuestFS
		errno = experimentalsys.Errno
	)
	tests := []struct {
		name string
		op   func(g gfs) errno
		want errno
	}{
		{"mkdir at slash", func(g gfs) errno { return g.Mkdir("etc", 0o755) }, experimentalsys.EROFS},
		{"mkdir next to root", func(g gfs) errno { return g.Mkdir(gfsRel(fx.base)+"/x", 0o755) }, experimentalsys.EROFS},
		{"mkdir synthetic", func(g gfs) errno { return g.Mkdir("usr", 0o755) }, experimentalsys.EEXIST},
		{"mkdir root", func(g gfs) errno { return g.Mkdir(fx.r(""), 0o755) }, experimentalsys.EEXIST},
		{"mkdir through outside symlink", func(g gfs) errno { return g.Mkdir(fx.r("evil_dir/x"), 0o755) }, experimentalsys.ENOENT},
		{"mkdir over dangling symlink", func(g gfs) errno { return g.Mkdir(fx.r("evil_abs"), 0o755) }, experimentalsys.EEXIST},
		{"unlink zip", func(g gfs) errno { return g.Unlink(zip) }, experimentalsys.EROFS},
		{"unlink synthetic dir", func(g gfs) errno { return g.Unlink("usr") }, experimentalsys.EISDIR},
		{"unlink root", func(g gfs) errno { return g.Unlink(fx.r("")) }, experimentalsys.EISDIR},
		{"unlink etc passwd", func(g gfs) errno { return g.Unlink("etc/passwd") }, experimentalsys.ENOENT},
		{"unlink through outside symlink", func(g gfs) errno { return g.Unlink(fx.r("evil_dir/secret.txt")) }, experimentalsys.ENOENT},
		{"rmdir synthetic", func(g gfs) errno { return g.Rmdir("usr/local/lib") }, experimentalsys.EROFS},
		{"rmdir zip", func(g gfs) errno { return g.Rmdir(zip) }, experimentalsys.ENOTDIR},
		{"rmdir root", func(g gfs) errno { return g.Rmdir(fx.r("")) }, experimentalsys.EROFS},
		{"rmdir outside via symlink", func(g gfs) errno { return g.Rmdir(fx.r("evil_dir/")) }, experimentalsys.ENOENT},
		{"rename zip into root", func(g gfs) errno { return g.Rename(zip, fx.r("zip")) }, experimentalsys.EROFS},
		{"rename out to slash", func(g gfs) errno { return g.Rename(fx.r("hello.txt"), "hello.txt") }, experimentalsys.EROFS},
		{"rename out next to root", func(g gfs) errno { return g.Rename(fx.r("hello.txt"), gfsRel(fx.base)+"/hello.txt") }, experimentalsys.EROFS},
		{"rename out to sibling", func(g gfs) errno { return g.Rename(fx.r("hello.txt"), gfsRel(fx.outside)+"/x") }, experimentalsys.ENOENT},
		{"rename out by dotdot", func(g gfs) errno { return g.Rename(fx.r("hello.txt"), fx.r("../x")) }, experimentalsys.EROFS},
		{"rename out through symlink", func(g gfs) errno { return g.Rename(fx.r("hello.txt"), fx.r("evil_dir/x")) }, experimentalsys.ENOENT},
		{"rename over zip", func(g gfs) errno { return g.Rename(fx.r("hello.txt"), zip) }, experimentalsys.EROFS},
		{"rename root", func(g gfs) errno { return g.Rename(fx.r(""), fx.r("x")) }, experimentalsys.EROFS},
		{"rename outside file in", func(g gfs) errno { return g.Rename(gfsRel(fx.outside)+"/secret.txt", fx.r("s")) }, experimentalsys.ENOENT},
		{"chmod zip", func(g gfs) errno { return g.Chmod(zip, 0o777) }, experimentalsys.EROFS},
		{"chmod etc passwd", func(g gfs) errno { return g.Chmod("etc/passwd", 0o777) }, experimentalsys.ENOENT},
		{"chmod via outside symlink", func(g gfs) errno { return g.Chmod(fx.r("evil_rel"), 0o777) }, experimentalsys.ENOENT},
		{"utimens zip", func(g gfs) errno { return g.Utimens(zip, 0, 0) }, experimentalsys.EROFS},
		{"utimens synthetic", func(g gfs) errno { return g.Utimens("usr", 0, 0) }, experimentalsys.EROFS},
		{"utimens via outside symlink", func(g gfs) errno { return g.Utimens(fx.r("evil_abs"), 0, 0) }, experimentalsys.ENOENT},
		{"link outside file", func(g gfs) errno { return g.Link(gfsRel(fx.outside)+"/secret.txt", fx.r("hl")) }, experimentalsys.ENOENT},
		{"link etc passwd", func(g gfs) errno { return g.Link("etc/passwd", fx.r("hl")) }, experimentalsys.ENOENT},
		{"link via outside symlink dir", func(g gfs) errno { return g.Link(fx.r("evil_dir/secret.txt"), fx.r("hl")) }, experimentalsys.ENOENT},
		{"link zip", func(g gfs) errno { return g.Link(zip, fx.r("hl")) }, experimentalsys.EPERM},
		{"link to slash", func(g gfs) errno { return g.Link(fx.r("hello.txt"), "hl") }, experimentalsys.EROFS},
		{"link dir", func(g gfs) errno { return g.Link(fx.r("sub"), fx.r("hl")) }, experimentalsys.EPERM},
		{"link onto existing", func(g gfs) errno { return g.Link(fx.r("hello.txt"), fx.r("good_rel")) }, experimentalsys.EEXIST},
		{"symlink absolute target", func(g gfs) errno { return g.Symlink("/etc/passwd", fx.r("s")) }, experimentalsys.EPERM},
		{"symlink absolute target inside, stored relative", func(g gfs) errno { return g.Symlink(fx.root+"/hello.txt", fx.r("s_abs")) }, 0},
		{"symlink absolute target beside the link", func(g gfs) errno { return g.Symlink(fx.root+"/hello.txt", fx.r("sub/s")) }, experimentalsys.EPERM},
		{"symlink up and in again", func(g gfs) errno { return g.Symlink("../hello.txt", fx.r("sub/s")) }, experimentalsys.EPERM},
		{"symlink to dot", func(g gfs) errno { return g.Symlink(".", fx.r("s")) }, experimentalsys.EPERM},
		{"symlink dotdot out", func(g gfs) errno { return g.Symlink("../outside/secret.txt", fx.r("s")) }, experimentalsys.EPERM},
		{"symlink deep dotdot", func(g gfs) errno { return g.Symlink("../../../../../../../etc/passwd", fx.r("sub/s")) }, experimentalsys.EPERM},
		{"symlink to the root's parent", func(g gfs) errno { return g.Symlink("..", fx.r("s")) }, experimentalsys.EPERM},
		{"symlink at slash", func(g gfs) errno { return g.Symlink("x", "s") }, experimentalsys.EROFS},
		{"symlink over existing", func(g gfs) errno { return g.Symlink("x", fx.r("hello.txt")) }, experimentalsys.EEXIST},
		{"symlink empty target", func(g gfs) errno { return g.Symlink("", fx.r("s")) }, experimentalsys.ENOENT},
		{"readlink zip", func(g gfs) errno { _, e := g.Readlink(zip); return e }, experimentalsys.EINVAL},
		{"readlink file", func(g gfs) errno { _, e := g.Readlink(fx.r("hello.txt")); return e }, experimentalsys.EINVAL},
		{"readlink missing", func(g gfs) errno { _, e := g.Readlink("etc/passwd"); return e }, experimentalsys.ENOENT},
		{"stat etc", func(g gfs) errno { _, e := g.Stat("etc"); return e }, experimentalsys.ENOENT},
		{"stat via outside symlink", func(g gfs) errno { _, e := g.Stat(fx.r("evil_abs")); return e }, experimentalsys.ENOENT},
		{"lstat outside symlink itself", func(g gfs) errno { _, e := g.Lstat(fx.r("evil_abs")); return e }, 0},
		{"stat loop", func(g gfs) errno { _, e := g.Stat(fx.r("loop1")); return e }, experimentalsys.ELOOP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.op(fx.fs); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}

	// Nothing outside the root changed.
	for _, name := range []string{"outside/secret.txt", "root2/x.txt"} {
		if _, err := os.Stat(filepath.Join(fx.base, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if entries, _ := os.ReadDir(fx.base); len(entries) != 3 {
		t.Errorf("entries next to the root: %v", entries)
	}
	if entries, _ := os.ReadDir(fx.outside); len(entries) != 1 {
		t.Errorf("entries in outside: %v", entries)
	}
}

func TestGuestFSHardLinkOfSymlink(t *testing.T) {
	// A link the host planted that points up or out may not get another
	// name: moved up the tree, it would lead host tools further out.
	fx := newGuestFSFixture(t)
	for _, name := range []string{"evil_abs", "evil_rel", "evil_up", "good_abs", "good_roundtrip"} {
		if errno := fx.fs.Link(fx.r(name), fx.r("hl")); errno != experimentalsys.EPERM {
			t.Errorf("Link(%s) = %v, want EPERM", name, errno)
		}
		if errno := fx.fs.Rename(fx.r(name), fx.r("sub/moved")); errno != experimentalsys.EPERM {
			t.Errorf("Rename(%s) = %v, want EPERM", name, errno)
		}
	}
	// One that points down may; following the copy stays confined.
	if errno := fx.fs.Link(fx.r("good_rel"), fx.r("hl")); errno != 0 {
		t.Fatalf("Link(good_rel): %v", errno)
	}
	if target, errno := fx.fs.Readlink(fx.r("hl")); target != "sub/inner.txt" || errno != 0 {
		t.Errorf("Readlink(hl) = %q, %v", target, errno)
	}
	if errno := fx.fs.Rename(fx.r("good_dir"), fx.r("sub/good_dir")); errno != 0 {
		t.Fatalf("Rename(good_dir): %v", errno)
	}
	// The planted ones can still be removed.
	if errno := fx.fs.Unlink(fx.r("evil_up")); errno != 0 {
		t.Errorf("Unlink(evil_up) = %v", errno)
	}
}

func TestGuestFSSymlinkByGuest(t *testing.T) {
	fx := newGuestFSFixture(t)
	tests := []struct {
		name, target, link, want string
	}{
		{name: "sibling", target: "hello.txt", link: "l1", want: "hello"},
		{name: "into subdir", target: "sub/inner.txt", link: "l2", want: "inner"},
		{name: "from a subdir", target: "inner.txt", link: "sub/l3", want: "inner"},
		{name: "via another symlink", target: "good_dir/inner.txt", link: "l4", want: "inner"},
		{name: "dangling, then created", target: "later.txt", link: "l5", want: "later"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if errno := fx.fs.Symlink(tt.target, fx.r(tt.link)); errno != 0 {
				t.Fatalf("Symlink: %v", errno)
			}
			if got, errno := fx.fs.Readlink(fx.r(tt.link)); got != tt.target || errno != 0 {
				t.Errorf("Readlink = %q, %v", got, errno)
			}
			st, errno := fx.fs.Lstat(fx.r(tt.link))
			if errno != 0 || st.Mode&fs.ModeSymlink == 0 {
				t.Errorf("Lstat = %v, %v", st.Mode, errno)
			}
			flag := experimentalsys.O_RDONLY
			if tt.target == "later.txt" {
				flag = experimentalsys.O_CREAT | experimentalsys.O_RDWR // creates the target
			}
			f, errno := fx.fs.OpenFile(fx.r(tt.link), flag, 0o644)
			if errno != 0 {
				t.Fatalf("OpenFile: %v", errno)
			}
			defer f.Close()
			if flag != experimentalsys.O_RDONLY {
				if _, errno := f.Write([]byte("later")); errno != 0 {
					t.Fatal(errno)
				}
				f.Seek(0, io.SeekStart)
			}
			if got := gfsReadAll(t, f); got != tt.want {
				t.Errorf("read %q, want %q", got, tt.want)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(fx.root, "later.txt")); string(b) != "later" {
		t.Errorf("later.txt = %q, %v", b, err)
	}
}

func TestGuestFSSyntheticDirs(t *testing.T) {
	fx := newGuestFSFixture(t)
	first, _, _ := strings.Cut(gfsRel(fx.root), "/")
	rootInfo, err := os.Stat(fx.root)
	if err != nil {
		t.Fatal(err)
	}
	rootIno := sys.NewStat_t(rootInfo).Ino

	tests := []struct {
		name string
		path string
		want []string // names, with "/" after directories
	}{
		{"slash", ".", gfsSorted("opt/", first+"/", "usr/")},
		{"slash with slash", "/", gfsSorted("opt/", first+"/", "usr/")},
		{"usr", "usr", []string{"local/"}},
		{"zip dir", "usr/local/lib", []string{"python311.zip"}},
		{"opt tool", "opt/tool", []string{"readme.txt"}},
		{"root parent", gfsRel(fx.base), []string{"root/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, errno := fx.fs.OpenFile(tt.path, experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
			if errno != 0 {
				t.Fatalf("OpenFile: %v", errno)
			}
			defer f.Close()
			if isDir, _ := f.IsDir(); !isDir {
				t.Error("IsDir = false")
			}
			st, errno := f.Stat()
			if errno != 0 || st.Mode != fs.ModeDir|0o555 || st.Ino == 0 {
				t.Errorf("Stat = %+v, %v", st, errno)
			}
			if st2, _ := fx.fs.Stat(tt.path); st2 != st {
				t.Errorf("FS.Stat = %+v, File.Stat = %+v", st2, st)
			}
			got := gfsReaddirNames(t, f, 1)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Readdir = %v, want %v", got, tt.want)
			}
			if n, errno := f.Seek(0, io.SeekStart); n != 0 || errno != 0 {
				t.Fatalf("Seek = %d, %v", n, errno)
			}
			if again := gfsReaddirNames(t, f, 0); !slices.Equal(again, got) {
				t.Errorf("Readdir after rewind = %v, want %v", again, got)
			}
			if _, errno := f.Read(make([]byte, 1)); errno != experimentalsys.EISDIR {
				t.Errorf("Read = %v, want EISDIR", errno)
			}
		})
	}

	t.Run("root entry inode", func(t *testing.T) {
		f, errno := fx.fs.OpenFile(gfsRel(fx.base), experimentalsys.O_RDONLY, 0)
		if errno != 0 {
			t.Fatal(errno)
		}
		defer f.Close()
		dirents, errno := f.Readdir(-1)
		if errno != 0 || len(dirents) != 1 || dirents[0].Ino != rootIno || dirents[0].Type != fs.ModeDir {
			t.Errorf("Readdir = %v, %v; want root with inode %d", dirents, errno, rootIno)
		}
	})
	t.Run("zip stat", func(t *testing.T) {
		st, errno := fx.fs.Stat(gfsRel(gfsZipPath))
		if errno != 0 || st.Mode != 0o444 || st.Size != int64(len(gfsZipData)) || st.Nlink != 1 || st.Ino == 0 {
			t.Errorf("Stat = %+v, %v", st, errno)
		}
		f, errno := fx.fs.OpenFile(gfsRel(gfsZipPath), experimentalsys.O_RDONLY, 0)
		if errno != 0 {
			t.Fatal(errno)
		}
		defer f.Close()
		if fst, _ := f.Stat(); fst != st {
			t.Errorf("File.Stat = %+v, want %+v", fst, st)
		}
		buf := make([]byte, 3)
		if n, errno := f.Pread(buf, 4); n != 3 || errno != 0 || string(buf) != "ata" {
			t.Errorf("Pread = %d %q %v", n, buf[:n], errno)
		}
		if pos, errno := f.Seek(-3, io.SeekEnd); pos != 4 || errno != 0 {
			t.Errorf("Seek = %d, %v", pos, errno)
		}
		if n, _ := f.Read(buf); string(buf[:n]) != "ata" {
			t.Errorf("Read after Seek = %q", buf[:n])
		}
		if n, errno := f.Read(buf); n != 0 || errno != 0 {
			t.Errorf("Read at EOF = %d, %v", n, errno)
		}
		for name, errno := range map[string]experimentalsys.Errno{
			"Write":    gfsErrno(f.Write([]byte("x"))),
			"Pwrite":   gfsErrno(f.Pwrite([]byte("x"), 0)),
			"Truncate": f.Truncate(0),
			"Utimens":  f.Utimens(0, 0),
			"Readdir":  gfsErrno(f.Readdir(-1)),
		} {
			if errno == 0 {
				t.Errorf("%s on the read-only file succeeded", name)
			}
		}
	})
}

func gfsErrno[T any](_ T, errno experimentalsys.Errno) experimentalsys.Errno { return errno }

func gfsSorted(names ...string) []string {
	slices.Sort(names)
	return slices.Compact(names)
}

// gfsReaddirNames reads f's entries n at a time (all at once when n <= 0).
func gfsReaddirNames(t *testing.T, f experimentalsys.File, n int) []string {
	t.Helper()
	var names []string
	for {
		dirents, errno := f.Readdir(n)
		if errno != 0 {
			t.Fatalf("Readdir: %v", errno)
		}
		for _, d := range dirents {
			name := d.Name
			if d.IsDir() {
				name += "/"
			}
			names = append(names, name)
		}
		if n <= 0 || len(dirents) < n {
			return names
		}
	}
}

func TestGuestFSReadWrite(t *testing.T) {
	fx := newGuestFSFixture(t)
	g := fx.fs
	must := func(what string, errno experimentalsys.Errno) {
		t.Helper()
		if errno != 0 {
			t.Fatalf("%s: %v", what, errno)
		}
	}
	hostRead := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(fx.root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	f, errno := g.OpenFile(fx.r("data.txt"), experimentalsys.O_CREAT|experimentalsys.O_EXCL|experimentalsys.O_RDWR, 0o644)
	must("create", errno)
	n, errno := f.Write([]byte("hello world"))
	must("write", errno)
	if n != 11 {
		t.Fatalf("wrote %d", n)
	}
	pos, errno := f.Seek(0, io.SeekStart)
	must("seek", errno)
	if pos != 0 {
		t.Fatalf("seek = %d", pos)
	}
	if got := gfsReadAll(t, f); got != "hello world" {
		t.Errorf("read %q", got)
	}
	buf := make([]byte, 5)
	_, errno = f.Pread(buf, 6)
	must("pread", errno)
	if string(buf) != "world" {
		t.Errorf("pread %q", buf)
	}
	_, errno = f.Pwrite([]byte("HELLO"), 0)
	must("pwrite", errno)
	if pos, _ := f.Seek(0, io.SeekCurrent); pos != 11 {
		t.Errorf("pwrite moved the offset to %d", pos)
	}
	must("truncate", f.Truncate(7))
	st, errno := f.Stat()
	must("stat", errno)
	if st.Size != 7 || !st.Mode.IsRegular() || st.Mode.Perm()&0o600 != 0o600 {
		t.Errorf("stat = %+v", st)
	}
	if _, errno := f.Seek(0, 3); errno != experimentalsys.EINVAL {
		t.Errorf("seek whence 3 = %v", errno)
	}
	if errno := f.Truncate(-1); errno != experimentalsys.EINVAL {
		t.Errorf("truncate -1 = %v", errno)
	}
	must("sync", f.Sync())
	must("datasync", f.Datasync())
	must("close", f.Close())
	must("close again", f.Close())
	if got := hostRead("data.txt"); got != "HELLO w" {
		t.Errorf("host sees %q", got)
	}

	// Append mode, from open and toggled.
	f, errno = g.OpenFile(fx.r("data.txt"), experimentalsys.O_WRONLY|experimentalsys.O_APPEND, 0)
	must("open append", errno)
	if !f.IsAppend() {
		t.Error("IsAppend = false")
	}
	_, errno = f.Write([]byte("!!"))
	must("append", errno)
	_, errno = f.Pwrite([]byte("?"), 0) // appends, like Linux
	must("pwrite append", errno)
	must("set append off", f.SetAppend(false))
	_, errno = f.Seek(0, io.SeekStart)
	must("seek", errno)
	_, errno = f.Write([]byte("h"))
	must("overwrite", errno)
	must("set append on", f.SetAppend(true))
	_, errno = f.Write([]byte("$"))
	must("append again", errno)
	must("close", f.Close())
	if got := hostRead("data.txt"); got != "hELLO w!!?$" {
		t.Errorf("host sees %q", got)
	}

	// O_TRUNC, O_EXCL, O_DIRECTORY.
	f, errno = g.OpenFile(fx.r("data.txt"), experimentalsys.O_WRONLY|experimentalsys.O_TRUNC, 0)
	must("open trunc", errno)
	f.Close()
	if got := hostRead("data.txt"); got != "" {
		t.Errorf("after O_TRUNC %q", got)
	}
	if _, errno := g.OpenFile(fx.r("data.txt"), experimentalsys.O_CREAT|experimentalsys.O_EXCL|experimentalsys.O_RDWR, 0o644); errno != experimentalsys.EEXIST {
		t.Errorf("O_EXCL on a file = %v", errno)
	}
	if _, errno := g.OpenFile(fx.r("dangling"), experimentalsys.O_CREAT|experimentalsys.O_EXCL|experimentalsys.O_RDWR, 0o644); errno != experimentalsys.EEXIST {
		t.Errorf("O_EXCL on a dangling symlink = %v", errno)
	}
	f, errno = g.OpenFile(fx.r("dangling"), experimentalsys.O_CREAT|experimentalsys.O_WRONLY, 0o644)
	must("create through a dangling symlink", errno)
	f.Close()
	if _, err := os.Stat(filepath.Join(fx.root, "created.txt")); err != nil {
		t.Errorf("symlink target not created: %v", err)
	}

	// Directories.
	must("mkdir", g.Mkdir(fx.r("d"), 0o755))
	must("mkdir trailing slash", g.Mkdir(fx.r("d/e/"), 0o755))
	if errno := g.Mkdir(fx.r("d"), 0o755); errno != experimentalsys.EEXIST {
		t.Errorf("mkdir existing = %v", errno)
	}
	if errno := g.Mkdir(fx.r("missing/x"), 0o755); errno != experimentalsys.ENOENT {
		t.Errorf("mkdir in missing dir = %v", errno)
	}
	must("rename", g.Rename(fx.r("data.txt"), fx.r("d/data.txt")))
	dir, errno := g.OpenFile(fx.r("d"), experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
	must("open dir", errno)
	defer dir.Close()
	if got := gfsReaddirNames(t, dir, 1); !slices.Equal(got, []string{"data.txt", "e/"}) && !slices.Equal(got, []string{"e/", "data.txt"}) {
		t.Errorf("readdir d = %v", got)
	}
	writeHost := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(fx.root, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeHost("d/late.txt")
	_, errno = dir.Seek(0, io.SeekStart)
	must("rewind dir", errno)
	got := gfsReaddirNames(t, dir, 0)
	slices.Sort(got)
	if !slices.Equal(got, []string{"data.txt", "e/", "late.txt"}) {
		t.Errorf("readdir d after rewind = %v", got)
	}
	if _, errno := dir.Write([]byte("x")); errno == 0 {
		t.Error("write on a directory succeeded")
	}
	if errno := dir.Truncate(0); errno != experimentalsys.EISDIR {
		t.Errorf("truncate dir = %v", errno)
	}
	if errno := g.Rmdir(fx.r("d")); errno != experimentalsys.ENOTEMPTY {
		t.Errorf("rmdir non-empty = %v", errno)
	}
	if errno := g.Unlink(fx.r("d")); errno != experimentalsys.EISDIR {
		t.Errorf("unlink dir = %v", errno)
	}
	if errno := g.Rmdir(fx.r("d/data.txt")); errno != experimentalsys.ENOTDIR {
		t.Errorf("rmdir file = %v", errno)
	}
	must("unlink", g.Unlink(fx.r("d/data.txt")))
	must("unlink late", g.Unlink(fx.r("d/late.txt")))
	must("rmdir e", g.Rmdir(fx.r("d/e")))
	must("rmdir d", g.Rmdir(fx.r("d")))
	if _, err := os.Stat(filepath.Join(fx.root, "d")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("d still there: %v", err)
	}
	if errno := g.Unlink(fx.r("d")); errno != experimentalsys.ENOENT {
		t.Errorf("unlink missing = %v", errno)
	}

	// Unlink removes a symlink, not its target.
	must("unlink symlink", g.Unlink(fx.r("good_rel")))
	if hostRead("sub/inner.txt") != "inner" {
		t.Error("target changed")
	}

	// Stat, Lstat and inodes agree with the host and with Readdir.
	st, errno = g.Stat(fx.r("good_abs"))
	must("stat", errno)
	hostInfo, err := os.Stat(filepath.Join(fx.root, "hello.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if want := sys.NewStat_t(hostInfo); st != want {
		t.Errorf("stat via symlink = %+v, want %+v", st, want)
	}
	lst, errno := g.Lstat(fx.r("good_abs"))
	must("lstat", errno)
	if lst.Mode&fs.ModeSymlink == 0 || lst.Ino == st.Ino {
		t.Errorf("lstat = %+v", lst)
	}
	rootDir, errno := g.OpenFile(fx.r(""), experimentalsys.O_RDONLY, 0)
	must("open root", errno)
	defer rootDir.Close()
	dirents, errno := rootDir.Readdir(-1)
	must("readdir root", errno)
	var found bool
	for _, d := range dirents {
		if d.Name == "hello.txt" {
			found = true
			if d.Ino != st.Ino || d.Type != 0 {
				t.Errorf("dirent %v, want inode %d", d, st.Ino)
			}
		}
	}
	if !found {
		t.Error("hello.txt not listed")
	}

	// Times, by path and by file.
	mtime := time.Date(2001, 2, 3, 4, 5, 6, 7, time.UTC).UnixNano()
	must("utimens", g.Utimens(fx.r("hello.txt"), experimentalsys.UTIME_OMIT, mtime))
	if st, _ := g.Stat(fx.r("hello.txt")); st.Mtim != mtime {
		t.Errorf("mtim = %d, want %d", st.Mtim, mtime)
	}
	f, errno = g.OpenFile(fx.r("hello.txt"), experimentalsys.O_RDONLY, 0)
	must("open", errno)
	must("futimens", f.Utimens(mtime+1, mtime+1))
	if st, _ := f.Stat(); st.Mtim != mtime+1 || st.Atim != mtime+1 {
		t.Errorf("after futimens %+v", st)
	}
	f.Close()

	// Chmod keeps to permission bits.
	must("chmod", g.Chmod(fx.r("hello.txt"), 0o600|fs.ModeSetuid))
	if info, _ := os.Stat(filepath.Join(fx.root, "hello.txt")); info.Mode() != 0o600 {
		t.Errorf("mode = %v", info.Mode())
	}

	// Hard link inside.
	must("link", g.Link(fx.r("hello.txt"), fx.r("sub/hello2.txt")))
	if hostRead("sub/hello2.txt") != "hello" {
		t.Error("hard link content")
	}

	// SetAppend reopens the file by its path: a file renamed since it was
	// opened cannot switch, and keeps working as it was.
	f, errno = g.OpenFile(fx.r("sub/inner.txt"), experimentalsys.O_WRONLY, 0)
	must("open", errno)
	defer f.Close()
	if err := os.Rename(filepath.Join(fx.root, "sub/inner.txt"), filepath.Join(fx.root, "sub/renamed.txt")); err != nil {
		t.Fatal(err)
	}
	if errno := f.SetAppend(true); errno != experimentalsys.ENOENT || f.IsAppend() {
		t.Errorf("SetAppend after rename = %v, IsAppend %v", errno, f.IsAppend())
	}
	_, errno = f.Write([]byte("I"))
	must("write after failed SetAppend", errno)
	if got := hostRead("sub/renamed.txt"); got != "Inner" {
		t.Errorf("renamed file = %q", got)
	}
}

func TestGuestFSUseAfterClose(t *testing.T) {
	fx := newGuestFSFixture(t)
	f, errno := fx.fs.OpenFile(fx.r("hello.txt"), experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	if err := fx.fs.Close(); err != nil {
		t.Fatal(err)
	}
	// Files already open keep working; new lookups in the root fail.
	if got := gfsReadAll(t, f); got != "hello" {
		t.Errorf("read %q", got)
	}
	f.Close()
	if _, errno := f.Read(make([]byte, 1)); errno != experimentalsys.EBADF {
		t.Errorf("read after close = %v", errno)
	}
	if _, errno := fx.fs.Stat(fx.r("hello.txt")); errno != experimentalsys.EBADF {
		t.Errorf("stat after FS close = %v", errno)
	}
}

func TestNewGuestFSErrors(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		root  string
		files map[string][]byte
		want  string
	}{
		{name: "relative root", root: "root", want: `wasm: session root "root": not an absolute path`},
		{name: "slash", root: "/", want: "wasm: session root /: must be a directory below /"},
		{name: "missing", root: filepath.Join(base, "missing"), want: "wasm: session root " + filepath.Join(base, "missing") + ": no such file or directory"},
		{name: "not a directory", root: file, want: "wasm: session root " + file + ": not a directory"},
		{name: "relative file", root: root, files: map[string][]byte{"lib/x.zip": nil}, want: `wasm: read-only file "lib/x.zip": must be a clean absolute path`},
		{name: "unclean file", root: root, files: map[string][]byte{"/lib/../x.zip": nil}, want: `wasm: read-only file "/lib/../x.zip": must be a clean absolute path`},
		{name: "file slash", root: root, files: map[string][]byte{"/": nil}, want: `wasm: read-only file "/": must be a clean absolute path`},
		{name: "file inside root", root: root, files: map[string][]byte{root + "/x": nil}, want: "wasm: read-only file " + root + "/x: inside the session root"},
		{name: "file is root", root: root, files: map[string][]byte{root: nil}, want: "wasm: read-only file " + root + ": inside the session root"},
		{name: "file above root", root: root, files: map[string][]byte{base: nil}, want: "wasm: read-only file " + base + ": the session root or another read-only file lies under it"},
		{name: "file above file", root: root, files: map[string][]byte{"/a": nil, "/a/b": nil}, want: "wasm: read-only file /a: the session root or another read-only file lies under it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := wasm.NewGuestFS(tt.root, tt.files, nil)
			if err == nil {
				g.Close()
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %q, want prefix %q", err, tt.want)
			}
		})
	}
	t.Run("missing is ErrNotExist", func(t *testing.T) {
		_, err := wasm.NewGuestFS(filepath.Join(base, "missing"), nil, nil)
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("errors.Is(%v, fs.ErrNotExist) = false", err)
		}
	})
	t.Run("unclean root is cleaned", func(t *testing.T) {
		g, err := wasm.NewGuestFS(root+"/./", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		if _, errno := g.Stat(gfsRel(root)); errno != 0 {
			t.Errorf("Stat(root) = %v", errno)
		}
	})
}

// gfsRecordingFS logs the paths wazero hands the FS, to check the convention
// GuestFS relies on.
type gfsRecordingFS struct {
	*wasm.GuestFS
	mu    sync.Mutex
	paths []string
}

func (r *gfsRecordingFS) record(op, p string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paths = append(r.paths, op+" "+p)
}

func (r *gfsRecordingFS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	r.record("open", p)
	return r.GuestFS.OpenFile(p, flag, perm)
}

func (r *gfsRecordingFS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	r.record("stat", p)
	return r.GuestFS.Stat(p)
}

func (r *gfsRecordingFS) Symlink(target, link string) experimentalsys.Errno {
	r.record("symlink", target+" "+link)
	return r.GuestFS.Symlink(target, link)
}

// gfsBuildGuest compiles testdata/fsguest for wasip1.
func gfsBuildGuest(t *testing.T) []byte {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build the guest: %v", err)
	}
	out := filepath.Join(t.TempDir(), "fsguest.wasm")
	cmd := exec.Command(goBin, "build", "-o", out, "./testdata/fsguest")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOPROXY=off", "GOFLAGS=")
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, output)
	}
	wasmBytes, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return wasmBytes
}

func TestGuestFSEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a wasip1 guest")
	}
	wasmBytes := gfsBuildGuest(t)
	fx := newGuestFSFixture(t)
	rec := &gfsRecordingFS{GuestFS: fx.fs}

	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	if err := wasm.InstantiateWASI(ctx, r); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cfg := wazero.NewModuleConfig().
		WithArgs("fsguest", fx.root, fx.outside, gfsZipPath).
		WithEnv("PWD", fx.root).
		WithStdout(&stdout).
		WithStderr(&stderr).
		WithSysWalltime().
		WithFSConfig(wazero.NewFSConfig().(sysfs.FSConfig).WithSysFSMount(rec, "/"))
	_, err := r.InstantiateWithConfig(ctx, wasmBytes, cfg)
	if exitErr, ok := errors.AsType[*sys.ExitError](err); ok && exitErr.ExitCode() == 0 {
		err = nil
	}
	if err != nil {
		t.Fatalf("guest: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("guest output:\n%s", stdout.String())

	got := map[string]string{}
	for line := range strings.Lines(stdout.String()) {
		label, result, ok := strings.Cut(strings.TrimSuffix(line, "\n"), ": ")
		if !ok {
			t.Errorf("bad line %q", line)
			continue
		}
		got[label] = result
	}
	want := map[string]string{
		"getwd":                          "ok",
		"escape/etc-passwd":              "ENOENT",
		"escape/proc-environ":            "ENOENT",
		"escape/stat-proc":               "ENOENT",
		"escape/dotdot-chain":            "ENOENT",
		"escape/relative-dotdot":         "ENOENT",
		"escape/outside-absolute":        "ENOENT",
		"escape/symlink-abs":             "ENOENT",
		"escape/symlink-rel":             "ENOENT",
		"escape/symlink-dir":             "ENOENT",
		"escape/symlink-create-rel":      "EPERM",
		"escape/symlink-create-rel-read": "ENOENT",
		"escape/symlink-create-abs":      "EPERM",
		"escape/symlink-create-outside":  "EPERM",
		"escape/link-outside":            "ENOENT",
		"escape/link-etc-passwd":         "ENOENT",
		"escape/link-zip":                "EPERM",
		"escape/link-symlink":            "EPERM",
		"escape/link-symlink-read":       "ENOENT",
		"escape/rename-to-outside":       "ENOENT",
		"escape/rename-to-slash":         "EROFS",
		"escape/rename-root":             "EROFS",
		"escape/rename-zip-in":           "EROFS",
		"escape/open-zip-write":          "EROFS",
		"escape/writefile-zip":           "EROFS",
		"escape/remove-zip":              "EROFS",
		"escape/truncate-zip":            "EROFS",
		"escape/mkdir-slash":             "EROFS",
		"escape/create-in-synthetic":     "EROFS",
		"escape/remove-synthetic":        "EROFS",
		"ro/read-zip":                    `"zipdata"`,
		"ro/list-zip-dir":                "python311.zip",
		"ro/list-root-parent":            "root/",
		"ro/stat-synthetic":              "ok",
		"rw/read-hello":                  `"hello"`,
		"rw/writefile":                   "ok",
		"rw/append":                      "ok",
		"rw/read-appended":               `"abcdef"`,
		"rw/truncate":                    "ok",
		"rw/read-truncated":              `"abcd"`,
		"rw/seek-read":                   `"bc"`,
		"rw/readat":                      `"d"`,
		"rw/rdwr":                        "ok",
		"rw/read-writeat":                `"Zbcd"`,
		"rw/mkdirall":                    "ok",
		"rw/rename-into-dir":             "ok",
		"rw/list-a-b":                    "c/ moved.txt",
		"rw/rmdir-nonempty":              "ENOTEMPTY",
		"rw/remove-all":                  "ok",
		"rw/stat-removed":                "ENOENT",
		"rw/symlink-inside":              "ok",
		"rw/readlink":                    `"sub/inner.txt" ok`,
		"rw/read-via-symlink":            `"inner"`,
		"rw/lstat-symlink":               "ok",
		"rw/link-inside":                 "ok",
		"rw/read-hardlink":               `"hello"`,
		"rw/chtimes":                     "ok",
		"rw/stat-mtime":                  "ok",
		"rw/chdir-sub":                   "ok",
		"rw/read-in-sub":                 `"inner"`,
		"rw/chdir-back":                  "ok",
		"rw/unlink":                      "ok",
	}
	for label, w := range want {
		if g, ok := got[label]; !ok {
			t.Errorf("%s: missing from the output", label)
		} else if g != w {
			t.Errorf("%s: got %s, want %s", label, g, w)
		}
	}
	for _, label := range []string{"rw/walk", "rw/list-root"} {
		if !strings.Contains(got[label], "hello.txt") || strings.Contains(got[label], "secret") {
			t.Errorf("%s: %s", label, got[label])
		}
	}
	if !strings.HasSuffix(got["rw/walk"], " ok") {
		t.Errorf("rw/walk: %s", got["rw/walk"])
	}

	// Nothing outside the root changed, and the root holds what the guest made.
	if b, err := os.ReadFile(filepath.Join(fx.outside, "secret.txt")); string(b) != "secret" || err != nil {
		t.Errorf("outside/secret.txt = %q, %v", b, err)
	}
	if entries, _ := os.ReadDir(fx.base); len(entries) != 3 {
		t.Errorf("entries next to the root: %v", entries)
	}
	if b, err := os.ReadFile(filepath.Join(fx.root, "new.txt")); err == nil {
		t.Errorf("new.txt still in the root: %q", b)
	}

	// The path convention: relative to "/", no leading slash, "." for "/".
	rec.mu.Lock()
	paths := slices.Clone(rec.paths)
	rec.mu.Unlock()
	t.Logf("paths wazero passed: %q", paths)
	for _, p := range []string{"open .", "open etc/passwd", "open " + gfsRel(fx.root) + "/hello.txt", "stat " + gfsRel(fx.root)} {
		if !slices.Contains(paths, p) {
			t.Errorf("wazero never passed %q", p)
		}
	}
	for _, p := range paths {
		op, arg, _ := strings.Cut(p, " ")
		if op == "symlink" {
			_, arg, _ = strings.Cut(arg, " ") // the target is passed as the guest wrote it
		}
		if strings.HasPrefix(arg, "/") || strings.Contains(arg, "..") {
			t.Errorf("unexpected path form %q", p)
		}
	}
}
