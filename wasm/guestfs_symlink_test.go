package wasm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"
	"golang.org/x/sys/unix"

	"github.com/wasmeval/wasmeval/wasm"
)

// hostFixture is a session root with no links planted by the host, so that
// every symlink in it is the guest's:
//
//	base/secret.txt         next to the root: what an escape would reach
//	base/outside/secret.txt
//	base/root/hello.txt, base/root/sub/inner.txt, base/root/sub/deep/x.txt
type hostFixture struct {
	base, root string
	fs         *wasm.GuestFS
}

func newHostFixture(t *testing.T, quota wasm.DiskQuota) *hostFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fx := &hostFixture{base: base, root: filepath.Join(base, "root")}
	for name, data := range map[string]string{
		"secret.txt":          "secret",
		"outside/secret.txt":  "secret",
		"root/hello.txt":      "hello",
		"root/sub/inner.txt":  "inner",
		"root/sub/deep/x.txt": "x",
	} {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, err := wasm.NewGuestFS(fx.root, nil, quota)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	fx.fs = g
	return fx
}

// r is the wazero-style path of name inside the root.
func (fx *hostFixture) r(name string) string { return gfsRel(fx.root) + "/" + name }

// hostEscapes opens root+"/"+p as host code would (the kernel follows every
// link) and returns where it really landed when that is outside the root.
// p is not cleaned: "l/.." must reach the kernel as written.
func hostEscapes(t *testing.T, root, p string) (string, bool) {
	t.Helper()
	fd, err := unix.Open(root+"/"+p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false // nothing there, or a loop: nothing reached
	}
	defer unix.Close(fd)
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		t.Fatal(err)
	}
	if real == root || strings.HasPrefix(real, root+"/") {
		return real, false
	}
	return real, true
}

// lexicallyInside reports whether p, read as text from the root, never
// goes above it: the paths whose host resolution the guest's links must
// keep inside.
func lexicallyInside(p string) bool {
	depth := 0
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "", ".":
		case "..":
			if depth--; depth < 0 {
				return false
			}
		default:
			depth++
		}
	}
	return true
}

