package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/store"
)

// TestOneLinkRule: fork's copy and persistence's restore keep a link
// exactly when store.CheckLinkTarget does, the rule the guest makes links
// by. Persistence had a copy of its own that let '.' and empty parts
// through (a link to its own folder, "./x", "a//b") and refused a
// backslash, a plain character the guest may put in a link: a session
// holding such a link was saved and then could not be loaded.
func TestOneLinkRule(t *testing.T) {
	for _, target := range []string{
		"x", "x/y", "a\\b", "...", "..x", "x..", // plain names
		"../x", "..", "/etc", "/etc/passwd", "x/../..", "g/..", // out
		".", "./x", "x/.", "a//b", "x/", "./", // '.' and empty parts
	} {
		t.Run(target, func(t *testing.T) {
			want := store.CheckLinkTarget(target) == nil

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
