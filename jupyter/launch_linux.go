package jupyter

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Confinement of a local kernel on Linux.
//
// A Jupyter kernel is the real CPython with the host's packages: it is not
// a sandbox. Still, KernelCommand gives it three walls:
//
//   - Landlock: the kernel may read and execute anywhere the host user
//     may, but write only under the session root and its temporary folder
//     (and to /dev/null and the like). Landlock can only restrict the
//     calling process and its future children, and in Go it restricts all
//     of the process's threads at once, so wasmeval cannot restrict itself
//     between fork and exec: the command starts this same binary again
//     (/proc/self/exe) under the name kernelHelperName, and this package's
//     init function, seeing that name, applies Landlock and executes
//     Python (landlock_linux.go). Every binary that links this package can
//     therefore start confined kernels, tests included, with no
//     subcommand to wire. Where the kernel lacks Landlock the kernel runs
//     without it and a log line says so, once.
//   - A user: when wasmeval runs as root, the kernel does not. It runs as
//     the owner of the session root when that is not root (the files it
//     writes then belong to whoever owns the folder), else as nobody, set
//     with exec.Cmd's SysProcAttr.Credential (setgroups, setgid, setuid in
//     the forked child before exec; supplementary groups cleared). We
//     chose that over fastly/go-utils' privsep, which predates Go 1.16's
//     all-thread setuid, re-executes to work around it, keeps root's
//     supplementary groups and has been unmaintained since 2018; the
//     kernel needs no channel back to a privileged parent, which is what
//     privsep adds.
//   - Its environment: the host's secrets are never inherited (KernelEnv).
//
// The kernel's user must be able to reach and write the root and the
// temporary folder. A root-owned root (a session folder the manager made
// as root) is handed to the owner of the folder holding it when that is
// not root (serve's --workspace belonging to a user), else to nobody when
// it is inside the system's temporary folder (wasmeval's own workspaces,
// test folders): KernelCommand changes the owner of the root's tree, its
// temporary folder and the connection file to the kernel's user, and gives
// search permission (o+x, not listing) to the folders above them that are
// inside the system's temporary folder and lack it. Any other root-owned
// root, or a folder above the root that the kernel's user cannot search
// and that is outside the temporary folder, is refused with an error that
// says what to change. The host, as root, reads and writes the
// kernel's files as before; what it creates in the root once the kernel
// runs is given to the kernel's user (LocalKernel.User, which the runtime
// hands to the session's hostcalls.RootOwner), so the kernel can rewrite
// it in place.

// kernelHelperName is argv[0] of the confinement helper.
const kernelHelperName = "wasmeval-jupyter-kernel"

// kernelUser is the unprivileged user a kernel runs as.
type kernelUser struct {
	uid, gid uint32
	name     string
}

type confinement struct {
	// user is nil when the kernel runs as wasmeval's user.
	user *kernelUser
	// landlock is the kernel's Landlock ABI version, 0 when it has none.
	landlock int
	// writable are the folders the kernel may write.
	writable []string
}

// helperSpec is what the helper reads from its first argument.
type helperSpec struct {
	Writable []string `json:"writable"`
	ABI      int      `json:"abi"`
}

// landlockABI is the Landlock ABI the kernel runs under, 0 for none.
func (c confinement) landlockABI() int { return c.landlock }

func (c confinement) uid() int {
	if c.user == nil {
		return -1
	}
	return int(c.user.uid)
}

func (c confinement) sysProcAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{
		// Its own process group: the terminal's ^C reaches wasmeval, which
		// stops its kernels, not the kernels behind its back; and the
		// kernel's own children can be signalled with it.
		Setpgid: true,
		// The kernel dies with wasmeval (set after the credentials change,
		// which would clear it).
		Pdeathsig: syscall.SIGKILL,
	}
	if c.user != nil {
		attr.Credential = &syscall.Credential{Uid: c.user.uid, Gid: c.user.gid, Groups: []uint32{}}
	}
	return attr
}

// plain is python with args as the kernel's user, without Landlock: the
// ipykernel check, which writes nothing.
func (c confinement) plain(ctx context.Context, python string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, python, args...)
	cmd.SysProcAttr = c.sysProcAttr()
	return cmd
}

// wrap is python with args, confined.
func (c confinement) wrap(python string, args ...string) *exec.Cmd {
	if c.landlock == 0 {
		cmd := exec.Command(python, args...)
		cmd.SysProcAttr = c.sysProcAttr()
		return cmd
	}
	spec, _ := json.Marshal(helperSpec{Writable: c.writable, ABI: c.landlock})
	cmd := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        append([]string{kernelHelperName, string(spec), python}, args...),
		SysProcAttr: c.sysProcAttr(),
	}
	return cmd
}

// landlockProbe asks the running kernel for its Landlock ABI version;
// tests replace it to play a kernel without Landlock.
var landlockProbe = llsys.LandlockGetABIVersion

// LandlockABI returns the Landlock ABI version of the running kernel, 0
// (and the reason) when it has none.
func LandlockABI() (int, error) {
	abi, err := landlockProbe()
	if err != nil {
		return 0, err
	}
	return abi, nil
}

var noLandlockNotice sync.Once

