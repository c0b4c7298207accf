package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/rootlink"
	"github.com/wasmeval/wasmeval/store"
)

// TestOneLinkRule: fork's copy and persistence's restore keep a link
// exactly when rootlink.Safe does, the rule replay keeps too. Persistence
// had a copy of its own that let '.' and empty parts through (a link to
// its own folder, "./x", "a//b") and refused a backslash, a plain
// character the guest may put in a link: a session holding such a link
// was saved and then could not be loaded. Fork and persistence then held
// links to the guest's rule (down only) and so refused or dropped npm's
// node_modules/.bin links, which replay kept.
func TestOneLinkRule(t *testing.T) {
	for _, target := range []string{
		"x", "x/y", "a\\b", "...", "..x", "x..", // plain names
		"../x", "../x/y", "../...", // up to the root, then down
		"../sub/x", "../sub2", // up and down into a folder beside it, or its own
		"../sub", "..", "../../x", "/etc", "/etc/passwd", "x/../..", "g/..", "../x/../y", // to a holder, out, a climb after a name
		".", "./x", "x/.", "a//b", "x/", "./", "../x/", ".././x", // '.' and empty parts
	} {
		t.Run(target, func(t *testing.T) {
			want := rootlink.Safe("sub/link", target) == nil

			// Fork: a root with the link in a subfolder.
			src, dst := t.TempDir(), t.TempDir()
			if err := os.Mkdir(filepath.Join(src, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(src, "sub", "link")); err != nil {
				t.Fatal(err)
			}
			err := copyRoot(src, dst, newCopyQuota(SessionOptions{}))
			if got := err == nil; got != want {
				t.Errorf("fork copied the link: %v (%v); the rule says %v", got, err, want)
			}
			if err != nil && !strings.Contains(err.Error(), "sub/link is a symbolic link") {
				t.Errorf("the fork's error does not name the link: %v", err)
			}

			// Persistence: a save of the root keeps the link exactly then.
			_, files, err := diffRoot(src, nil, time.Now(), false)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.ContainsFunc(files, func(f store.File) bool { return f.Path == "sub/link" }); got != want {
				t.Errorf("the save kept the link: %v; the rule says %v", got, want)
			}

			// Persistence: a record read back from the store.
			root := filepath.Join(t.TempDir(), "root")
			err = restoreRoot(root, []store.File{
				{Path: "sub", Mode: fs.ModeDir | 0o755},
				{Path: "sub/link", Mode: fs.ModeSymlink | 0o777, Data: []byte(target)},
			})
			if got := err == nil; got != want {
				t.Errorf("the restore made the link: %v (%v); the rule says %v", got, err, want)
			}
			if err != nil {
				for _, s := range []string{"the link sub/link", "plain names"} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("the restore's error does not say %q: %v", s, err)
					}
				}
			}
			got, lerr := os.Readlink(filepath.Join(root, "sub", "link"))
			switch {
			case want && (lerr != nil || got != target):
				t.Errorf("the restored link: %q, %v; want %q", got, lerr, target)
			case !want && lerr == nil:
				t.Errorf("a refused restore left a link to %q", got)
			}
		})
	}
}

// TestSaveLeavesOutwardLinks: a link the host put in a persisted session's
// root that does not lead down from its folder is not kept (design.md:
// links only as the guest may make them), as pipes are not: saved, it
// made every later load of the session fail. One that replaces a kept
// entry deletes that entry from the store.
func TestSaveLeavesOutwardLinks(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a"), 0o644)
	os.Mkdir(filepath.Join(root, "sub"), 0o755)
	os.Symlink("a.txt", filepath.Join(root, "down"))
	os.Symlink("x", filepath.Join(root, "sub", "was_down"))
	base, files, err := diffRoot(root, nil, time.Now().Add(-time.Hour), false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(files, func(f store.File) bool { return f.Path == "sub/was_down" }) {
		t.Fatalf("a link that leads down was not saved: %v", paths(files))
	}

	os.Symlink("../outside", filepath.Join(root, "up"))
	os.Symlink("/etc/passwd", filepath.Join(root, "sub", "abs"))
	os.Remove(filepath.Join(root, "sub", "was_down"))
	os.Symlink("./x", filepath.Join(root, "sub", "was_down"))
	_, delta, err := diffRoot(root, base, time.Now(), false)
	if err != nil {
		t.Fatal(err)
	}
	got := paths(delta)
	for _, p := range []string{"up", "sub/abs"} {
		if slices.Contains(got, p) {
			t.Errorf("the outward link %s was saved: %v", p, got)
		}
	}
	if i := slices.IndexFunc(delta, func(f store.File) bool { return f.Path == "sub/was_down" }); i < 0 || !delta[i].Deleted {
		t.Errorf("the kept link replaced by an outward one is not deleted from the store: %v", got)
	}

	// A full save of the same root loads.
	_, all, err := diffRoot(root, nil, time.Now(), false)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "root")
	if err := restoreRoot(dst, all); err != nil {
		t.Fatalf("the saved root does not load: %v", err)
	}
	if got, err := os.Readlink(filepath.Join(dst, "down")); err != nil || got != "a.txt" {
		t.Errorf("down: %q, %v", got, err)
	}
}

func paths(files []store.File) []string {
	var ps []string
	for _, f := range files {
		ps = append(ps, f.Path)
	}
	return ps
}
