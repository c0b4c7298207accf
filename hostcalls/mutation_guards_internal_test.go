package hostcalls

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// These tests kill mutants of docs/mutations.md that the other tests of
// the package let live: each checks one guard directly.

// TestReadChargesBeforeReading: read asks its charge for the text's
// memory (at least the file's size) before it reads, and a refused charge
// fails the read with what to do instead. Without the charge, a read held
// its whole text in host memory whatever the session's calls held
// already.
func TestReadChargesBeforeReading(t *testing.T) {
	dir := t.TempDir()
	f, err := OpenFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text := strings.Repeat("a line of the file\n", 1<<12)
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		offset, limit int
		atLeast       int64
	}{
		{"whole", 1, 0, int64(len(text))},
		{"a selection", 2, 100, int64(len(text))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked int64
			refuse := errors.New("no room")
			_, err := f.read("big.txt", tc.offset, tc.limit, func(n int64) error { asked += n; return refuse })
			if err == nil || !strings.Contains(err.Error(), "the file was not read") || !strings.Contains(err.Error(), "offset and limit") {
				t.Fatalf("read with its charge refused: %v, want the file not read and a hint to read it in parts", err)
			}
			if asked < tc.atLeast {
				t.Fatalf("read asked its charge for %d bytes, want at least the file's %d", asked, tc.atLeast)
			}
			got, err := f.read("big.txt", tc.offset, tc.limit, func(int64) error { return nil })
			if err != nil || got == "" {
				t.Fatalf("read with room: %q, %v", got, err)
			}
		})
	}
}

// TestDiffChargesBeforeComparing: diff asks its charge for the memory of
// the comparison (at least both texts) before it makes it, and a refused
// charge fails the diff saying the texts are too large.
func TestDiffChargesBeforeComparing(t *testing.T) {
	a := strings.Repeat("one line\n", 1000)
	b := strings.Repeat("another line\n", 1000)
	var asked int64
	_, err := diff(a, b, "a", "b", func(n int64) error { asked += n; return errors.New("no room") })
	if err == nil || !strings.Contains(err.Error(), "too large to compare") {
		t.Fatalf("diff with its charge refused: %v, want too large to compare", err)
	}
	if want := int64(len(a) + len(b)); asked < want {
		t.Fatalf("diff asked its charge for %d bytes, want at least both texts' %d", asked, want)
	}
	if out, err := diff(a, b, "a", "b", func(int64) error { return nil }); err != nil || out == "" {
		t.Fatalf("diff with room: %q, %v", out, err)
	}
}

// TestReserveMoreThanTheBudget: a request larger than the whole call
// budget is refused as such (send less), not as a budget that others hold
// (wait), which waiting could never cure.
func TestReserveMoreThanTheBudget(t *testing.T) {
	b := NewCallBudget(1<<20, 1<<20)
	err := b.Reserve(1<<20 + 1)
	if err == nil || !strings.Contains(err.Error(), "more than the") || strings.Contains(err.Error(), "wait") {
		t.Fatalf("Reserve past the whole budget: %v, want a refusal that says the request is too large", err)
	}
	if b.Held() != 0 {
		t.Fatalf("a refused Reserve holds %d bytes", b.Held())
	}
}

// TestAbsolutePathOutsideTheRoot: an absolute path outside the root is
// refused as such, with the root named and no talk of '..' (which the
// guest never wrote).
func TestAbsolutePathOutsideTheRoot(t *testing.T) {
	dir := t.TempDir()
	f, err := OpenFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range []string{"/etc/passwd", filepath.Dir(dir), filepath.Join(filepath.Dir(dir), "sibling", "x.txt")} {
		_, err := f.Resolve("read", p)
		if err == nil {
			t.Fatalf("Resolve(%q) accepted a path outside the root %s", p, dir)
		}
		msg := err.Error()
		if !strings.Contains(msg, "is outside the session root "+dir) || strings.Contains(msg, "'..'") {
			t.Errorf("Resolve(%q): %q, want it to say the path is outside the session root %s, without '..'", p, msg, dir)
		}
	}
}

// TestOpenRefusesWhatIsNotAFile: Open, which the files API serves a file
// through, gives regular files only: a named pipe planted in the root or
// a folder (here through a link) is refused, without blocking.
func TestOpenRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	f, err := OpenFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(dir, "to-sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file.txt"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"pipe", "to-sub"} {
		file, _, err := f.Open(p)
		if err == nil {
			file.Close()
			t.Errorf("Open(%q) gave a handle; want it refused as not a regular file", p)
		}
	}
	file, fi, err := f.Open("file.txt")
	if err != nil || fi.Size() != 2 {
		t.Fatalf("Open of a regular file: %v", err)
	}
	file.Close()
}
