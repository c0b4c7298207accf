package wasm

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// orderNames are created in this scrambled order; a guest must list them sorted.
var orderNames = []string{"m", "b", "zz", "a", "k9", "Q", "c", "k10", "_x", "y"}

// newOrderRoot makes a root at base/name holding orderNames (files, and a
// folder "d" with the same names inside) and returns its GuestFS.
func newOrderRoot(t *testing.T, base, name string, clock bool) (*GuestFS, string) {
	t.Helper()
	root := filepath.Join(base, name)
	if err := os.MkdirAll(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range orderNames {
		for _, dir := range []string{root, filepath.Join(root, "d")} {
			if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if clock {
		undo := SetRootClock(root, func() time.Time { return time.Unix(1e9, 0) })
		t.Cleanup(undo)
	}
	g, err := NewGuestFS(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g, strings.TrimPrefix(root, "/")
}

// orderView is what a guest sees of a root: each folder's listing (read
// n entries at a time, rewound and read again) with its d_ino, and each
// entry's stat device and inode, by path in the root.
func orderView(t *testing.T, g *GuestFS, root string, n int) string {
	t.Helper()
	var b strings.Builder
	for _, dir := range []string{"", "/d"} {
		f, errno := g.OpenFile(root+dir, experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
		if errno != 0 {
			t.Fatalf("OpenFile %s: %v", dir, errno)
		}
		ino, _ := f.Ino()
		st, _ := f.Stat()
		fmt.Fprintf(&b, "dir %q ino %d fstat %d/%d\n", dir, ino, st.Dev, st.Ino)
		for pass := range 2 {
			var names []string
			for {
				dirents, errno := f.Readdir(n)
				if errno != 0 {
					t.Fatalf("Readdir: %v", errno)
				}
				for _, d := range dirents {
					names = append(names, d.Name)
					fmt.Fprintf(&b, "  pass %d %s d_ino %d\n", pass, d.Name, d.Ino)
				}
				if n <= 0 || len(dirents) < n {
					break
				}
			}
			if !slices.IsSorted(names) {
				t.Errorf("Readdir(%d) of %q, pass %d: %v, not sorted", n, dir, pass, names)
			}
			if _, errno := f.Seek(0, io.SeekStart); errno != 0 {
				t.Fatalf("Seek: %v", errno)
			}
		}
		f.Close()
		for _, name := range orderNames {
			p := root + dir + "/" + name
			st, errno := g.Stat(p)
			if errno != 0 {
				t.Fatalf("Stat %s: %v", p, errno)
			}
			fmt.Fprintf(&b, "  stat %s %d/%d\n", name, st.Dev, st.Ino)
		}
	}
	return b.String()
}

// TestGuestFSListingSortedAndInodesByPath: a folder in the root lists
// sorted by name whatever the host's order (in every session), and in a
// session whose root has a clock (deterministic, recorded, replayed) the
// device and inode numbers the guest sees depend on the paths in the root
// only, so two roots in other folders holding the same tree show the same.
func TestGuestFSListingSortedAndInodesByPath(t *testing.T) {
	base := t.TempDir()
	for _, n := range []int{1, 3, 0} {
		host, hostRoot := newOrderRoot(t, base, fmt.Sprintf("host%d", n), false)
		orderView(t, host, hostRoot, n) // sorted without a clock too
	}
	g1, r1 := newOrderRoot(t, base, "recorded", true)
	g2, r2 := newOrderRoot(t, base, "replayed-elsewhere", true)
	for _, n := range []int{1, 4, 0} {
		v1, v2 := orderView(t, g1, r1, n), orderView(t, g2, r2, n)
		if v1 != v2 {
			t.Errorf("Readdir(%d): the two roots' views differ:\n%s\nvs\n%s", n, v1, v2)
		}
	}
	// Numbers are distinct per path and not the host's.
	seen := map[uint64]string{}
	for _, p := range []string{"", "/d", "/a", "/d/a", "/b"} {
		st, errno := g1.Stat(r1 + p)
		if errno != 0 {
			t.Fatal(errno)
		}
		if st.Dev != rootDev {
			t.Errorf("Stat %q: dev %d, want rootDev", p, st.Dev)
		}
		if q, dup := seen[st.Ino]; dup {
			t.Errorf("Stat %q and %q: same inode %d", p, q, st.Ino)
		}
		seen[st.Ino] = p
	}
	// The synthetic parent lists the root with the root's own number.
	parent, errno := g1.OpenFile(filepath.Dir(r1), experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer parent.Close()
	dirents, _ := parent.Readdir(0)
	rootSt, _ := g1.Stat(r1)
	for _, d := range dirents {
		if d.Name == filepath.Base(r1) && d.Ino != rootSt.Ino {
			t.Errorf("parent lists the root with d_ino %d, stat says %d", d.Ino, rootSt.Ino)
		}
	}
}

// TestGuestFSListingLargeFolder: a folder of more entries than one read
// of the host's listing (direntChunk) lists whole and sorted, read in
// chunks of any size.
func TestGuestFSListingLargeFolder(t *testing.T) {
	root := t.TempDir()
	const n = 2*direntChunk + 17
	for i := range n {
		// A scrambled order of creation: i*7919 mod n visits every i.
		name := fmt.Sprintf("f%05d", i*7919%n)
		if err := os.WriteFile(filepath.Join(root, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, err := NewGuestFS(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, chunk := range []int{0, 1, 500, direntChunk, 5000} {
		f, errno := g.OpenFile(strings.TrimPrefix(root, "/"), experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
		if errno != 0 {
			t.Fatal(errno)
		}
		var names []string
		for {
			dirents, errno := f.Readdir(chunk)
			if errno != 0 {
				t.Fatal(errno)
			}
			for _, d := range dirents {
				names = append(names, d.Name)
			}
			if chunk <= 0 || len(dirents) < chunk {
				break
			}
		}
		f.Close()
		if len(names) != n || !slices.IsSorted(names) || names[0] != "f00000" || names[n-1] != fmt.Sprintf("f%05d", n-1) {
			t.Errorf("Readdir(%d): %d names, sorted %v, first %q; want %d sorted from f00000", chunk, len(names), slices.IsSorted(names), names[:min(3, len(names))], n)
		}
	}
}
