package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/sandbox"
)

// filesSession is a session over root that has run no cell, so Fork copies
// its files only (no runtime needed).
func filesSession(t *testing.T, root string) *sandbox.Session {
	t.Helper()
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(ctx) })
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// forkFiles forks a files-only session of src into a new folder. A broken
// fork must fail the test, not the machine: one that opens a fifo would
// block for ever (after 10 s the fifos are opened for writing, which
// unblocks it), and one that fills holes would write a terabyte. Such a
// fork cannot be stopped, and the session's cleanup would wait for it, so
// past 256 MiB on disk, or 15 s, the test binary exits at once.
func forkFiles(t *testing.T, src string) (string, error) {
	return forkFilesWith(t, src, sandbox.SessionOptions{})
}

// forkFilesWith is forkFiles with options for the copy (Root is set here).
func forkFilesWith(t *testing.T, src string, o sandbox.SessionOptions) (string, error) {
	t.Helper()
	s := filesSession(t, src)
	dst := t.TempDir()
	o.Root = dst
	type result struct {
		cp  *sandbox.Session
		err error
	}
	done := make(chan result, 1)
	go func() {
		cp, err := s.Fork(context.Background(), o)
		done <- result{cp, err}
	}()
	hardStop := func(msg string) {
		os.RemoveAll(dst)
		fmt.Fprintf(os.Stderr, "--- FAIL: %s: %s; stopping the test binary\n", t.Name(), msg)
		os.Exit(3)
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	unblock := time.After(10 * time.Second)
	deadline := time.After(15 * time.Second)
	for {
		select {
		case r := <-done:
			if r.cp != nil {
				r.cp.Close(context.Background())
			}
			return dst, r.err
		case <-tick.C:
			if n := allocated(dst); n > 256<<20 {
				hardStop(fmt.Sprintf("the fork has written %d bytes to disk and goes on: it fills holes", n))
			}
		case <-unblock:
			t.Error("fork blocked")
			filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
				if fi != nil && fi.Mode()&os.ModeNamedPipe != 0 {
					if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
						f.Close()
					}
				}
				return nil
			})
		case <-deadline:
			hardStop("the fork blocked for 15 s")
		}
	}
}

// allocated is the disk space the files under dir take.
func allocated(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if fi != nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n
}

