package wasm_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/wasm"
)

// errnoQuota is what GuestFS returns for a change past the disk quota
// (ENOSPC once InstantiateWASI's module has translated it).
const errnoQuota = experimentalsys.ENOTSOCK

func newQuotaFixture(t *testing.T, maxBytes, maxFiles int64) (*hostFixture, *wasm.RootQuota) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	q, err := wasm.NewRootQuota(root, maxBytes, maxFiles)
	if err != nil {
		t.Fatal(err)
	}
	fx := &hostFixture{base: base, root: root}
	g, err := wasm.NewGuestFS(root, nil, q)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	fx.fs = g
	return fx, q
}

// assertCounts checks that the quota's counts are what a fresh walk of
// the root finds.
func assertCounts(t *testing.T, q *wasm.RootQuota, root string) {
	t.Helper()
	fresh, err := wasm.NewRootQuota(root, 1<<62, 1<<62)
	if err != nil {
		t.Fatal(err)
	}
	gb, gf := q.Usage()
	wb, wf := fresh.Usage()
	if gb != wb || gf != wf {
		t.Errorf("the quota counts %d bytes and %d files; the root holds %d and %d", gb, gf, wb, wf)
	}
}

func hostSize(t *testing.T, root, name string) int64 {
	t.Helper()
	info, err := os.Lstat(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

func TestGuestFSQuotaBytes(t *testing.T) {
	const mib = 1 << 20
	fx, q := newQuotaFixture(t, mib, 0)
	g := fx.fs
	must := func(what string, errno experimentalsys.Errno) {
		t.Helper()
		if errno != 0 {
			t.Fatalf("%s: %v", what, errno)
		}
	}
	refused := func(what string, errno experimentalsys.Errno) {
		t.Helper()
		if errno != errnoQuota {
			t.Errorf("%s: %v, want the quota's refusal", what, errno)
		}
	}
	f, errno := g.OpenFile(fx.r("a"), experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644)
	must("create", errno)
	defer f.Close()
	_, errno = f.Write(make([]byte, 512<<10))
	must("write under the cap", errno)
	_, errno = f.Write(make([]byte, 600<<10))
	refused("write past the cap", errno)

	// The sparse tricks: a huge hole costs its full size.
	refused("truncate to 2 GiB", f.Truncate(2<<30))
	_, errno = f.Seek(2<<30, io.SeekStart)
	must("seek to 2 GiB", errno)
	_, errno = f.Write([]byte("x"))
	refused("write at 2 GiB", errno)
	_, errno = f.Pwrite([]byte("x"), 1<<40)
	refused("pwrite at 1 TiB", errno)
	_, errno = f.Pwrite([]byte("x"), 1<<62)
	refused("pwrite near the end of int64", errno)
	if size := hostSize(t, fx.root, "a"); size != 512<<10 {
		t.Errorf("the refused changes left a file of %d bytes", size)
	}
	assertCounts(t, q, fx.root)

	// Shrinking gives room back; O_TRUNC too.
	must("truncate to 0", f.Truncate(0))
	_, errno = f.Pwrite(make([]byte, mib), 0)
	must("write the whole quota", errno)
	refused("one byte more", gfsErrno(f.Pwrite([]byte("x"), mib)))
	f2, errno := g.OpenFile(fx.r("a"), experimentalsys.O_WRONLY|experimentalsys.O_TRUNC, 0)
	must("open with O_TRUNC", errno)
	must("close", f2.Close())
	assertCounts(t, q, fx.root)

	// Append mode counts from the end, whatever the offset.
	f3, errno := g.OpenFile(fx.r("b"), experimentalsys.O_CREAT|experimentalsys.O_WRONLY|experimentalsys.O_APPEND, 0o644)
	must("open append", errno)
	_, errno = f3.Write(make([]byte, 700<<10))
	must("append", errno)
	_, errno = f3.Pwrite(make([]byte, 400<<10), 0)
	refused("pwrite in append mode past the cap", errno)
	must("close b", f3.Close())
	assertCounts(t, q, fx.root)

	// A hard link counts as a copy, and growth through it counts twice.
	refused("link of 700 KiB with 324 KiB left", g.Link(fx.r("b"), fx.r("b2")))
	must("truncate b", truncateHost(g, fx.r("b"), 300<<10))
	must("link", g.Link(fx.r("b"), fx.r("b2")))
	assertCounts(t, q, fx.root)
	refused("truncate a doubly linked file past the cap", truncateHost(g, fx.r("b2"), 600<<10))
	must("truncate a doubly linked file within it", truncateHost(g, fx.r("b2"), 500<<10))
	assertCounts(t, q, fx.root)
	must("unlink b", g.Unlink(fx.r("b")))
	must("rename over a", g.Rename(fx.r("b2"), fx.r("a")))
	assertCounts(t, q, fx.root)
}

// truncateHost truncates name through a file opened by the guest FS.
func truncateHost(g interface {
	OpenFile(string, experimentalsys.Oflag, os.FileMode) (experimentalsys.File, experimentalsys.Errno)
}, name string, size int64) experimentalsys.Errno {
	f, errno := g.OpenFile(name, experimentalsys.O_WRONLY, 0)
	if errno != 0 {
		return errno
	}
	defer f.Close()
	return f.Truncate(size)
}

// TestGuestFSQuotaOpenUnlinked: a file removed while open keeps its space
// until it is closed, and keeps counting: removing open files cannot
// free the quota while the disk still holds them.
func TestGuestFSQuotaOpenUnlinked(t *testing.T) {
	fx, q := newQuotaFixture(t, 1<<20, 0)
	g := fx.fs
	f, errno := g.OpenFile(fx.r("held"), experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644)
	if errno != 0 {
		t.Fatal(errno)
	}
	if _, errno := f.Write(make([]byte, 800<<10)); errno != 0 {
		t.Fatal(errno)
	}
	if errno := g.Unlink(fx.r("held")); errno != 0 {
		t.Fatal(errno)
	}
	if used, _ := q.Usage(); used != 800<<10 {
		t.Errorf("after unlink, the open file counts %d bytes, want %d", used, 800<<10)
	}
	// Writing on into the removed file still counts.
	if _, errno := f.Write(make([]byte, 300<<10)); errno != errnoQuota {
		t.Errorf("writing past the cap into a removed file: %v", errno)
	}
	g2, errno := g.OpenFile(fx.r("other"), experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer g2.Close()
	if _, errno := g2.Write(make([]byte, 300<<10)); errno != errnoQuota {
		t.Errorf("a new file while the removed one is open: %v", errno)
	}
	if errno := f.Close(); errno != 0 {
		t.Fatal(errno)
	}
	if _, errno := g2.Write(make([]byte, 300<<10)); errno != 0 {
		t.Errorf("after the removed file was closed: %v", errno)
	}
	assertCounts(t, q, fx.root)
}

func TestGuestFSQuotaFiles(t *testing.T) {
	fx, q := newQuotaFixture(t, 0, 4)
	g := fx.fs
	steps := []struct {
		name string
		op   func() experimentalsys.Errno
		want experimentalsys.Errno
	}{
		{"mkdir", func() experimentalsys.Errno { return g.Mkdir(fx.r("d"), 0o755) }, 0},
		{"create", func() experimentalsys.Errno {
			f, errno := g.OpenFile(fx.r("d/f"), experimentalsys.O_CREAT|experimentalsys.O_WRONLY, 0o644)
			if errno == 0 {
				f.Close()
			}
			return errno
		}, 0},
		{"symlink", func() experimentalsys.Errno { return g.Symlink("d/f", fx.r("l")) }, 0},
		{"link", func() experimentalsys.Errno { return g.Link(fx.r("d/f"), fx.r("h")) }, 0},
		{"mkdir past the cap", func() experimentalsys.Errno { return g.Mkdir(fx.r("e"), 0o755) }, errnoQuota},
		{"create past the cap", func() experimentalsys.Errno {
			_, errno := g.OpenFile(fx.r("g"), experimentalsys.O_CREAT|experimentalsys.O_WRONLY, 0o644)
			return errno
		}, errnoQuota},
		{"symlink past the cap", func() experimentalsys.Errno { return g.Symlink("d", fx.r("l2")) }, errnoQuota},
		{"link past the cap", func() experimentalsys.Errno { return g.Link(fx.r("h"), fx.r("h2")) }, errnoQuota},
		{"open existing with O_CREAT", func() experimentalsys.Errno {
			f, errno := g.OpenFile(fx.r("h"), experimentalsys.O_CREAT|experimentalsys.O_WRONLY, 0o644)
			if errno == 0 {
				f.Close()
			}
			return errno
		}, 0},
		{"rename within", func() experimentalsys.Errno { return g.Rename(fx.r("h"), fx.r("d/h")) }, 0},
		{"unlink", func() experimentalsys.Errno { return g.Unlink(fx.r("l")) }, 0},
		{"mkdir in the room made", func() experimentalsys.Errno { return g.Mkdir(fx.r("e"), 0o755) }, 0},
		{"rmdir", func() experimentalsys.Errno { return g.Rmdir(fx.r("e")) }, 0},
	}
	for _, st := range steps {
		if got := st.op(); got != st.want {
			t.Errorf("%s: %v, want %v", st.name, got, st.want)
		}
	}
	assertCounts(t, q, fx.root)
}

// TestGuestFSQuotaConsistent runs a long random mix of the guest's changes
// and file helper calls on one session quota (the dispatcher's, as a
// session shares it), then checks its counts against a walk of the root.
func TestGuestFSQuotaConsistent(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := hostcalls.NewDispatcher(root, nil, hostcalls.DispatcherOptions{DiskQuotaBytes: 1 << 20, DiskQuotaFiles: 60})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	q := d.DiskQuota()
	g, err := wasm.NewGuestFS(root, nil, q)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	fx := &hostFixture{base: base, root: root, fs: g}
	rng := rand.New(rand.NewPCG(9, 9))
	names := []string{"a", "b", "c", "d/a", "d/b", "d/e/a", "l1", "l2"}
	var open []experimentalsys.File
	for i := 0; i < 3000; i++ {
		name := fx.r(names[rng.IntN(len(names))])
		other := fx.r(names[rng.IntN(len(names))])
		rel := strings.TrimPrefix(name, fx.r(""))
		switch rng.IntN(13) {
		case 11:
			d.FS().Write(rel, strings.Repeat("w", rng.IntN(150<<10)))
		case 12:
			d.FS().Append(rel, strings.Repeat("a", rng.IntN(150<<10)))
		case 0:
			f, errno := fx.fs.OpenFile(name, experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644)
			if errno == 0 {
				open = append(open, f)
			}
		case 1:
			if len(open) > 0 {
				f := open[rng.IntN(len(open))]
				f.Pwrite(make([]byte, rng.IntN(200<<10)), int64(rng.IntN(400<<10)))
			}
		case 2:
			if len(open) > 0 {
				open[rng.IntN(len(open))].Truncate(int64(rng.IntN(300 << 10)))
			}
		case 3:
			if len(open) > 0 {
				k := rng.IntN(len(open))
				open[k].Close()
				open = append(open[:k], open[k+1:]...)
			}
		case 4:
			fx.fs.Unlink(name)
		case 5:
			fx.fs.Mkdir(name, 0o755)
		case 6:
			fx.fs.Rmdir(name)
		case 7:
			fx.fs.Rename(name, other)
		case 8:
			fx.fs.Link(name, other)
		case 9:
			fx.fs.Symlink(strings.TrimPrefix(other, fx.r("")), name)
		case 10:
			f, errno := fx.fs.OpenFile(name, experimentalsys.O_WRONLY|experimentalsys.O_TRUNC, 0)
			if errno == 0 {
				f.Write(make([]byte, rng.IntN(100<<10)))
				f.Close()
			}
		}
		if used, files := q.Usage(); used > 1<<20 || files > 60 {
			t.Fatalf("step %d: the quota counts %d bytes, %d files: past its caps", i, used, files)
		}
	}
	for _, f := range open {
		f.Close()
	}
	assertCounts(t, q, fx.root)
}

// writeGuest creates name through the guest FS and writes n zero bytes.
func writeGuest(g *wasm.GuestFS, name string, n int) experimentalsys.Errno {
	f, errno := g.OpenFile(name, experimentalsys.O_CREAT|experimentalsys.O_WRONLY|experimentalsys.O_TRUNC, 0o644)
	if errno != 0 {
		return errno
	}
	defer f.Close()
	_, errno = f.Write(make([]byte, n))
	return errno
}

// TestGuestFSQuotaSeesHostRemovals: space the host frees in the root
// behind the quota's back is given back when a change would pass the cap
// (the quota walks the root again instead of trusting its counts).
func TestGuestFSQuotaSeesHostRemovals(t *testing.T) {
	fx, q := newQuotaFixture(t, 1<<20, 0)
	if errno := writeGuest(fx.fs, fx.r("a"), 900<<10); errno != 0 {
		t.Fatal(errno)
	}
	if err := os.Remove(filepath.Join(fx.root, "a")); err != nil { // the host, not the guest
		t.Fatal(err)
	}
	if errno := writeGuest(fx.fs, fx.r("b"), 900<<10); errno != 0 {
		t.Fatalf("a write into space the host freed: %v", errno)
	}
	assertCounts(t, q, fx.root)
}

// TestGuestFSQuotaSeesHostAdditions: files others put into the root (a
// fork's copy, the host, another process) count before the guest could
// use the same room again: the guest cannot pass the cap through them.
func TestGuestFSQuotaSeesHostAdditions(t *testing.T) {
	const mib = 1 << 20
	fx, q := newQuotaFixture(t, 8*mib, 0)
	if err := os.WriteFile(filepath.Join(fx.root, "planted"), make([]byte, 7*mib), 0o644); err != nil {
		t.Fatal(err)
	}
	if errno := writeGuest(fx.fs, fx.r("big"), 5*mib); errno != errnoQuota {
		t.Fatalf("5 MiB into a root holding 7 of its 8 MiB: %v, want the quota's refusal", errno)
	}
	if _, err := os.Lstat(filepath.Join(fx.root, "big")); err != nil {
		t.Fatal(err) // created empty, not written
	}
	if errno := writeGuest(fx.fs, fx.r("big"), mib/2); errno != 0 {
		t.Fatalf("half a MiB in the room left: %v", errno)
	}
	assertCounts(t, q, fx.root)
	// The same through many small writes: once others have filled the
	// root, the guest's own growth stops within the least step between
	// walks (1 MiB), not at its own count's cap.
	f, errno := fx.fs.OpenFile(fx.r("drip"), experimentalsys.O_CREAT|experimentalsys.O_WRONLY, 0o644)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer f.Close()
	if err := os.WriteFile(filepath.Join(fx.root, "planted2"), make([]byte, 2*mib), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 64 {
		if _, errno = f.Write(make([]byte, 64<<10)); errno != 0 {
			break
		}
	}
	if errno != errnoQuota {
		t.Fatalf("writing on: %v, want the quota's refusal", errno)
	}
	if n := hostSize(t, fx.root, "drip"); n > mib {
		t.Errorf("the guest wrote %d bytes into a root others had filled", n)
	}
}

// TestGuestFSQuotaWalkKeepsOpenUnlinked: a walk of the root (which cannot
// see a removed file the guest holds open) keeps counting that file's
// bytes, so removing open files and forcing a walk frees nothing.
func TestGuestFSQuotaWalkKeepsOpenUnlinked(t *testing.T) {
	const mib = 1 << 20
	fx, q := newQuotaFixture(t, 4*mib, 0)
	f, errno := fx.fs.OpenFile(fx.r("held"), experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0o644)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer f.Close()
	if _, errno := f.Write(make([]byte, 3*mib)); errno != 0 {
		t.Fatal(errno)
	}
	if errno := fx.fs.Unlink(fx.r("held")); errno != 0 {
		t.Fatal(errno)
	}
	q.Remeasure()
	if errno := writeGuest(fx.fs, fx.r("more"), 2*mib); errno != errnoQuota {
		t.Fatalf("2 MiB with 3 MiB held open of a 4 MiB quota: %v, want the quota's refusal", errno)
	}
	if errno := f.Close(); errno != 0 {
		t.Fatal(errno)
	}
	if errno := writeGuest(fx.fs, fx.r("more"), 2*mib); errno != 0 {
		t.Fatalf("2 MiB after the close: %v", errno)
	}
	assertCounts(t, q, fx.root)
}

// TestGuestFSNoEntryPastPathMax: a folder may not be moved into a deep one
// where its content would lie at host paths of PATH_MAX or more. Out of
// reach of every walk by path, such files would drop out of the disk
// quota's count at its next walk, and the guest could fill the disk.
func TestGuestFSNoEntryPastPathMax(t *testing.T) {
	fx, q := newQuotaFixture(t, 1<<20, 0)
	g := fx.fs
	name := strings.Repeat("d", 200)
	chain := func(top string) string {
		p := top
		if errno := g.Mkdir(fx.r(p), 0o755); errno != 0 {
			t.Fatal(errno)
		}
		for range 12 {
			p += "/" + name
			if errno := g.Mkdir(fx.r(p), 0o755); errno != 0 {
				t.Fatalf("mkdir at %d characters: %v", len(fx.r(p)), errno)
			}
		}
		return p
	}
	a, b := chain("a"), chain("b")
	if errno := writeGuest(g, fx.r(a+"/f"), 600<<10); errno != 0 {
		t.Fatal(errno)
	}
	if errno := g.Rename(fx.r("a"), fx.r(b+"/a")); errno != experimentalsys.ENAMETOOLONG {
		t.Errorf("moving a 2400-character chain under another: %v, want ENAMETOOLONG", errno)
	}
	q.Remeasure()
	if errno := writeGuest(g, fx.r("g"), 600<<10); errno != errnoQuota {
		t.Errorf("a second 600 KiB in a 1 MiB quota: %v, want the quota's refusal", errno)
	}
	assertCounts(t, q, fx.root)
	// A shallow move still works.
	if errno := g.Rename(fx.r("a"), fx.r("b/a")); errno != 0 {
		t.Errorf("a shallow move: %v", errno)
	}
}

// TestGuestFSOpenFilesCapped: a guest may hold at most MaxOpenHostFiles
// host files open at once (each is a descriptor of the whole process); the
// next open is refused (EMFILE once translated), a close makes room, and
// closing the GuestFS gives its count back to the process.
func TestGuestFSOpenFilesCapped(t *testing.T) {
	fx, _ := newQuotaFixture(t, 0, 0)
	g := fx.fs
	if errno := writeGuest(g, fx.r("f"), 1); errno != 0 {
		t.Fatal(errno)
	}
	_, before := g.OpenHostFiles()
	var open []experimentalsys.File
	defer func() {
		for _, f := range open {
			f.Close()
		}
	}()
	for range wasm.MaxOpenHostFiles {
		f, errno := g.OpenFile(fx.r("f"), experimentalsys.O_RDONLY, 0)
		if errno != 0 {
			t.Fatalf("open %d: %v", len(open)+1, errno)
		}
		open = append(open, f)
	}
	if _, errno := g.OpenFile(fx.r("f"), experimentalsys.O_RDONLY, 0); errno != experimentalsys.ERANGE {
		t.Fatalf("open past the cap: %v, want ERANGE (EMFILE for the guest)", errno)
	}
	if _, errno := g.OpenFile(fx.r("."), experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0); errno != experimentalsys.ERANGE {
		t.Fatalf("a folder past the cap: %v", errno)
	}
	if mine, all := g.OpenHostFiles(); mine != wasm.MaxOpenHostFiles || all != before+wasm.MaxOpenHostFiles {
		t.Errorf("counts %d, %d", mine, all)
	}
	open[0].Close()
	f, errno := g.OpenFile(fx.r("f"), experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		t.Fatalf("open after a close: %v", errno)
	}
	open[0] = f
	g.Close()
	if _, all := g.OpenHostFiles(); all != before {
		t.Errorf("after Close the process counts %d open guest files, want %d", all, before)
	}
}

// TestGuestFSNoEntryPastPathMaxThroughLink: a short name that goes through
// a link to a deep folder cannot make an entry past PATH_MAX either.
func TestGuestFSNoEntryPastPathMaxThroughLink(t *testing.T) {
	fx, _ := newQuotaFixture(t, 0, 0)
	g := fx.fs
	name := strings.Repeat("d", 200)
	p := "a"
	if errno := g.Mkdir(fx.r(p), 0o755); errno != 0 {
		t.Fatal(errno)
	}
	for range 12 {
		p += "/" + name
		if errno := g.Mkdir(fx.r(p), 0o755); errno != 0 {
			t.Fatal(errno)
		}
	}
	if errno := g.Symlink(p, fx.r("s")); errno != 0 {
		t.Fatal(errno)
	}
	var errno experimentalsys.Errno
	q := "s"
	for range 12 {
		q += "/" + name
		if errno = g.Mkdir(fx.r(q), 0o755); errno != 0 {
			break
		}
	}
	if errno != experimentalsys.ENAMETOOLONG {
		t.Errorf("mkdir through the link past PATH_MAX: %v, want ENAMETOOLONG", errno)
	}
	if errno := writeGuest(g, fx.r(path.Dir(q)+"/"+strings.Repeat("f", 250)), 1); errno != experimentalsys.ENAMETOOLONG {
		t.Errorf("a file through the link past PATH_MAX: %v", errno)
	}
	err := filepath.WalkDir(fx.root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if len(p) >= 4096 {
			return fmt.Errorf("%d-byte path", len(p))
		}
		return nil
	})
	if err != nil {
		t.Errorf("the root holds an entry past PATH_MAX: %v", err)
	}
}
