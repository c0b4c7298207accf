package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/store"
)

// TestPersistKeepsRootLinks: a save keeps a root's links by rootlink.Safe,
// the rule fork and replay keep, and a load rebuilds them. npm's
// node_modules/.bin links (../x/bin/x) were dropped: a persisted session
// over npm-installed packages came back without them. Links the host could
// not follow and stay in the root are still left out of the save, and a
// stored record holding one (a store written by something else, or
// tampered with) fails the load before the root is touched.
func TestPersistKeepsRootLinks(t *testing.T) {
	kept := map[string]string{
		"node_modules/.bin/x":                   "../x/bin/x",
		"node_modules/.pnpm/x@1/node_modules/y": "../../y@2/node_modules/y",
		"node_modules/.bin/top":                 "../../top.txt",
	}
	dropped := map[string]string{
		"node_modules/.bin/abs":  "/etc/passwd",
		"node_modules/.bin/up":   "../../../outside",
		"node_modules/.bin/y":    "../x/../../top.txt", // a climb after a name
		"node_modules/.bin/loop": "../.bin",
		"node_modules/.bin/r":    "../..",
	}
	src := t.TempDir()
	for _, d := range []string{"node_modules/x/bin", "node_modules/.bin", "node_modules/.pnpm/x@1/node_modules", "node_modules/.pnpm/y@2/node_modules/y"} {
		if err := os.MkdirAll(filepath.Join(src, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(src, "node_modules/x/bin/x"), []byte("cli"), 0o755)
	for _, links := range []map[string]string{kept, dropped} {
		for p, target := range links {
			if err := os.Symlink(target, filepath.Join(src, p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, files, err := diffRoot(src, nil, time.Now(), false)
	if err != nil {
		t.Fatal(err)
	}
	for p := range kept {
		if !slices.ContainsFunc(files, func(f store.File) bool { return f.Path == p && string(f.Data) == kept[p] }) {
			t.Errorf("the save left out %s -> %s", p, kept[p])
		}
	}
	for p := range dropped {
		if slices.ContainsFunc(files, func(f store.File) bool { return f.Path == p }) {
			t.Errorf("the save kept %s -> %s", p, dropped[p])
		}
	}
	dst := filepath.Join(t.TempDir(), "root")
	if err := restoreRoot(dst, files); err != nil {
		t.Fatalf("the saved root does not load: %v", err)
	}
	for p, target := range kept {
		if got, err := os.Readlink(filepath.Join(dst, p)); err != nil || got != target {
			t.Errorf("%s: the loaded root links to %q (%v); want %q", p, got, err, target)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dst, "node_modules/.bin/x")); err != nil || string(b) != "cli" {
		t.Errorf("node_modules/.bin/x in the loaded root reads %q, %v; want the package's cli", b, err)
	}

	// A stored record with a link Safe refuses, or with an entry below a
	// link, fails the load, and the root is left as it was.
	bad := map[string][]store.File{}
	for p, target := range dropped {
		bad[p] = []store.File{{Path: p, Mode: fs.ModeSymlink | 0o777, Data: []byte(target)}}
	}
	bad["below a link"] = []store.File{
		{Path: "node_modules/g", Mode: fs.ModeSymlink | 0o777, Data: []byte("x")},
		{Path: "node_modules/g/up", Mode: fs.ModeSymlink | 0o777, Data: []byte("../x")},
	}
	for name, records := range bad {
		t.Run(name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			if err := restoreRoot(root, files); err != nil {
				t.Fatal(err)
			}
			records := append(slices.Clone(files), records...)
			err := restoreRoot(root, records)
			if err == nil {
				t.Fatalf("loaded %v", records[len(files):])
			}
			want := "could not follow and stay in the root"
			if name == "below a link" {
				want = "node_modules/g/up lies below node_modules/g, which is a symbolic link"
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the error does not say %q: %v", want, err)
			}
			for _, f := range records[len(files):] {
				if _, err := os.Lstat(filepath.Join(root, f.Path)); err == nil {
					t.Errorf("the refused load made %s", f.Path)
				}
			}
			if b, err := os.ReadFile(filepath.Join(root, "node_modules/.bin/x")); err != nil || string(b) != "cli" {
				t.Errorf("the refused load changed the root: node_modules/.bin/x reads %q, %v", b, err)
			}
		})
	}
}
