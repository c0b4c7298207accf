package wasm_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/wasmeval/wasmeval/wasm"
)

func TestReadOnlyFS(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644))
	must(os.MkdirAll(filepath.Join(dir, "pkg"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "pkg", "mod.py"), []byte("x = 1\n"), 0o644))
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "abs")))
	// dir and outside are siblings: from dir/pkg, ../../ is their parent.
	must(os.Symlink("../../"+filepath.Base(outside), filepath.Join(dir, "pkg", "rel")))
	must(os.Symlink("../../"+filepath.Base(outside)+"/secret", filepath.Join(dir, "pkg", "rel2")))
	must(os.Symlink("pkg/mod.py", filepath.Join(dir, "in")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))

	fsys, err := wasm.NewReadOnlyFS(dir)
	must(err)
	defer fsys.Close()

	ro := experimentalsys.O_RDONLY
	open := func(name string, flag experimentalsys.Oflag) experimentalsys.Errno {
		f, errno := fsys.OpenFile(name, flag, 0o644)
		if errno == 0 {
			f.Close()
		}
		return errno
	}
	tests := []struct {
		name string
		got  func() experimentalsys.Errno
		want experimentalsys.Errno
	}{
		{"read", func() experimentalsys.Errno { return open("pkg/mod.py", ro) }, 0},
		{"dir", func() experimentalsys.Errno { return open("pkg", ro|experimentalsys.O_DIRECTORY) }, 0},
		{"link inside", func() experimentalsys.Errno { return open("in", ro) }, 0},
		{"nofollow link", func() experimentalsys.Errno { return open("in", ro|experimentalsys.O_NOFOLLOW) }, experimentalsys.ELOOP},
		{"absolute link out", func() experimentalsys.Errno { return open("abs", ro) }, experimentalsys.EACCES},
		{"relative link out", func() experimentalsys.Errno { return open("pkg/rel/secret", ro) }, experimentalsys.EACCES},
		{"relative file link out", func() experimentalsys.Errno { return open("pkg/rel2", ro) }, experimentalsys.EACCES},
		{"dot-dot stays at the top", func() experimentalsys.Errno { return open("../../pkg/mod.py", ro) }, 0},
		{"stat link out", func() experimentalsys.Errno { _, e := fsys.Stat("abs"); return e }, experimentalsys.EACCES},
		{"lstat link out", func() experimentalsys.Errno { _, e := fsys.Lstat("abs"); return e }, 0},
		{"readlink out", func() experimentalsys.Errno { _, e := fsys.Readlink("abs"); return e }, experimentalsys.EACCES},
		{"readlink relative out", func() experimentalsys.Errno { _, e := fsys.Readlink("pkg/rel"); return e }, experimentalsys.EACCES},
		{"readlink inside", func() experimentalsys.Errno { _, e := fsys.Readlink("in"); return e }, 0},
		{"fifo", func() experimentalsys.Errno { return open("fifo", ro) }, experimentalsys.EACCES},
		{"missing", func() experimentalsys.Errno { return open("nope.py", ro) }, experimentalsys.ENOENT},
		{"write", func() experimentalsys.Errno { return open("pkg/mod.py", experimentalsys.O_WRONLY) }, experimentalsys.EROFS},
		{"rdwr", func() experimentalsys.Errno { return open("pkg/mod.py", experimentalsys.O_RDWR) }, experimentalsys.EROFS},
		{"create", func() experimentalsys.Errno { return open("new.py", experimentalsys.O_CREAT|experimentalsys.O_WRONLY) }, experimentalsys.EROFS},
		{"append", func() experimentalsys.Errno { return open("pkg/mod.py", experimentalsys.O_APPEND) }, experimentalsys.EROFS},
		{"trunc", func() experimentalsys.Errno { return open("pkg/mod.py", experimentalsys.O_TRUNC) }, experimentalsys.EROFS},
		{"mkdir", func() experimentalsys.Errno { return fsys.Mkdir("d", 0o755) }, experimentalsys.EROFS},
		{"unlink", func() experimentalsys.Errno { return fsys.Unlink("pkg/mod.py") }, experimentalsys.EROFS},
		{"rmdir", func() experimentalsys.Errno { return fsys.Rmdir("pkg") }, experimentalsys.EROFS},
		{"rename", func() experimentalsys.Errno { return fsys.Rename("pkg/mod.py", "x.py") }, experimentalsys.EROFS},
		{"link", func() experimentalsys.Errno { return fsys.Link("pkg/mod.py", "x.py") }, experimentalsys.EROFS},
		{"symlink", func() experimentalsys.Errno { return fsys.Symlink("pkg/mod.py", "x.py") }, experimentalsys.EROFS},
		{"chmod", func() experimentalsys.Errno { return fsys.Chmod("pkg/mod.py", 0o777) }, experimentalsys.EROFS},
		{"utimens", func() experimentalsys.Errno { return fsys.Utimens("pkg/mod.py", 0, 0) }, experimentalsys.EROFS},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.got(); got != tc.want {
				t.Errorf("errno %v, want %v", got, tc.want)
			}
		})
	}

	f, errno := fsys.OpenFile("pkg/mod.py", ro, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer f.Close()
	buf := make([]byte, 16)
	if n, errno := f.Read(buf); errno != 0 || string(buf[:n]) != "x = 1\n" {
		t.Errorf("read %q, %v", buf[:n], errno)
	}
	if _, errno := f.Write([]byte("y")); errno != experimentalsys.EBADF {
		t.Errorf("write to a read-only file: %v, want EBADF", errno)
	}
	if errno := f.Truncate(0); errno != experimentalsys.EROFS {
		t.Errorf("truncate: %v, want EROFS", errno)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "pkg", "mod.py")); string(b) != "x = 1\n" {
		t.Errorf("the file is now %q", b)
	}

	for _, bad := range []string{"relative", filepath.Join(dir, "pkg", "mod.py"), filepath.Join(dir, "nope")} {
		if _, err := wasm.NewReadOnlyFS(bad); err == nil {
			t.Errorf("NewReadOnlyFS(%q) succeeded", bad)
		}
	}
}
