package hostcalls_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
)

func quotaDispatcher(t *testing.T, root string, maxBytes, maxFiles int64) *hostcalls.Dispatcher {
	t.Helper()
	d, err := hostcalls.NewDispatcher(root, nil, hostcalls.DispatcherOptions{DiskQuotaBytes: maxBytes, DiskQuotaFiles: maxFiles})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// usageOfWalk is what a fresh quota counts in root: the truth the kept
// counts must match.
func usageOfWalk(t *testing.T, root string) (int64, int64) {
	t.Helper()
	q, err := hostcalls.NewDiskQuota(root, 1<<62, 1<<62)
	if err != nil {
		t.Fatal(err)
	}
	return q.Usage()
}

func TestDiskQuotaHelpers(t *testing.T) {
	root := t.TempDir()
	d := quotaDispatcher(t, root, 1000, 6)
	steps := []struct {
		req     m
		wantErr string // "" = must succeed
	}{
		{m{"op": "write", "path": "a.txt", "content": strings.Repeat("a", 600)}, ""},
		{m{"op": "write", "path": "b.txt", "content": strings.Repeat("b", 401)}, "write('b.txt'): disk quota exceeded: the session root holds 600 bytes of its 1000 bytes (this change needs 401 bytes more)"},
		{m{"op": "append", "path": "a.txt", "content": strings.Repeat("a", 401)}, "append('a.txt'): disk quota exceeded"},
		{m{"op": "write", "path": "b.txt", "content": strings.Repeat("b", 400)}, ""},
		// Overwriting counts what the file becomes, not both copies.
		{m{"op": "write", "path": "a.txt", "content": strings.Repeat("A", 600)}, ""},
		{m{"op": "write", "path": "a.txt", "content": strings.Repeat("A", 601)}, "disk quota exceeded"},
		{m{"op": "write", "path": "a.txt", "content": "short"}, ""},
		{m{"op": "append", "path": "a.txt", "content": strings.Repeat("a", 595)}, ""},
		// Files: a.txt, b.txt, then d1, d1/d2, d1/d2/c.txt = 5; a sixth is the last.
		{m{"op": "write", "path": "d1/d2/c.txt", "content": ""}, ""},
		{m{"op": "write", "path": "e.txt", "content": ""}, ""},
		{m{"op": "write", "path": "f.txt", "content": ""}, "disk quota exceeded: the session root holds 6 of its 6 files and directories"},
		{m{"op": "append", "path": "d3/f.txt", "content": ""}, "append('d3/f.txt'): disk quota exceeded"},
		{m{"op": "write", "path": "d1/d2/c.txt", "content": ""}, ""}, // replaced, not added
	}
	for i, st := range steps {
		_, msg := call(t, d, st.req)
		switch {
		case st.wantErr == "" && msg != "":
			t.Fatalf("step %d %v: %s", i, st.req["path"], msg)
		case st.wantErr != "" && !strings.Contains(msg, st.wantErr):
			t.Fatalf("step %d %v: error %q, want %q", i, st.req["path"], msg, st.wantErr)
		}
	}
	for _, name := range []string{"f.txt", "d3"} {
		if _, err := os.Lstat(filepath.Join(root, name)); err == nil {
			t.Errorf("%s was made past the quota", name)
		}
	}
	gotB, gotF := d.DiskQuota().Usage()
	wantB, wantF := usageOfWalk(t, root)
	if gotB != wantB || gotF != wantF {
		t.Errorf("the quota counts %d bytes, %d files; the root holds %d, %d", gotB, gotF, wantB, wantF)
	}
}

func TestDiskQuotaErrorIs(t *testing.T) {
	root := t.TempDir()
	d := quotaDispatcher(t, root, 10, 0)
	_, err := d.FS().Write("x", strings.Repeat("x", 11))
	if !errors.Is(err, hostcalls.ErrDiskQuota) {
		t.Fatalf("Write: %v, want ErrDiskQuota", err)
	}
	var qe *hostcalls.QuotaError
	if !errors.As(err, &qe) || qe.Files || qe.Max != 10 || qe.Asked != 11 {
		t.Errorf("QuotaError = %+v", qe)
	}
}

// TestDiskQuotaWalk: the count at the start takes sparse files at their
// full size, counts links and directories, and never follows a link.
func TestDiskQuotaWalk(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, dir := range []string{filepath.Join(root, "sub"), outside} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "big"), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil { // 1 entry, len(outside) bytes
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(root, "sub", "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil { // 1 TiB of holes
		t.Fatal(err)
	}
	f.Close()
	q, err := hostcalls.NewDiskQuota(root, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	bytes, files := q.Usage()
	if want := int64(1<<40 + len(outside)); bytes != want || files != 3 {
		t.Errorf("Usage = %d bytes, %d files; want %d, 3", bytes, files, want)
	}
	// Over its quota from the start: it may shrink, not grow.
	d := quotaDispatcher(t, root, 0, 0)
	if _, msg := call(t, d, m{"op": "write", "path": "x", "content": "x"}); !strings.Contains(msg, "holds 1.0 TiB of its 1 GiB") {
		t.Errorf("write to a root over quota: %q", msg)
	}
	if err := os.Remove(filepath.Join(root, "sub", "sparse")); err != nil {
		t.Fatal(err)
	}
	if q, _ := hostcalls.NewDiskQuota(root, -1, -1); q == nil {
		t.Fatal("no quota")
	} else if b, f := q.Usage(); b != 0 || f != 0 {
		t.Errorf("an unlimited quota counted %d bytes, %d files without need", b, f)
	}
}

// TestDiskQuotaWalkStops: a root with more entries than the cap is not
// walked to its end.
func TestDiskQuotaWalkStops(t *testing.T) {
	root := t.TempDir()
	for i := range 50 {
		if err := os.WriteFile(filepath.Join(root, strings.Repeat("f", i+1)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	q, err := hostcalls.NewDiskQuota(root, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if _, files := q.Usage(); files != 11 {
		t.Errorf("walked %d entries, want it to stop at 11", files)
	}
	d := quotaDispatcher(t, root, 0, 10)
	if _, msg := call(t, d, m{"op": "write", "path": "x", "content": ""}); !strings.Contains(msg, "disk quota exceeded") {
		t.Errorf("write to a root over its file cap: %q", msg)
	}
}

// TestNamedPipeDoesNotHang: a named pipe planted in the root is refused by
// read and append at once, not waited on.
func TestNamedPipeDoesNotHang(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	d := quotaDispatcher(t, root, 0, 0)
	done := make(chan string, 2)
	go func() {
		_, msg := call(t, d, m{"op": "read", "path": "fifo"})
		done <- msg
		_, msg = call(t, d, m{"op": "append", "path": "fifo", "content": "x"})
		done <- msg
	}()
	for _, op := range []string{"read", "append"} {
		select {
		case msg := <-done:
			if !strings.HasPrefix(msg, op+"('fifo'): ") {
				t.Errorf("%s of a named pipe: %q", op, msg)
			}
		case <-time.After(testenv.Stretch(10 * time.Second)):
			t.Fatalf("%s of a named pipe hangs", op)
		}
	}
}

// TestDiskQuotaSeesOthers: the helpers' quota walks the root again before
// it trusts its counts, so files others put in (or took out) behind its
// back count: write refuses what the real root cannot hold, and gets back
// what the host freed.
func TestDiskQuotaSeesOthers(t *testing.T) {
	const mib = 1 << 20
	root := t.TempDir()
	d := quotaDispatcher(t, root, 8*mib, 0)
	planted := filepath.Join(root, "planted")
	if err := os.WriteFile(planted, make([]byte, 7*mib), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, msg := call(t, d, m{"op": "write", "path": "x", "content": strings.Repeat("x", 5*mib)}); !strings.Contains(msg, "disk quota exceeded: the session root holds 7 MiB of its 8 MiB") {
		t.Fatalf("5 MiB into a root others filled to 7 of 8 MiB: %q", msg)
	}
	if err := os.Remove(planted); err != nil {
		t.Fatal(err)
	}
	if _, msg := call(t, d, m{"op": "write", "path": "x", "content": strings.Repeat("x", 5*mib)}); msg != "" {
		t.Fatalf("5 MiB after the host freed the room: %q", msg)
	}
	gotB, gotF := d.DiskQuota().Usage()
	wantB, wantF := usageOfWalk(t, root)
	if gotB != wantB || gotF != wantF {
		t.Errorf("the quota counts %d bytes, %d files; the root holds %d, %d", gotB, gotF, wantB, wantF)
	}
}

// TestHelperPathsWithinPathMax: a helper path that would put a file past
// PATH_MAX on the host is refused (os.Root would make it, a folder at a
// time, out of reach of the disk quota's recount and of every tool that
// walks by path).
func TestHelperPathsWithinPathMax(t *testing.T) {
	root := t.TempDir()
	d := quotaDispatcher(t, root, 0, 0)
	deep := strings.Repeat(strings.Repeat("d", 200)+"/", 30) + "f"
	for _, op := range []string{"write", "append", "read"} {
		_, msg := call(t, d, m{"op": op, "path": deep, "content": "x"})
		if !strings.Contains(msg, "a path in the session root must be shorter than 4096 bytes") {
			t.Errorf("%s of a %d-byte path: %q", op, len(deep), msg)
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("the refused calls made %d entries", len(entries))
	}
	if _, msg := call(t, d, m{"op": "write", "path": strings.Repeat("d", 200) + "/f", "content": "x"}); msg != "" {
		t.Errorf("a short path: %q", msg)
	}
}

// TestLongPathErrorsAreShort: a refused path of megabytes comes back
// quoted by its first 64 bytes, whatever the reason it is refused.
func TestLongPathErrorsAreShort(t *testing.T) {
	d := quotaDispatcher(t, t.TempDir(), 0, 0)
	for _, p := range []string{strings.Repeat("a", 1<<20), "/" + strings.Repeat("a", 1<<20), strings.Repeat("../", 1<<18), "http://" + strings.Repeat("a", 1<<20)} {
		_, msg := call(t, d, m{"op": "read", "path": p})
		if msg == "" || len(msg) > 400 {
			t.Errorf("read of a %d-byte path: a %d-byte error %.100q", len(p), len(msg), msg)
		}
	}
}

// TestHelperPathsWithinPathMaxThroughLinks: a short helper path that goes
// through a link to a deep folder may not put a file or folder past
// PATH_MAX there either, and append does not create a file through a
// dangling link.
func TestHelperPathsWithinPathMaxThroughLinks(t *testing.T) {
	root := t.TempDir()
	d := quotaDispatcher(t, root, 0, 0)
	name := strings.Repeat("d", 200)
	deep := strings.TrimSuffix(strings.Repeat(name+"/", 15), "/") // about 3000 bytes
	if err := os.MkdirAll(filepath.Join(root, deep), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(deep, filepath.Join(root, "s")); err != nil {
		t.Fatal(err)
	}
	long := "s/" + strings.Repeat(name+"/", 6) + "f"
	for _, op := range []string{"write", "append"} {
		if _, msg := call(t, d, m{"op": op, "path": long, "content": "x"}); !strings.Contains(msg, "must be shorter than 4096 bytes") {
			t.Errorf("%s through the link past PATH_MAX: %q", op, msg)
		}
	}
	if err := os.Symlink(deep+"/"+strings.Repeat("g", 250)+"/../x", filepath.Join(root, "dangling")); err != nil {
		t.Fatal(err)
	}
	if _, msg := call(t, d, m{"op": "append", "path": "dangling", "content": "x"}); !strings.Contains(msg, "symbolic link to a file that does not exist") {
		t.Errorf("append through a dangling link: %q", msg)
	}
	err := filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
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
	if _, msg := call(t, d, m{"op": "write", "path": "s/ok.txt", "content": "x"}); msg != "" {
		t.Errorf("a short file through the link: %q", msg)
	}
}
