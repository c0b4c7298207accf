package sandbox_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"golang.org/x/sys/unix"

	"github.com/wasmeval/wasmeval/wasm"
)

// npmRoot makes in root what npm install leaves: a package folder and its
// .bin link, and the links links (path in the root -> target).
func npmRoot(t *testing.T, root string, links map[string]string) {
	t.Helper()
	for _, d := range []string{"node_modules/x/bin", "node_modules/.bin", "node_modules/.pnpm/x@1/node_modules", "node_modules/.pnpm/y@2/node_modules/y"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "node_modules/x/bin/x"), []byte("cli"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range slices.Sorted(maps.Keys(links)) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(links[p], filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestForkKeepsRootLinks: fork keeps a root's links by rootlink.Safe, the
// rule replay and persistence keep. npm's node_modules/.bin links
// (../x/bin/x), which go up and down again, were refused: a session over a
// folder with npm-installed packages could not be forked. Links the host
// could not follow and stay in the root are still refused, naming the
// link, and nothing is copied.
func TestForkKeepsRootLinks(t *testing.T) {
	outside := t.TempDir()
	for _, tc := range []struct {
		name  string
		links map[string]string
		bad   string // the refused link; empty: copied
	}{
		{"npm's .bin", map[string]string{"node_modules/.bin/x": "../x/bin/x"}, ""},
		{"pnpm's store", map[string]string{"node_modules/.pnpm/x@1/node_modules/y": "../../y@2/node_modules/y"}, ""},
		{"up to the root and down", map[string]string{"node_modules/.bin/top": "../../top.txt"}, ""},
		{"absolute", map[string]string{"node_modules/.bin/abs": outside}, "node_modules/.bin/abs"},
		{"above the root", map[string]string{"node_modules/.bin/up": "../../../outside"}, "node_modules/.bin/up"},
		{"a climb after a name", map[string]string{"node_modules/.bin/y": "../x/../../top.txt"}, "node_modules/.bin/y"},
		{"a climb through a link", map[string]string{"g": "node_modules/x", "node_modules/.bin/z": "../../g/../../etc"}, "node_modules/.bin/z"},
		{"a loop", map[string]string{"node_modules/.bin/loop": "../.bin"}, "node_modules/.bin/loop"},
		{"up to the root", map[string]string{"node_modules/.bin/r": "../.."}, "node_modules/.bin/r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			npmRoot(t, src, tc.links)
			dst, err := forkFiles(t, src)
			if tc.bad != "" {
				if err == nil {
					t.Fatalf("forked; want the link %s refused", tc.bad)
				}
				for _, want := range []string{tc.bad + " is a symbolic link", "could not follow and stay in the root", "plain names"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("the error does not say %q: %v", want, err)
					}
				}
				if entries, _ := os.ReadDir(dst); len(entries) != 0 {
					t.Errorf("a refused fork left files in its root: %v", entries)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for p, target := range tc.links {
				if got, err := os.Readlink(filepath.Join(dst, p)); err != nil || got != target {
					t.Errorf("%s: the copy links to %q (%v); want %q", p, got, err, target)
				}
			}
			if tc.name == "npm's .bin" {
				if b, err := os.ReadFile(filepath.Join(dst, "node_modules/.bin/x")); err != nil || string(b) != "cli" {
					t.Errorf("node_modules/.bin/x in the copy reads %q, %v; want the copied package's cli", b, err)
				}
			}
		})
	}
}

// TestForkedLinksStayInside: the links a fork keeps are judged by their
// text and place alone, so what the new session's guest may then do to
// the copy (through its own filesystem: remove a package folder, put a
// link down from its folder in its place, to a host link that goes up)
// does not lead any of them out of the root on the host.
func TestForkedLinksStayInside(t *testing.T) {
	src := t.TempDir()
	npmRoot(t, src, map[string]string{
		"node_modules/.bin/x": "../x/bin/x",
		"node_modules/up":     "../top", // up to the root, then down
	})
	dst, err := forkFiles(t, src)
	if err != nil {
		t.Fatal(err)
	}
	dst, err = filepath.EvalSymlinks(dst)
	if err != nil {
		t.Fatal(err)
	}
	g, err := wasm.NewGuestFS(dst, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	r := func(p string) string { return strings.TrimPrefix(dst, "/") + "/" + p }
	for _, step := range []struct {
		what string
		do   func() error
	}{
		{"unlink node_modules/x/bin/x", func() error { return errnoErr(g.Unlink(r("node_modules/x/bin/x"))) }},
		{"rmdir node_modules/x/bin", func() error { return errnoErr(g.Rmdir(r("node_modules/x/bin"))) }},
		{"rmdir node_modules/x", func() error { return errnoErr(g.Rmdir(r("node_modules/x"))) }},
		{"symlink node_modules/x -> up", func() error { return errnoErr(g.Symlink("up", r("node_modules/x"))) }},
		{"mkdir top/bin", func() error { return os.MkdirAll(filepath.Join(dst, "top", "bin"), 0o755) }},
		{"write top/bin/x", func() error { return os.WriteFile(filepath.Join(dst, "top/bin/x"), []byte("top"), 0o644) }},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
	}
	for _, p := range []string{"node_modules/.bin/x", "node_modules/x", "node_modules/x/bin", "node_modules/up"} {
		fd, err := unix.Open(filepath.Join(dst, p), unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		if real != dst && !strings.HasPrefix(real, dst+"/") {
			t.Errorf("on the host, %s leads out of the root to %s", p, real)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dst, "node_modules/.bin/x")); err != nil || string(b) != "top" {
		t.Errorf("node_modules/.bin/x reads %q, %v; want top/bin/x, where the guest's link now leads", b, err)
	}
}

// errnoErr is the guest filesystem's errno as an error, nil for 0.
func errnoErr(errno experimentalsys.Errno) error {
	if errno == 0 {
		return nil
	}
	return errno
}
