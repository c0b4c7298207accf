package rootlink_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/wasmeval/wasmeval/internal/rootlink"
)

func TestDown(t *testing.T) {
	for _, tc := range []struct {
		target string
		ok     bool
	}{
		{"x", true}, {"x/y", true}, {"a\\b", true}, {"...", true}, {"..x", true}, {"x..", true}, {".x", true},
		{"", false}, {"/etc", false}, {"/etc/passwd", false}, {"a\x00b", false},
		{"..", false}, {"../x", false}, {"x/../..", false}, {"g/..", false}, {"x/../y", false},
		{".", false}, {"./x", false}, {"x/.", false}, {"a//b", false}, {"x/", false}, {"./", false},
	} {
		t.Run(tc.target, func(t *testing.T) {
			err := rootlink.Down(tc.target)
			if (err == nil) != tc.ok {
				t.Fatalf("Down(%q) = %v; want ok %v", tc.target, err, tc.ok)
			}
			if err != nil && !strings.Contains(err.Error(), rootlink.Rule) {
				t.Errorf("the error does not state the rule: %v", err)
			}
		})
	}
}

func TestSafe(t *testing.T) {
	for _, tc := range []struct {
		name, rel, target string
		why               string // in the error; empty: safe
	}{
		{"down", "l", "d/x", ""},
		{"down from a folder", "d/m", "x", ""},
		{"dangling down", "d/m", "not/there", ""},
		{"npm's .bin", "node_modules/.bin/x", "../x/bin/x", ""},
		{"pnpm's store", "node_modules/.pnpm/a@1/node_modules/b", "../../b@2/node_modules/b", ""},
		{"up to the root, then down", "a/b/l", "../../c", ""},
		{"up and down to a sibling", "d/l", "../e", ""},
		{"up and into its own folder's sibling file", "d/l", "../d2/x", ""},
		{"into its own folder, down", "d/l", "../d/x", ""},
		{"a name that looks like dots", "d/l", "../..x/...", ""},

		{"empty", "l", "", "empty or absolute"},
		{"absolute", "l", "/etc", "empty or absolute"},
		{"absolute below the root", "d/l", "/r/d/x", "empty or absolute"},
		{"NUL", "d/l", "../a\x00", "empty or absolute"},
		{"up from the root", "up", "../outside", "leads out of the root"},
		{"up too far from a folder", "d/up", "../../etc", "leads out of the root"},
		{"up too far, deep", "a/b/esc", "../../../x", "leads out of the root"},
		{"up to the root", "d/up", "..", "holds it"},
		{"up to an ancestor", "a/b/l", "../..", "holds it"},
		{"up to its own folder", "d/l", "../d", "holds it"},
		{"up to an ancestor by name", "a/b/l", "../../a", "holds it"},
		{"to itself", "d/l", "../d/l", "holds it"},
		{"through a name and up", "g_up", "g/..", "climbs after a name"},
		{"up, down, up", "d/l", "../g/../../etc", "climbs after a name"},
		{"up, down, up inside", "a/b/l", "../x/../y", "climbs after a name"},
		{"a chain", "l1", "l1/l1/..", "climbs after a name"},
		{"dot", "dot", "./a.txt", "empty or '.'"},
		{"dot after up", "d/l", ".././x", "empty or '.'"},
		{"empty part", "e", "d//x", "empty or '.'"},
		{"trailing slash", "s", "d/", "empty or '.'"},
		{"trailing slash after up", "d/s", "../e/", "empty or '.'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := rootlink.Safe(tc.rel, tc.target)
			switch {
			case tc.why == "" && err != nil:
				t.Fatalf("Safe(%q, %q) = %v; want safe", tc.rel, tc.target, err)
			case tc.why == "":
				return
			case err == nil:
				t.Fatalf("Safe(%q, %q) is safe; want refused: %s", tc.rel, tc.target, tc.why)
			}
			for _, want := range []string{tc.why, rootlink.Rule} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q: %v", want, err)
				}
			}
		})
	}
}

func TestThrough(t *testing.T) {
	links := map[string]bool{"l": true, "d/m": true}
	isLink := func(rel string) bool { return links[rel] }
	for _, tc := range []struct{ rel, via string }{
		{"l", ""}, {"d", ""}, {"d/x", ""}, {"d/m", ""}, {"dl/x", ""}, {"d/mx/y", ""},
		{"l/x", "l"}, {"l/x/y", "l"}, {"d/m/x", "d/m"}, {"d/m/x/y", "d/m"},
	} {
		via, ok := rootlink.Through(tc.rel, isLink)
		if via != tc.via || ok != (tc.via != "") {
			t.Errorf("Through(%q) = %q, %v; want %q", tc.rel, via, ok, tc.via)
		}
	}
}

