package hostcalls

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Giving files to another user needs root; these tests play a kernel's
// user (nobody's uid) with no kernel.

const otherUID, otherGID = 65534, 65534

func requireRootUser(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("changing a file's owner needs root; this test runs as uid %d", os.Geteuid())
	}
}

func ownerOf(t *testing.T, p string) (uid, gid uint32) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return st.Uid, st.Gid
}

func openTestFS(t *testing.T) (*FS, string) {
	t.Helper()
	dir := t.TempDir()
	f, err := OpenFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, dir
}

// TestRootOwnerGivesHostsNewFiles: with a RootOwner set, the files and
// folders Write and Append create belong to it; files that were there
// (appended to, or the target of a link Write replaces) keep their owner;
// unset (or set to wasmeval's own uid) nothing changes.
func TestRootOwnerGivesHostsNewFiles(t *testing.T) {
	requireRootUser(t)
	f, dir := openTestFS(t)
	if _, err := f.Write("before.txt", "x"); err != nil {
		t.Fatal(err)
	}
	if uid, _ := ownerOf(t, filepath.Join(dir, "before.txt")); uid != 0 {
		t.Fatalf("with no RootOwner, a new file belongs to uid %d, want 0", uid)
	}
	if err := os.WriteFile(filepath.Join(dir, "hosts.txt"), []byte("h"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("hosts.txt", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	f.RootOwner().Set(otherUID, otherGID)
	for _, step := range []func() (string, error){
		func() (string, error) { return f.Write("a/b/c.txt", "c") },
		func() (string, error) { return f.Append("n/new.txt", "n") },
		func() (string, error) { return f.Append("before.txt", "y") },
		func() (string, error) { return f.Write("link.txt", "l") },
	} {
		if _, err := step(); err != nil {
			t.Fatal(err)
		}
	}
	// before.txt, which the host wrote before the owner was known, was
	// handed over when it was set (TestRootOwnerHandsOverEarlierFiles).
	for _, p := range []string{"a", "a/b", "a/b/c.txt", "n", "n/new.txt", "link.txt", "before.txt"} {
		if uid, gid := ownerOf(t, filepath.Join(dir, p)); uid != otherUID || gid != otherGID {
			t.Errorf("%s belongs to %d:%d, want %d:%d", p, uid, gid, otherUID, otherGID)
		}
	}
	if uid, _ := ownerOf(t, filepath.Join(dir, "hosts.txt")); uid != 0 {
		t.Errorf("hosts.txt (there before, not the FS's) now belongs to uid %d, want 0", uid)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "hosts.txt")); string(b) != "h" {
		t.Errorf("the link's target holds %q, want h", b)
	}
	f.RootOwner().Set(os.Geteuid(), 0)
	if _, _, ok := f.RootOwner().Get(); ok {
		t.Error("Set(wasmeval's own uid) left an owner set")
	}
	if _, err := f.Write("after.txt", "z"); err != nil {
		t.Fatal(err)
	}
	if uid, _ := ownerOf(t, filepath.Join(dir, "after.txt")); uid != 0 {
		t.Errorf("after unsetting, a new file belongs to uid %d, want 0", uid)
	}
}

// TestGiveDirFollowsNoLink: a link swapped in where the host has just made
// a folder (the race a guest could try) is refused, and neither it nor
// what it points to changes owner.
func TestGiveDirFollowsNoLink(t *testing.T) {
	requireRootUser(t)
	f, dir := openTestFS(t)
	outside := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"in": "real", "out": outside} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	f.RootOwner().Set(otherUID, otherGID)
	for _, name := range []string{"in", "out"} {
		if err := f.giveDir("write", name+"/x", name); err == nil {
			t.Errorf("giveDir(%s), a link: no error, want a refusal", name)
		}
		if uid, _ := ownerOf(t, filepath.Join(dir, name)); uid != 0 {
			t.Errorf("the link %s now belongs to uid %d", name, uid)
		}
	}
	for _, p := range []string{filepath.Join(dir, "real"), outside} {
		if uid, _ := ownerOf(t, p); uid != 0 {
			t.Errorf("%s, behind a link, now belongs to uid %d, want 0", p, uid)
		}
	}
	if err := f.giveDir("write", "real/x", "real"); err != nil {
		t.Fatal(err)
	}
	if uid, _ := ownerOf(t, filepath.Join(dir, "real")); uid != otherUID {
		t.Errorf("real belongs to uid %d, want %d", uid, otherUID)
	}
}

// TestRootOwnerHandsOverEarlierFiles: what the host created in the root
// before the owner was known (a session's files written before its first
// kernel started) is given to the owner when it is set, so the kernel can
// edit it in place; an entry replaced since, or a link planted at its
// path, is left alone, and so is what the link points to.
func TestRootOwnerHandsOverEarlierFiles(t *testing.T) {
	requireRootUser(t)
	f, dir := openTestFS(t)
	outside := filepath.Join(t.TempDir(), "outside.txt")
	if err := os.WriteFile(outside, []byte("o"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, step := range []func() (string, error){
		func() (string, error) { return f.Write("data/in.csv", "a,b\n") },
		func() (string, error) { return f.Append("logs/run.log", "one\n") },
		func() (string, error) { return f.Write("replaced.txt", "host") },
		func() (string, error) { return f.Write("swapped.txt", "host") },
	} {
		if _, err := step(); err != nil {
			t.Fatal(err)
		}
	}
	// Something else took two of those paths since: a hard link to a file
	// outside, a symbolic link.
	if err := os.Remove(filepath.Join(dir, "replaced.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, filepath.Join(dir, "replaced.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "swapped.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "swapped.txt")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"data", "data/in.csv", "logs", "logs/run.log"} {
		if uid, _ := ownerOf(t, filepath.Join(dir, p)); uid != 0 {
			t.Fatalf("%s belongs to uid %d before an owner is set, want 0", p, uid)
		}
	}
	f.RootOwner().Set(otherUID, otherGID)
	for _, p := range []string{"data", "data/in.csv", "logs", "logs/run.log"} {
		if uid, gid := ownerOf(t, filepath.Join(dir, p)); uid != otherUID || gid != otherGID {
			t.Errorf("%s, written before the owner was known, belongs to %d:%d, want %d:%d", p, uid, gid, otherUID, otherGID)
		}
	}
	for _, p := range []string{filepath.Join(dir, "replaced.txt"), filepath.Join(dir, "swapped.txt"), outside} {
		if uid, _ := ownerOf(t, p); uid != 0 {
			t.Errorf("%s (not the host's file any more, or behind a link) now belongs to uid %d, want 0", p, uid)
		}
	}
}