// Symlinks the guest made lead host code out of the root when followed on
// the host; Fork copies only those that stay inside for anyone, and never
// follows one.
func TestForkSymlinks(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("host secret"), 0o600)
	for _, tc := range []struct {
		name   string
		make   func(root string)
		link   string // the offending link, named by the error
		refuse bool
	}{
		{"absolute", func(r string) { os.Symlink(outside, filepath.Join(r, "out")) }, "out", true},
		{"absolute file", func(r string) { os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(r, "s")) }, "s", true},
		{"dot-dot", func(r string) { os.Symlink("..", filepath.Join(r, "up")) }, "up", true},
		{"through another link", func(r string) {
			os.Mkdir(filepath.Join(r, "d"), 0o755)
			os.Symlink("d", filepath.Join(r, "g4"))
			os.Symlink("g4/..", filepath.Join(r, "g_up"))
		}, "g_up", true},
		{"chain l1/l1/..", func(r string) {
			os.Symlink(".", filepath.Join(r, "l1"))
		}, "l1", true},
		{"swapped folder", func(r string) {
			os.MkdirAll(filepath.Join(r, "sw", "x"), 0o755)
			os.RemoveAll(filepath.Join(r, "sw"))
			os.Symlink(outside, filepath.Join(r, "sw"))
		}, "sw", true},
		{"deep, in a subfolder", func(r string) {
			os.MkdirAll(filepath.Join(r, "a", "b"), 0o755)
			os.Symlink("../../..", filepath.Join(r, "a", "b", "esc"))
		}, "a/b/esc", true},
		{"double slash", func(r string) { os.Symlink("a//b", filepath.Join(r, "ds")) }, "ds", true},
		{"dangling down is kept", func(r string) { os.Symlink("not/there", filepath.Join(r, "dl")) }, "", false},
		{"down is kept", func(r string) {
			os.MkdirAll(filepath.Join(r, "sub", "deeper"), 0o755)
			os.WriteFile(filepath.Join(r, "sub", "deeper", "f.txt"), []byte("in"), 0o644)
			os.Symlink("sub/deeper/f.txt", filepath.Join(r, "ok"))
			os.Symlink("deeper", filepath.Join(r, "sub", "ok2"))
		}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			os.WriteFile(filepath.Join(src, "plain.txt"), []byte("plain"), 0o644)
			tc.make(src)
			dst, err := forkFiles(t, src)
			if tc.refuse {
				if err == nil {
					t.Fatal("a symlink that leads out was copied")
				}
				if !strings.Contains(err.Error(), tc.link+" is a symbolic link") {
					t.Fatalf("the error does not name the link %s: %v", tc.link, err)
				}
				if entries, _ := os.ReadDir(dst); len(entries) != 0 {
					t.Fatalf("a refused fork left files in its root: %v", entries)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Links are copied as links, with their targets.
			filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
				if fi == nil || fi.Mode()&os.ModeSymlink == 0 {
					return nil
				}
				rel, _ := filepath.Rel(src, p)
				want, _ := os.Readlink(p)
				got, err := os.Readlink(filepath.Join(dst, rel))
				if err != nil || got != want {
					t.Errorf("%s: copy links to %q (%v), want %q", rel, got, err, want)
				}
				return nil
			})
			if b, _ := os.ReadFile(filepath.Join(dst, "plain.txt")); string(b) != "plain" {
				t.Fatalf("plain.txt: %q", b)
			}
		})
	}
	// Nothing of the outside folder was ever copied anywhere.
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "host secret" {
		t.Fatal("the outside file changed")
	}
}

// A fifo would block a fork that opened it (and the host with it); devices
// and sockets are no files to copy either.
func TestForkRefusesSpecialFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, path string)
		kind string
	}{
		{"fifo", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "named pipe"},
		{"socket", func(t *testing.T, p string) {
			l, err := net.Listen("unix", p)
			if err != nil {
				t.Fatal(err)
			}
			l.(*net.UnixListener).SetUnlinkOnClose(false)
			l.Close()
		}, "socket"},
		{"device", func(t *testing.T, p string) {
			if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err != nil { // like /dev/null
				t.Skipf("cannot make a device node here: %v", err)
			}
		}, "character device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			os.Mkdir(filepath.Join(src, "sub"), 0o755)
			tc.make(t, filepath.Join(src, "sub", "special"))
			dst, err := forkFiles(t, src)
			if err == nil || !strings.Contains(err.Error(), "sub/special is a "+tc.kind) {
				t.Fatalf("fork with a %s: %v", tc.name, err)
			}
			if entries, _ := os.ReadDir(dst); len(entries) != 0 {
				t.Fatalf("a refused fork left files in its root: %v", entries)
			}
		})
	}
}