// TestSafeHoldsAfterTheTreeChanges: a link Safe keeps must stay inside the
// root whatever the guest does to the tree after it was judged. Before
// this rule, the tape's judged a '..' after a name by whether that name was
// a link at the time: a/b/L -> ../x/../../q passed while a/x was a folder
// (or missing), and a guest that then made a/x a link (one it may make:
// down, to a/M, a host link a/M -> ../t) led L out of the root for every
// host tool that follows it. Safe refuses L by its text; the test shows on
// the real filesystem that the shape does leave the root.
func TestSafeHoldsAfterTheTreeChanges(t *testing.T) {
	root := realTempDir(t)
	os.MkdirAll(filepath.Join(root, "a", "b"), 0o755)
	os.MkdirAll(filepath.Join(root, "a", "x"), 0o755)
	os.Mkdir(filepath.Join(root, "t"), 0o755)
	// q beside the root, for the escape to reach.
	if err := os.WriteFile(filepath.Join(filepath.Dir(root), "q"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rootlink.Safe("a/M", "../t"); err != nil {
		t.Fatalf("a/M -> ../t: %v", err)
	}
	os.Symlink("../t", filepath.Join(root, "a", "M"))
	if err := rootlink.Safe("a/b/L", "../x/../../q"); err == nil {
		t.Error("a/b/L -> ../x/../../q is safe; want refused: its '..' after x is taken from wherever x leads")
	}
	os.Symlink("../x/../../q", filepath.Join(root, "a", "b", "L"))
	if real, out := leaves(t, root, "a/b/L"); out {
		t.Fatalf("with a/x a folder, a/b/L already leads out, to %s", real)
	}
	// What the guest may do: a/x becomes a link down from its folder.
	os.Remove(filepath.Join(root, "a", "x"))
	if err := rootlink.Down("M"); err != nil {
		t.Fatal(err)
	}
	os.Symlink("M", filepath.Join(root, "a", "x"))
	if _, out := leaves(t, root, "a/b/L"); !out {
		t.Fatal("a/b/L stays inside: the test no longer shows the shape that Safe must refuse")
	}
}

// TestSafeLinksStayInside builds random roots (fixed seeds) of folders and
// links, each link kept only when Safe says so at its place, then lets the
// guest change the tree as it may: remove folders and links, and make
// links down from their folder (Down), in place of what was there. Every
// link, and every path through it, must then resolve inside the root on
// the host, with the kernel.
func TestSafeLinksStayInside(t *testing.T) {
	names := []string{"a", "b", "c"}
	// A target climbs, names, and climbs again after a name, the shape
	// that Safe must refuse, often.
	randomTarget := func(r *rand.Rand) string {
		var parts []string
		for range r.IntN(3) {
			parts = append(parts, "..")
		}
		for range 1 + r.IntN(3) {
			parts = append(parts, names[r.IntN(len(names))])
			for range r.IntN(3) {
				parts = append(parts, "..")
			}
		}
		return strings.Join(parts, "/")
	}
	randomPath := func(r *rand.Rand) string {
		var parts []string
		for range 1 + r.IntN(3) {
			parts = append(parts, names[r.IntN(len(names))])
		}
		return strings.Join(parts, "/")
	}
	kept, probes := 0, 0
	for seed := range uint64(100) {
		r := rand.New(rand.NewPCG(seed, 9))
		root := baitedRoot(t, names)
		links := map[string]bool{}
		isLink := func(rel string) bool { return links[rel] }
		exists := func(rel string) bool {
			_, err := os.Lstat(filepath.Join(root, rel))
			return err == nil
		}
		// The host's tree: folders, and links Safe keeps.
		for range 40 {
			rel := randomPath(r)
			if _, via := rootlink.Through(rel, isLink); via || exists(rel) {
				continue
			}
			if r.IntN(2) == 0 {
				os.MkdirAll(filepath.Join(root, rel), 0o755)
				continue
			}
			target := randomTarget(r)
			if rootlink.Safe(rel, target) != nil {
				continue
			}
			os.MkdirAll(filepath.Join(root, path.Dir(rel)), 0o755)
			if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
				t.Fatal(err)
			}
			links[rel] = true
			kept++
		}
		// The guest's changes: what it removes it may replace with a link
		// down from its folder. Host links that Down refuses stay where
		// they are, as do the folders that hold them (wasm.GuestFS).
		for range 40 {
			rel := randomPath(r)
			if _, via := rootlink.Through(rel, isLink); via {
				continue
			}
			if holdsHostLink(links, rel) {
				continue
			}
			os.RemoveAll(filepath.Join(root, rel))
			delete(links, rel)
			target := names[r.IntN(len(names))] // a sibling, most often
			if r.IntN(3) == 0 {
				target = randomPath(r)
			}
			if rootlink.Down(target) != nil || r.IntN(3) == 0 {
				continue
			}
			os.MkdirAll(filepath.Join(root, path.Dir(rel)), 0o755)
			if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
				t.Fatal(err)
			}
			links[rel] = true
		}
		// Every link, and every path through it, stays inside.
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			for _, probe := range []string{rel, rel + "/a", rel + "/a/b", rel + "/b/a/b"} {
				probes++
				if real, out := leaves(t, root, probe); out {
					target, _ := os.Readlink(p)
					t.Errorf("seed %d: %s (the link %s -> %s) leads out of the root to %s", seed, probe, rel, target, real)
				}
			}
			return nil
		})
	}
	if kept < 100 || probes < 1000 {
		t.Fatalf("the random roots kept %d host links and resolved %d probes: too few to say anything", kept, probes)
	}
}

