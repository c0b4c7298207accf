// Command fsguest is a WASI guest for wasm's GuestFS end-to-end test. It
// tries to escape the session root and does ordinary file work, and prints
// one "label: result" line per step, where result is "ok", an errno name
// such as ENOENT, or what was read.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -o fsguest.wasm ./wasm/testdata/fsguest
// Run with: fsguest ROOT OUTSIDE ZIP, working directory ROOT (PWD=ROOT).
// Or: fsguest attack ROOT, with a disk quota of 1 MiB and 50 files, for
// the symlink chains that lead host tools out and the quota's refusals.
package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

var errnoNames = map[syscall.Errno]string{
	syscall.EACCES:    "EACCES",
	syscall.EBADF:     "EBADF",
	syscall.EEXIST:    "EEXIST",
	syscall.EINVAL:    "EINVAL",
	syscall.EIO:       "EIO",
	syscall.EISDIR:    "EISDIR",
	syscall.ELOOP:     "ELOOP",
	syscall.ENOENT:    "ENOENT",
	syscall.ENOSPC:    "ENOSPC",
	syscall.ENOTSOCK:  "ENOTSOCK",
	syscall.ENOSYS:    "ENOSYS",
	syscall.ENOTDIR:   "ENOTDIR",
	syscall.ENOTEMPTY: "ENOTEMPTY",
	syscall.EPERM:     "EPERM",
	syscall.EROFS:     "EROFS",
	syscall.EXDEV:     "EXDEV",
}

func result(err error) string {
	if err == nil {
		return "ok"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if name, ok := errnoNames[errno]; ok {
			return name
		}
	}
	return "error " + err.Error()
}

func check(label string, err error) {
	fmt.Printf("%s: %s\n", label, result(err))
}

func read(label, name string) {
	b, err := os.ReadFile(name)
	if err != nil {
		check(label, err)
		return
	}
	fmt.Printf("%s: %q\n", label, b)
}

func list(label, dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		check(label, err)
		return
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			name += "/"
		}
		names = append(names, name)
	}
	fmt.Printf("%s: %s\n", label, strings.Join(names, " "))
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "attack" {
		attack(os.Args[2])
		return
	}
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: fsguest ROOT OUTSIDE ZIP")
		os.Exit(2)
	}
	root, outside, zip := os.Args[1], os.Args[2], os.Args[3]

	wd, err := os.Getwd()
	if err == nil && wd != root {
		err = fmt.Errorf("getwd %s, want %s", wd, root)
	}
	check("getwd", err)

	// Escapes: each must fail.
	read("escape/etc-passwd", "/etc/passwd")
	read("escape/proc-environ", "/proc/self/environ")
	_, err = os.Stat("/proc")
	check("escape/stat-proc", err)
	read("escape/dotdot-chain", root+"/../../../../../../../etc/passwd")
	read("escape/relative-dotdot", "../outside/secret.txt")
	read("escape/outside-absolute", filepath.Join(outside, "secret.txt"))
	read("escape/symlink-abs", "evil_abs")
	read("escape/symlink-rel", "evil_rel")
	read("escape/symlink-dir", "evil_dir/secret.txt")
	check("escape/symlink-create-rel", os.Symlink("../../../../../../etc/passwd", "guest_rel"))
	read("escape/symlink-create-rel-read", "guest_rel")
	check("escape/symlink-create-abs", os.Symlink("/etc/passwd", "guest_abs"))
	check("escape/symlink-create-outside", os.Symlink("../outside", "guest_dir"))
	check("escape/link-outside", os.Link(filepath.Join(outside, "secret.txt"), "hard_outside"))
	check("escape/link-etc-passwd", os.Link("/etc/passwd", "hard_passwd"))
	check("escape/link-zip", os.Link(zip, "hard_zip"))
	check("escape/link-symlink", os.Link("evil_abs", "hard_symlink"))
	read("escape/link-symlink-read", "hard_symlink")
	check("escape/rename-to-outside", os.Rename("hello.txt", filepath.Join(outside, "moved.txt")))
	check("escape/rename-to-slash", os.Rename("hello.txt", "/moved.txt"))
	check("escape/rename-root", os.Rename(root, root+"-moved"))
	check("escape/rename-zip-in", os.Rename(zip, "zip-in-root"))
	_, err = os.OpenFile(zip, os.O_WRONLY, 0)
	check("escape/open-zip-write", err)
	check("escape/writefile-zip", os.WriteFile(zip, []byte("x"), 0o644))
	check("escape/remove-zip", os.Remove(zip))
	check("escape/truncate-zip", os.Truncate(zip, 0))
	check("escape/mkdir-slash", os.Mkdir("/newdir", 0o755))
	check("escape/create-in-synthetic", os.WriteFile(filepath.Dir(zip)+"/new.txt", []byte("x"), 0o644))
	check("escape/remove-synthetic", os.Remove("/usr"))

	// The read-only and synthetic parts.
	read("ro/read-zip", zip)
	list("ro/list-zip-dir", filepath.Dir(zip))
	list("ro/list-root-parent", filepath.Dir(root))
	fi, err := os.Stat(filepath.Dir(zip))
	if err == nil && !fi.IsDir() {
		err = errors.New("not a dir")
	}
	check("ro/stat-synthetic", err)

	// Ordinary work inside the root, with relative paths.
	read("rw/read-hello", "hello.txt")
	check("rw/writefile", os.WriteFile("new.txt", []byte("abc"), 0o644))
	f, err := os.OpenFile("new.txt", os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString("def")
		err = errors.Join(err, f.Close())
	}
	check("rw/append", err)
	read("rw/read-appended", "new.txt")
	check("rw/truncate", os.Truncate("new.txt", 4))
	read("rw/read-truncated", "new.txt")
	f, err = os.OpenFile("new.txt", os.O_RDWR, 0)
	if err == nil {
		buf := make([]byte, 2)
		_, err = f.Seek(1, io.SeekStart)
		if err == nil {
			_, err = io.ReadFull(f, buf)
		}
		fmt.Printf("rw/seek-read: %q\n", buf)
		_, err2 := f.WriteAt([]byte("Z"), 0)
		_, err3 := f.ReadAt(buf[:1], 3)
		fmt.Printf("rw/readat: %q\n", buf[:1])
		err = errors.Join(err, err2, err3, f.Close())
	}
	check("rw/rdwr", err)
	read("rw/read-writeat", "new.txt")
	check("rw/mkdirall", os.MkdirAll("a/b/c", 0o755))
	check("rw/rename-into-dir", os.Rename("new.txt", "a/b/moved.txt"))
	list("rw/list-a-b", "a/b")
	check("rw/rmdir-nonempty", syscall.Rmdir("a/b"))
	check("rw/remove-all", os.RemoveAll("a"))
	_, err = os.Stat("a")
	check("rw/stat-removed", err)
	check("rw/symlink-inside", os.Symlink("sub/inner.txt", "mylink"))
	target, err := os.Readlink("mylink")
	fmt.Printf("rw/readlink: %q %s\n", target, result(err))
	read("rw/read-via-symlink", "mylink")
	fi, err = os.Lstat("mylink")
	if err == nil && fi.Mode()&fs.ModeSymlink == 0 {
		err = errors.New("not a symlink")
	}
	check("rw/lstat-symlink", err)
	check("rw/link-inside", os.Link("hello.txt", "hello-link.txt"))
	read("rw/read-hardlink", "hello-link.txt")
	mtime := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	check("rw/chtimes", os.Chtimes("hello.txt", mtime, mtime))
	fi, err = os.Stat("hello.txt")
	if err == nil && !fi.ModTime().Equal(mtime) {
		err = fmt.Errorf("mtime %v", fi.ModTime())
	}
	check("rw/stat-mtime", err)
	check("rw/chdir-sub", os.Chdir("sub"))
	read("rw/read-in-sub", "inner.txt")
	check("rw/chdir-back", os.Chdir(root))
	var walked []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		walked = append(walked, rel)
		return nil
	})
	fmt.Printf("rw/walk: %s %s\n", strings.Join(walked, " "), result(err))
	check("rw/unlink", os.Remove("hello-link.txt"))
	list("rw/list-root", ".")
}