// A hole is copied as a hole: a 1 TiB sparse file (and a file of written
// zeros) costs the copy almost no disk, and its data is where it was.
func TestForkKeepsSparseFilesSparse(t *testing.T) {
	src := t.TempDir()
	const size = 1 << 40
	f, err := os.Create(filepath.Join(src, "huge"))
	if err != nil {
		t.Fatal(err)
	}
	marks := map[int64]string{0: "head", 1 << 39: "middle", size - 4: "tail"}
	for off, s := range marks {
		if _, err := f.WriteAt([]byte(s), off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(size); err != nil {
		t.Skipf("this filesystem cannot hold a 1 TiB sparse file: %v", err)
	}
	f.Close()
	// Zeros written as data: no hole in the source, none needed in the copy.
	os.WriteFile(filepath.Join(src, "zeros"), make([]byte, 8<<20), 0o644)

	// The disk quota counts a sparse file at its logical size (see
	// TestForkChecksDiskQuota); here there is none.
	start := time.Now()
	dst, err := forkFilesWith(t, src, sandbox.SessionOptions{DiskQuotaBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("forked in %v", time.Since(start))
	for name, want := range map[string]int64{"huge": size, "zeros": 8 << 20} {
		st, err := os.Stat(filepath.Join(dst, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() != want {
			t.Fatalf("%s: size %d, want %d", name, st.Size(), want)
		}
		if alloc := st.Sys().(*syscall.Stat_t).Blocks * 512; alloc > 1<<20 {
			t.Fatalf("%s: the copy takes %d bytes of disk; the source is sparse or zeros", name, alloc)
		}
	}
	cp, _ := os.Open(filepath.Join(dst, "huge"))
	defer cp.Close()
	for off, s := range marks {
		b := make([]byte, len(s))
		if _, err := cp.ReadAt(b, off); err != nil || string(b) != s {
			t.Fatalf("at %d: %q, %v", off, b, err)
		}
	}
}

// Modes are kept, and a read-only folder is copied with its files.
func TestForkKeepsModes(t *testing.T) {
	src := t.TempDir()
	ro := filepath.Join(src, "ro")
	os.Mkdir(ro, 0o755)
	os.WriteFile(filepath.Join(ro, "x.sh"), []byte("#!/bin/sh\n"), 0o750)
	os.Chmod(ro, 0o555)
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	dst, err := forkFiles(t, src)
	t.Cleanup(func() { os.Chmod(filepath.Join(dst, "ro"), 0o755) })
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{"ro": 0o555, "ro/x.sh": 0o750} {
		st, err := os.Stat(filepath.Join(dst, name))
		if err != nil || st.Mode().Perm() != want {
			t.Fatalf("%s: %v, %v", name, st.Mode(), err)
		}
	}
}

// A copy inside the session's own root would copy itself (and the guest
// would see it): refused.
func TestForkIntoOwnRootIsRefused(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("a"), 0o644)
	target := filepath.Join(src, "copy")
	os.Mkdir(target, 0o755)
	s := filesSession(t, src)
	if cp, err := s.Fork(context.Background(), sandbox.SessionOptions{Root: target}); err == nil || !strings.Contains(err.Error(), "lies inside the session's root") {
		if cp != nil {
			cp.Close(context.Background())
		}
		t.Fatalf("fork into its own root: %v", err)
	}
}

// A fork is a new session with a disk quota of its own: a copy that would
// pass it is refused (before the entry that passes it is written), not
// made and then found over quota.
func TestForkChecksDiskQuota(t *testing.T) {
	src := t.TempDir()
	os.Mkdir(filepath.Join(src, "d"), 0o755)
	for _, name := range []string{"a", "b", "d/c"} {
		os.WriteFile(filepath.Join(src, name), make([]byte, 1000), 0o644)
	}
	os.Symlink("a", filepath.Join(src, "l"))
	huge := t.TempDir()
	os.WriteFile(filepath.Join(huge, "small"), []byte("x"), 0o644)
	if err := os.Truncate(filepath.Join(huge, "small"), 2<<30); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		src  string
		o    sandbox.SessionOptions
		ok   bool
	}{
		{"fits", src, sandbox.SessionOptions{DiskQuotaBytes: 3001, DiskQuotaFiles: 5}, true},
		{"bytes", src, sandbox.SessionOptions{DiskQuotaBytes: 2500}, false},
		{"files", src, sandbox.SessionOptions{DiskQuotaFiles: 4}, false},
		{"a 2 GiB sparse file against the default 1 GiB", huge, sandbox.SessionOptions{}, false},
		{"no quota", huge, sandbox.SessionOptions{DiskQuotaBytes: -1, DiskQuotaFiles: -1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst, err := forkFilesWith(t, tc.src, tc.o)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, hostcalls.ErrDiskQuota) {
				t.Fatalf("fork past the quota: %v", err)
			}
			if entries, _ := os.ReadDir(dst); len(entries) != 0 {
				t.Fatalf("a refused fork left files in its root: %v", entries)
			}
		})
	}
}