func prepareConfinement(root, tempDir, connFile string, log *slog.Logger) (confinement, error) {
	c := confinement{writable: []string{root, tempDir}}
	abi, err := LandlockABI()
	if abi > 0 {
		c.landlock = abi
	} else {
		noLandlockNotice.Do(func() {
			log.Warn("jupyter: Landlock is not available on this Linux kernel; local Jupyter kernels run without write confinement (they may write wherever their user may)", "reason", fmt.Sprint(err))
		})
	}
	if os.Geteuid() != 0 {
		return c, nil
	}
	u, handToUser, err := chooseKernelUser(root)
	if err != nil {
		return c, err
	}
	c.user = u
	if handToUser {
		if err := chownTree(root, u); err != nil {
			return c, err
		}
	}
	if err := chownTree(tempDir, u); err != nil {
		return c, err
	}
	if err := os.Lchown(connFile, int(u.uid), int(u.gid)); err != nil {
		return c, fmt.Errorf("jupyter: handing the connection file to the kernel's user %s: %w", u.name, err)
	}
	for _, p := range []string{root, tempDir, filepath.Dir(connFile)} {
		if err := ensureSearchable(p, u); err != nil {
			return c, err
		}
	}
	return c, nil
}

// chooseKernelUser picks the user a kernel runs as when wasmeval is root:
// the root's owner when not root; else, for a root-owned root (a session
// folder wasmeval made), the owner of the folder holding it when that is
// not root (serve's --workspace of that user), or nobody inside the
// system's temporary folder. handToUser says the root's tree is given to
// that user.
func chooseKernelUser(root string) (u *kernelUser, handToUser bool, err error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, false, fmt.Errorf("jupyter: the session root: %w", err)
	}
	if uid, gid := ownerIDs(st); uid != 0 {
		return userByID(uid, gid), false, nil
	}
	if pst, err := os.Stat(filepath.Dir(root)); err == nil {
		if uid, gid := ownerIDs(pst); uid != 0 {
			return userByID(uid, gid), true, nil
		}
	}
	nobody := &kernelUser{uid: 65534, gid: 65534, name: "nobody"}
	if pw, err := user.Lookup("nobody"); err == nil {
		uid, err1 := strconv.Atoi(pw.Uid)
		gid, err2 := strconv.Atoi(pw.Gid)
		if err1 == nil && err2 == nil && uid != 0 {
			nobody.uid, nobody.gid = uint32(uid), uint32(gid)
		}
	}
	if !insideTempDir(root) {
		return nil, false, fmt.Errorf("jupyter: wasmeval runs as root, so the kernel runs as an unprivileged user, and the session root %s and the folder holding it belong to root: "+
			"give the root (or, for serve's sessions, the --workspace folder) to the user the kernel should run as (chown USER; the kernel then runs as USER), or run wasmeval as an unprivileged user; "+
			"only a root inside %s is handed to %s automatically", root, os.TempDir(), nobody.name)
	}
	return nobody, true, nil
}

func ownerIDs(st os.FileInfo) (uid, gid uint32) {
	sys := st.Sys().(*syscall.Stat_t)
	return sys.Uid, sys.Gid
}

// userByID is the user uid with its passwd entry's primary group, or gid
// (and its number as its name) when it has none.
func userByID(uid, gid uint32) *kernelUser {
	u := &kernelUser{uid: uid, gid: gid, name: strconv.Itoa(int(uid))} // no passwd entry: USER is the number
	if pw, err := user.LookupId(strconv.Itoa(int(uid))); err == nil {
		u.name = pw.Username
		if g, err := strconv.Atoi(pw.Gid); err == nil {
			u.gid = uint32(g)
		}
	}
	return u
}

// insideTempDir reports whether p is strictly inside the system's
// temporary folder.
func insideTempDir(p string) bool {
	tmp := os.TempDir()
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = real
	}
	rel, err := filepath.Rel(tmp, p)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}

// chownTree gives dir and everything below it to u, without following
// symbolic links.
func chownTree(dir string, u *kernelUser) error {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// A restart walks the tree again: only what is not yet the
		// user's is changed.
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Uid == u.uid && st.Gid == u.gid {
				return nil
			}
		}
		return os.Lchown(p, int(u.uid), int(u.gid))
	})
	if err != nil {
		return fmt.Errorf("jupyter: handing %s to the kernel's user %s: %w", dir, u.name, err)
	}
	return nil
}

// ensureSearchable makes sure u can reach p: every folder above it must
// let u search it. Folders inside the system's temporary folder that do
// not get o+x; any other is an error.
func ensureSearchable(p string, u *kernelUser) error {
	for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
		st, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("jupyter: %s: %w", dir, err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		mode := st.Mode().Perm()
		var bit fs.FileMode = 0o001
		switch {
		case sys.Uid == u.uid:
			bit = 0o100
		case sys.Gid == u.gid:
			bit = 0o010
		}
		if mode&bit == 0 {
			if bit != 0o001 || !insideTempDir(dir) {
				return fmt.Errorf("jupyter: the kernel runs as %s (uid %d) because wasmeval runs as root, and it cannot reach %s: the folder %s does not let it in (mode %04o); "+
					"choose a root it can reach, give that folder search permission (chmod o+x %s), or run wasmeval as an unprivileged user", u.name, u.uid, p, dir, mode, dir)
			}
			if err := os.Chmod(dir, st.Mode()|0o001); err != nil {
				return fmt.Errorf("jupyter: letting the kernel's user into %s: %w", dir, err)
			}
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}