// attack tries the symlinks that host code would follow out of the root,
// then fills the disk quota.
func attack(root string) {
	// Links whose target does not point strictly down: EPERM.
	check("link/dot", os.Symlink(".", "g4"))
	check("link/via-dot-up", os.Symlink("g4/..", "g_up"))
	check("link/mkdir", os.Mkdir("gsub", 0o755))
	check("link/plain", os.Symlink("gsub", "g5"))
	check("link/via-link-up", os.Symlink("g5/..", "g_up2"))
	check("link/l1-dot", os.Symlink(".", "l1"))
	check("link/l1-chain", os.Symlink("l1/l1/..", "l2"))
	check("link/mkdir-sw", os.MkdirAll("sw/x", 0o755))
	check("link/through-sw", os.Symlink("sw/x/../../secret.txt", "p"))
	check("link/rmdir-sw-x", os.Remove("sw/x"))
	check("link/swap-sw-x", os.Symlink(".", "sw/x"))
	check("link/swap-sw-x-up", os.Symlink("..", "sw/x"))
	check("link/dot-slash", os.Symlink("./hello.txt", "ds"))
	check("link/abs-inside", os.Symlink(root+"/hello.txt", "abs_in"))
	target, err := os.Readlink("abs_in")
	fmt.Printf("link/abs-inside-readlink: %q %s\n", target, result(err))
	read("link/abs-inside-read", "abs_in")
	check("link/abs-parent", os.Symlink(filepath.Dir(root), "abs_parent"))
	check("link/abs-root", os.Symlink(root, "abs_root"))
	check("link/hardlink-of-link", os.Link("g5", "gsub/g5_again"))
	check("link/rename-link-down", os.Rename("g5", "gsub/g5_moved"))

	// The disk quota: 1 MiB and 50 files.
	check("quota/small", os.WriteFile("small", make([]byte, 1000), 0o644))
	f, err := os.Create("sparse")
	check("quota/create", err)
	if err == nil {
		check("quota/truncate-2GiB", f.Truncate(2<<30))
		_, err = f.Seek(2<<30, io.SeekStart)
		if err == nil {
			_, err = f.Write([]byte("x"))
		}
		check("quota/seek-write-2GiB", err)
		_, err = f.WriteAt([]byte("x"), 1<<40)
		check("quota/writeat-1TiB", err)
		_, err = f.WriteAt(make([]byte, 2<<20), 0)
		check("quota/write-2MiB", err)
		_, err = f.WriteAt(make([]byte, 512<<10), 0)
		check("quota/write-512KiB", err)
		check("quota/close", f.Close())
	}
	fi, err := os.Stat("sparse")
	if err == nil {
		fmt.Printf("quota/sparse-size: %d\n", fi.Size())
	}
	var made int
	for made = 0; made < 100; made++ {
		if err = os.Mkdir(fmt.Sprintf("dir%03d", made), 0o755); err != nil {
			break
		}
	}
	fmt.Printf("quota/mkdirs: %d %s\n", made, result(err))
	check("quota/remove-sparse", os.Remove("sparse"))
	check("quota/write-after-remove", os.WriteFile("after", make([]byte, 900<<10), 0o644))
}
