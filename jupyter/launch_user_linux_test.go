package jupyter_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wasmeval/wasmeval/jupyter"
)

// requireRoot skips tests of what happens when wasmeval runs as root.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: it tests the kernel's user when wasmeval runs as root")
	}
}

// A root that belongs to someone other than root: the kernel runs as that
// user, and the root's owner is left alone.
func TestKernelRunsAsRootsOwner(t *testing.T) {
	requireRoot(t)
	py := kernelPython(t)
	root := t.TempDir()
	const uid = 65533
	if err := os.Chown(root, uid, uid); err != nil {
		t.Fatal(err)
	}
	k, err := jupyter.StartLocal(context.Background(), jupyter.LocalOptions{
		StartOptions: jupyter.StartOptions{Root: root, Env: map[string]string{"PATH": "/usr/bin:/bin"}},
		Command:      jupyter.LaunchCommand(py, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close(context.Background()) })
	if got := run(t, k, "import os; open('mine.txt', 'w').write('x'); print(os.getuid(), os.stat('mine.txt').st_uid, os.environ['USER'])"); got != "65533 65533 65533" {
		t.Errorf("kernel uid, its file's owner and USER = %q, want 65533 65533 65533 (a uid without a name)", got)
	}
}

// Roots the kernel's user cannot have: refused with what to change, and
// nothing outside the temporary folder changes owner or mode.
func TestKernelUserRefusals(t *testing.T) {
	requireRoot(t)
	base := t.TempDir()
	// Everything below base is "outside the system's temporary folder".
	t.Setenv("TMPDIR", filepath.Join(base, "tmp"))
	os.Mkdir(filepath.Join(base, "tmp"), 0o700)
	ktmp := filepath.Join(base, "tmp", "kernel")
	os.Mkdir(ktmp, 0o700)
	conn := filepath.Join(ktmp, "kernel.json")
	os.WriteFile(conn, []byte("{}"), 0o600)

	rootOwned := filepath.Join(base, "root-owned")
	os.Mkdir(rootOwned, 0o755)
	_, err := jupyter.KernelCommand(context.Background(), jupyter.LaunchConfig{Root: rootOwned, TempDir: ktmp, ConnectionFile: conn, Python: "/usr/bin/python3"})
	if err == nil || !strings.Contains(err.Error(), "the session root "+rootOwned+" and the folder holding it belong to root") || !strings.Contains(err.Error(), "chown USER") {
		t.Errorf("a root-owned root in a root-owned folder outside the temporary folder: %v; want a refusal saying to chown it", err)
	}
	if ownerOf(t, rootOwned) != 0 {
		t.Errorf("the refused root changed owner")
	}

	closed := filepath.Join(base, "closed")
	os.Mkdir(closed, 0o700)
	os.Chmod(closed, 0o700)
	inner := filepath.Join(closed, "root")
	os.Mkdir(inner, 0o755)
	os.Chown(inner, 65533, 65533)
	_, err = jupyter.KernelCommand(context.Background(), jupyter.LaunchConfig{Root: inner, TempDir: ktmp, ConnectionFile: conn, Python: "/usr/bin/python3"})
	if err == nil || !strings.Contains(err.Error(), "the folder "+closed+" does not let it in") || !strings.Contains(err.Error(), "chmod o+x "+closed) {
		t.Errorf("a root below a folder the kernel's user cannot search: %v; want a refusal naming the folder", err)
	}
	if st, _ := os.Stat(closed); st.Mode().Perm() != 0o700 {
		t.Errorf("the closed folder's mode changed to %04o", st.Mode().Perm())
	}
}

func ownerOf(t *testing.T, p string) uint32 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Uid
}

// A session folder the manager made as root in a workspace that belongs to
// a user (serve --workspace): the kernel runs as that user, who gets the
// session folder.
func TestKernelUserOfWorkspace(t *testing.T) {
	requireRoot(t)
	base := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(base, "tmp")) // base is outside it
	os.Mkdir(filepath.Join(base, "tmp"), 0o755)    // as /tmp, open to all
	ktmp := filepath.Join(base, "tmp", "kernel")
	os.Mkdir(ktmp, 0o700)
	conn := filepath.Join(ktmp, "kernel.json")
	os.WriteFile(conn, []byte("{}"), 0o600)
	os.Chmod(base, 0o755)
	os.Chmod(filepath.Dir(base), 0o755) // t.TempDir's own folder

	ws := filepath.Join(base, "workspace")
	os.Mkdir(ws, 0o755)
	os.Chown(ws, 65533, 65533)
	root := filepath.Join(ws, "session")
	os.Mkdir(root, 0o700)
	os.WriteFile(filepath.Join(root, "uploaded.txt"), []byte("x"), 0o644)
	cmd, err := jupyter.KernelCommand(context.Background(), jupyter.LaunchConfig{Root: root, TempDir: ktmp, ConnectionFile: conn, Python: kernelPython(t)})
	if err != nil {
		t.Fatal(err)
	}
	if c := cmd.SysProcAttr.Credential; c == nil || c.Uid != 65533 {
		t.Errorf("the kernel's credential = %+v, want uid 65533 (the workspace's owner)", c)
	}
	for _, p := range []string{root, filepath.Join(root, "uploaded.txt"), ktmp} {
		if got := ownerOf(t, p); got != 65533 {
			t.Errorf("%s belongs to %d, want 65533", p, got)
		}
	}
	if got := ownerOf(t, ws); got != 65533 {
		t.Errorf("the workspace changed owner to %d", got)
	}
}