// holdsHostLink reports whether rel is, or is a folder holding, a link
// that Down refuses (one the host planted), which the guest may neither
// move nor replace by renaming; it may remove the link itself, not a
// folder holding one (rmdir needs it empty, which it cannot make it
// without removing the link first, which is allowed: so the test lets it
// remove only the link).
func holdsHostLink(links map[string]bool, rel string) bool {
	for l := range links {
		if l != rel && strings.HasPrefix(l, rel+"/") {
			return true
		}
	}
	return false
}

// leaves resolves rel under root with the kernel and reports where it
// leads and whether that is outside root. A path that does not resolve
// (dangling, a loop) leads nowhere.
func leaves(t *testing.T, root, rel string) (string, bool) {
	t.Helper()
	fd, err := unix.Open(filepath.Join(root, rel), unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return "", false
		}
		t.Fatalf("%s: %v", rel, err)
	}
	defer unix.Close(fd)
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		t.Fatal(err)
	}
	return real, real != root && !strings.HasPrefix(real, root+"/")
}

// baitedRoot is an empty root three folders down a temporary folder whose
// every level outside it holds folders by the given names, two deep, so
// that a path that leads out of the root finds something there.
func baitedRoot(t *testing.T, names []string) string {
	t.Helper()
	dir := realTempDir(t)
	for range 3 {
		for _, a := range names {
			for _, b := range names {
				if err := os.MkdirAll(filepath.Join(dir, a, b), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
		dir = filepath.Join(dir, "o")
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// realTempDir is a temporary folder by its path with no link in it.
func realTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// FuzzSafe: a link Safe keeps leads, as text from its own folder, to a
// path inside the root that does not hold it (nor is it, but for a link
// the guest may make: "x" at x, a loop of one), and has no '..' after a
// name; one Down keeps, Safe keeps too.
func FuzzSafe(f *testing.F) {
	for _, s := range [][2]string{
		{"node_modules/.bin/x", "../x/bin/x"}, {"l", "d/x"}, {"a/b/l", "../../c"}, {"d/l", "../d"}, {"d/l", "l"},
		{"g_up", "g/.."}, {"d/l", "../g/../../etc"}, {"up", "../outside"}, {"e", "d//x"}, {"l", "/etc"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, rel, target string) {
		if rel == "" || rel == "." || path.Clean(rel) != rel || path.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
			return // not a path in a root as a walk finds it
		}
		down, safe := rootlink.Down(target) == nil, rootlink.Safe(rel, target) == nil
		if down && !safe {
			t.Fatalf("Down keeps %q but Safe(%q) refuses it", target, rel)
		}
		if !safe {
			return
		}
		to := path.Join(path.Dir(rel), target)
		if to == "." || to == ".." || strings.HasPrefix(to, "../") || path.IsAbs(to) {
			t.Fatalf("Safe(%q, %q) keeps a link that leads to %q, outside the root", rel, target, to)
		}
		if strings.HasPrefix(rel, to+"/") || to == rel && !down {
			t.Fatalf("Safe(%q, %q) keeps a link to %q, which holds it", rel, target, to)
		}
		named := false
		for _, part := range strings.Split(target, "/") {
			switch {
			case part != "..":
				named = true
			case named:
				t.Fatalf("Safe(%q, %q) keeps a '..' after a name", rel, target)
			}
		}
	})
}