// assertHostConfined checks the given host paths and, for every symlink in
// the root at depth d, the link followed by "/.." up to d times (back to
// the root, lexically): none may lead out of the root. (A path that leaves
// the root lexically, as "top_link/../..", leaves it on the host too, and
// says nothing about links.) It also checks that every link's text points
// strictly downward.
func assertHostConfined(t *testing.T, root string, probes ...string) {
	t.Helper()
	for _, p := range probes {
		if !lexicallyInside(p) {
			t.Fatalf("probe %q leaves the root lexically: fix the test", p)
		}
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		target, err := os.Readlink(p)
		if err != nil {
			return err
		}
		for _, c := range strings.Split(target, "/") {
			if c == "" || c == "." || c == ".." {
				t.Errorf("link %s -> %q does not point strictly downward", rel, target)
				break
			}
		}
		probe := rel
		for range strings.Count(rel, "/") + 1 {
			probe += "/.."
			probes = append(probes, probe, probe+"/hello.txt")
		}
		probes = append(probes, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probes {
		if real, out := hostEscapes(t, root, p); out {
			t.Errorf("on the host, %s leads out of the root to %s", p, real)
		}
	}
}

func TestGuestFSSymlinkPolicy(t *testing.T) {
	fx := newHostFixture(t, nil)
	abs := func(name string) string { return fx.root + "/" + name }
	tests := []struct {
		name, target, link string
		want               experimentalsys.Errno
		stored             string // the link's text on the host, when created
	}{
		{name: "plain name", target: "hello.txt", link: "a1", stored: "hello.txt"},
		{name: "plain names", target: "sub/deep/x.txt", link: "a2", stored: "sub/deep/x.txt"},
		{name: "dangling plain name", target: "later", link: "a3", stored: "later"},
		{name: "plain name in a subdir", target: "inner.txt", link: "sub/a4", stored: "inner.txt"},
		{name: "absolute below the link's dir", target: abs("sub/inner.txt"), link: "a5", stored: "sub/inner.txt"},
		{name: "absolute below a subdir link's dir", target: abs("sub/deep/x.txt"), link: "sub/a6", stored: "deep/x.txt"},
		{name: "dot", target: ".", link: "b1", want: experimentalsys.EPERM},
		{name: "dotdot", target: "..", link: "b2", want: experimentalsys.EPERM},
		{name: "dot slash name", target: "./hello.txt", link: "b3", want: experimentalsys.EPERM},
		{name: "name then dotdot", target: "sub/..", link: "b4", want: experimentalsys.EPERM},
		{name: "down and up", target: "sub/../hello.txt", link: "b5", want: experimentalsys.EPERM},
		{name: "up from a subdir", target: "../hello.txt", link: "sub/b6", want: experimentalsys.EPERM},
		{name: "double slash", target: "sub//inner.txt", link: "b7", want: experimentalsys.EPERM},
		{name: "trailing slash", target: "sub/", link: "b8", want: experimentalsys.EPERM},
		{name: "trailing dot", target: "sub/.", link: "b9", want: experimentalsys.EPERM},
		{name: "empty", target: "", link: "b10", want: experimentalsys.ENOENT},
		{name: "absolute root itself", target: fx.root, link: "c1", want: experimentalsys.EPERM},
		{name: "absolute root with slash", target: fx.root + "/", link: "c2", want: experimentalsys.EPERM},
		{name: "absolute root's parent", target: fx.base, link: "c3", want: experimentalsys.EPERM},
		{name: "absolute next to the root", target: fx.base + "/secret.txt", link: "c4", want: experimentalsys.EPERM},
		{name: "absolute sibling with the root's prefix", target: fx.root + "2/x", link: "c5", want: experimentalsys.EPERM},
		{name: "absolute beside the link's dir", target: abs("hello.txt"), link: "sub/c6", want: experimentalsys.EPERM},
		{name: "absolute with dotdot", target: abs("sub/../hello.txt"), link: "c7", want: experimentalsys.EPERM},
		{name: "absolute with dot", target: abs("./hello.txt"), link: "c8", want: experimentalsys.EPERM},
		{name: "absolute etc passwd", target: "/etc/passwd", link: "c9", want: experimentalsys.EPERM},
		{name: "absolute slash", target: "/", link: "c10", want: experimentalsys.EPERM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errno := fx.fs.Symlink(tt.target, fx.r(tt.link))
			if errno != tt.want {
				t.Fatalf("Symlink(%q, %s) = %v, want %v", tt.target, tt.link, errno, tt.want)
			}
			got, err := os.Readlink(filepath.Join(fx.root, tt.link))
			switch {
			case tt.want != 0 && err == nil:
				t.Errorf("refused, yet %s -> %q exists", tt.link, got)
			case tt.want == 0 && got != tt.stored:
				t.Errorf("stored %q (%v), want %q", got, err, tt.stored)
			}
		})
	}
	assertHostConfined(t, fx.root)
}

// TestGuestFSSymlinkChainsOnHost replays the chains of issue 9 and their
// siblings as a guest would run them, then resolves paths through them on
// the host, as a host tool would.
func TestGuestFSSymlinkChainsOnHost(t *testing.T) {
	type op func(fx *hostFixture) experimentalsys.Errno
	symlink := func(target, link string) op {
		return func(fx *hostFixture) experimentalsys.Errno { return fx.fs.Symlink(target, fx.r(link)) }
	}
	mkdir := func(name string) op {
		return func(fx *hostFixture) experimentalsys.Errno { return fx.fs.Mkdir(fx.r(name), 0o755) }
	}
	rmdir := func(name string) op {
		return func(fx *hostFixture) experimentalsys.Errno { return fx.fs.Rmdir(fx.r(name)) }
	}
	rename := func(from, to string) op {
		return func(fx *hostFixture) experimentalsys.Errno { return fx.fs.Rename(fx.r(from), fx.r(to)) }
	}
	link := func(from, to string) op {
		return func(fx *hostFixture) experimentalsys.Errno { return fx.fs.Link(fx.r(from), fx.r(to)) }
	}
	unlink := func(name string) op {
		return func(fx *hostFixture) experimentalsys.Errno { return fx.fs.Unlink(fx.r(name)) }
	}
	const perm = experimentalsys.EPERM
	tests := []struct {
		name   string
		ops    []op
		wants  []experimentalsys.Errno // per op; 0 = must succeed
		probes []string
	}{
		{
			name:   "g_up via a link to dot",
			ops:    []op{symlink(".", "g4"), symlink("g4/..", "g_up")},
			wants:  []experimentalsys.Errno{perm, perm},
			probes: []string{"g_up", "g_up/secret.txt", "g4/..", "g4/../secret.txt"},
		},
		{
			name:   "g_up via a link into a subdir",
			ops:    []op{symlink("sub", "g4"), symlink("g4/..", "g_up"), symlink("g4/../..", "g_up2")},
			wants:  []experimentalsys.Errno{0, perm, perm},
			probes: []string{"g_up", "g_up2", "g4/../secret.txt", "g4/../hello.txt"},
		},
		{
			name:   "l1/l1/.. through a self-referencing link",
			ops:    []op{symlink(".", "l1"), symlink("l1", "l2")},
			wants:  []experimentalsys.Errno{perm, 0},
			probes: []string{"l1/l1/..", "l1/l1/../secret.txt", "l2/..", "l2/l2/../secret.txt"},
		},
		{
			name: "sw/x swapped for a link after a link through it was made",
			ops: []op{
				mkdir("sw"), mkdir("sw/x"),
				symlink("sw/x/../../secret.txt", "p"),
				rmdir("sw/x"), symlink(".", "sw/x"), symlink("..", "sw/x"),
			},
			wants:  []experimentalsys.Errno{0, 0, perm, 0, perm, perm},
			probes: []string{"p", "sw/x/../../secret.txt", "sw/x/../../hello.txt"},
		},
		{
			name: "directory renamed over the path a link uses",
			ops: []op{
				mkdir("d"), mkdir("d/e"), symlink("d/e", "l"),
				mkdir("t"), symlink("e", "t/e2"),
				rename("d", "d_old"), rename("t", "d"), rename("d/e2", "d/e"),
			},
			wants:  []experimentalsys.Errno{0, 0, 0, 0, 0, 0, 0, 0},
			probes: []string{"l/..", "l/../hello.txt", "d/e/../../secret.txt", "d_old/e/../../hello.txt"},
		},
		{
			name: "link moved up the tree by rename",
			ops: []op{
				mkdir("a"), mkdir("a/b"), symlink("deep", "a/b/l"),
				rename("a/b/l", "l"),
			},
			wants:  []experimentalsys.Errno{0, 0, 0, 0},
			probes: []string{"l/..", "l/../secret.txt", "a/b/../../secret.txt"},
		},
		{
			name: "hard links of links, in other directories",
			ops: []op{
				symlink("inner.txt", "sub/hl"), link("sub/hl", "hl_top"),
				symlink("deep", "sub/dl"), link("sub/dl", "dl_top"), link("sub/dl", "sub/deep/dl_deeper"),
			},
			wants:  []experimentalsys.Errno{0, 0, 0, 0, 0},
			probes: []string{"hl_top/..", "dl_top/../secret.txt", "sub/deep/dl_deeper/../../../secret.txt", "sub/dl/../../secret.txt"},
		},
		{
			name: "a link replaced by a directory and back",
			ops: []op{
				symlink("sub", "s"), unlink("s"), mkdir("s"), rmdir("s"),
				symlink("sub/deep", "s"), symlink("s", "s2"),
			},
			wants:  []experimentalsys.Errno{0, 0, 0, 0, 0, 0},
			probes: []string{"s/..", "s2/..", "s2/../secret.txt"},
		},
		{
			name: "absolute targets",
			ops: []op{
				func(fx *hostFixture) experimentalsys.Errno { return fx.fs.Symlink(fx.base, fx.r("abs_parent")) },
				func(fx *hostFixture) experimentalsys.Errno { return fx.fs.Symlink(fx.root, fx.r("abs_root")) },
				func(fx *hostFixture) experimentalsys.Errno {
					return fx.fs.Symlink(fx.root+"/sub/../..", fx.r("abs_dotdot"))
				},
				func(fx *hostFixture) experimentalsys.Errno { return fx.fs.Symlink(fx.root+"/sub", fx.r("abs_sub")) },
			},
			wants:  []experimentalsys.Errno{perm, perm, perm, 0},
			probes: []string{"abs_sub/..", "abs_sub/../secret.txt"},
		},
		{
			name:   "long chains of plain links",
			ops:    []op{symlink("sub", "c1"), symlink("c1/deep", "c2"), symlink("c2", "c3"), symlink("c3/x.txt", "c4")},
			wants:  []experimentalsys.Errno{0, 0, 0, 0},
			probes: []string{"c3/..", "c3/../secret.txt", "c4/..", "c2/../secret.txt", "c1/deep/../../secret.txt"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newHostFixture(t, nil)
			for i, o := range tt.ops {
				if got := o(fx); got != tt.wants[i] {
					t.Errorf("step %d: %v, want %v", i+1, got, tt.wants[i])
				}
			}
			assertHostConfined(t, fx.root, tt.probes...)
		})
	}
}

// TestHostEscapesDetects checks the probe itself: links the guest may no
// longer make do lead out on the host.
func TestHostEscapesDetects(t *testing.T) {
	fx := newHostFixture(t, nil)
	for target, link := range map[string]string{".": "l1", "l1/..": "g_up"} {
		if err := os.Symlink(target, filepath.Join(fx.root, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"l1/l1/..", "g_up", "g_up/secret.txt"} {
		if real, out := hostEscapes(t, fx.root, p); !out {
			t.Errorf("%s: the probe says it stays inside (%s)", p, real)
		}
	}
}

// TestGuestFSEndToEndAttack runs testdata/fsguest's attack mode, a wasip1
// guest, on a root with a disk quota of 1 MiB and 50 files: the links it
// may not make are EPERM, nothing it made leads host code out, and the
// quota's refusals reach it as ENOSPC.
func TestGuestFSEndToEndAttack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a wasip1 guest")
	}
	wasmBytes := gfsBuildGuest(t)
	fx := newHostFixture(t, nil)
	q, err := wasm.NewRootQuota(fx.root, 1<<20, 50)
	if err != nil {
		t.Fatal(err)
	}
	g, err := wasm.NewGuestFS(fx.root, nil, q)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()

	ctx := context.Background()
	// The engine $WASMEVAL_ENGINE names: make test runs it on both.
	r, err := wasm.CompileModule(ctx, "", wasm.Config{}, wasmBytes, "wasmeval", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	var stdout, stderr bytes.Buffer
	cfg := wazero.NewModuleConfig().
		WithArgs("fsguest", "attack", fx.root).
		WithEnv("PWD", fx.root).
		WithStdout(&stdout).
		WithStderr(&stderr).
		WithStartFunctions().
		WithFSConfig(wazero.NewFSConfig().(sysfs.FSConfig).WithSysFSMount(g, "/"))
	mod, err := r.Instantiate(ctx, cfg, wasm.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)
	_, err = mod.ExportedFunction("_start").Call(ctx)
	if exitErr, ok := errors.AsType[*sys.ExitError](err); ok && exitErr.ExitCode() == 0 {
		err = nil
	}
	if err != nil {
		t.Fatalf("guest: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("guest output:\n%s", stdout.String())
	got := map[string]string{}
	for line := range strings.Lines(stdout.String()) {
		label, res, _ := strings.Cut(strings.TrimSuffix(line, "\n"), ": ")
		got[label] = res
	}
	want := map[string]string{
		"link/dot":                 "EPERM",
		"link/via-dot-up":          "EPERM",
		"link/mkdir":               "ok",
		"link/plain":               "ok",
		"link/via-link-up":         "EPERM",
		"link/l1-dot":              "EPERM",
		"link/l1-chain":            "EPERM",
		"link/mkdir-sw":            "ok",
		"link/through-sw":          "EPERM",
		"link/rmdir-sw-x":          "ok",
		"link/swap-sw-x":           "EPERM",
		"link/swap-sw-x-up":        "EPERM",
		"link/dot-slash":           "EPERM",
		"link/abs-inside":          "ok",
		"link/abs-inside-readlink": `"hello.txt" ok`,
		"link/abs-inside-read":     `"hello"`,
		"link/abs-parent":          "EPERM",
		"link/abs-root":            "EPERM",
		"link/hardlink-of-link":    "ok",
		"link/rename-link-down":    "ok",
		"quota/small":              "ok",
		"quota/create":             "ok",
		"quota/truncate-2GiB":      "ENOSPC",
		"quota/seek-write-2GiB":    "ENOSPC",
		"quota/writeat-1TiB":       "ENOSPC",
		"quota/write-2MiB":         "ENOSPC",
		"quota/write-512KiB":       "ok",
		"quota/close":              "ok",
		"quota/sparse-size":        "524288",
		"quota/remove-sparse":      "ok",
		"quota/write-after-remove": "ok",
	}
	for label, w := range want {
		if g, ok := got[label]; !ok {
			t.Errorf("%s: missing from the output", label)
		} else if g != w {
			t.Errorf("%s: got %s, want %s", label, g, w)
		}
	}
	if n, res, _ := strings.Cut(got["quota/mkdirs"], " "); res != "ENOSPC" || n < "1" {
		t.Errorf("quota/mkdirs: %s, want some made, then ENOSPC", got["quota/mkdirs"])
	}
	if _, files := q.Usage(); files != 50 {
		t.Errorf("the root holds %d entries, want the cap, 50", files)
	}
	assertHostConfined(t, fx.root, "g_up", "g_up2", "l1/l1/..", "l2", "p", "sw/x/../../secret.txt", "gsub/g5_moved/../..", "gsub/g5_again/../../secret.txt")
	assertCounts(t, q, fx.root)
}

// TestGuestFSRenameDirWithPlantedLink: a folder that holds (at any depth)
// an upward link the host planted may not be moved, for moved up the tree
// the link would lead host code out of the root. The kernel resolves the
// link on the host before and after the attempts.
func TestGuestFSRenameDirWithPlantedLink(t *testing.T) {
	fx := newHostFixture(t, nil)
	// root/d1/d2/up -> ../../hello.txt: root/hello.txt, inside, where the
	// host put it; under a folder one level up it would be base/hello.txt.
	if err := os.WriteFile(filepath.Join(fx.base, "hello.txt"), []byte("outside-canary"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"d1/d2/d3", "plain/p2"} {
		if err := os.MkdirAll(filepath.Join(fx.root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../../hello.txt", filepath.Join(fx.root, "d1/d2/up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../hello.txt", filepath.Join(fx.root, "d1/d2/d3/up3")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("p2", filepath.Join(fx.root, "plain/down")); err != nil {
		t.Fatal(err)
	}
	for _, mv := range [][2]string{
		{"d1/d2", "d2top"},    // the folder holding the link, one level up
		{"d1", "sub/deep/d1"}, // its parent, anywhere
		{"d1/d2/d3", "d3top"}, // a folder holding a deeper one
		{"d1/d2", "sub/d2"},   // the same depth: refused all the same
	} {
		if errno := fx.fs.Rename(fx.r(mv[0]), fx.r(mv[1])); errno != experimentalsys.EPERM {
			t.Errorf("Rename(%s, %s) = %v, want EPERM", mv[0], mv[1], errno)
		}
	}
	for _, p := range []string{"d1/d2/up", "d1/d2/d3/up3", "d2top/up", "d3top/up3"} {
		if real, out := hostEscapes(t, fx.root, p); out {
			t.Errorf("on the host, %s leads out to %s", p, real)
		}
	}
	if data, err := os.ReadFile(filepath.Join(fx.root, "d1/d2/up")); err != nil || string(data) != "hello" {
		t.Errorf("the planted link reads %q, %v; want the root's hello.txt", data, err)
	}
	// A folder of downward links only moves; one emptied of the planted
	// link moves too.
	if errno := fx.fs.Rename(fx.r("plain"), fx.r("sub/plain")); errno != 0 {
		t.Errorf("Rename(plain) = %v", errno)
	}
	for _, l := range []string{"d1/d2/up", "d1/d2/d3/up3"} {
		if errno := fx.fs.Unlink(fx.r(l)); errno != 0 {
			t.Fatalf("Unlink(%s) = %v", l, errno)
		}
	}
	if errno := fx.fs.Rename(fx.r("d1/d2"), fx.r("d2top")); errno != 0 {
		t.Errorf("Rename(d1/d2) without the link = %v", errno)
	}
	assertHostConfined(t, fx.root, "sub/plain/down/..")
}
