//go:build unix

package jupyter

import (
	"os/exec"
	"syscall"
)

// localSupport is nil: local kernels run on Unix.
func localSupport() error { return nil }

// ownGroup puts the kernel in a process group of its own: ipykernel's
// interrupt signals its whole group when it leads one, never ours; and
// kill stops its children with it.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

func (k *LocalKernel) kill() {
	// The whole group: a kernel's subprocesses go with it.
	if err := syscall.Kill(-k.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		k.cmd.Process.Kill()
	}
}

// User returns the user the kernel process runs as when that is not
// wasmeval's own (set by its command's credentials: wasmeval runs as
// root), and false otherwise. What the host creates in the session root
// is given to that user (hostcalls.RootOwner), so the kernel can edit it
// in place.
func (k *LocalKernel) User() (uid, gid int, ok bool) {
	if a := k.cmd.SysProcAttr; a != nil && a.Credential != nil {
		return int(a.Credential.Uid), int(a.Credential.Gid), true
	}
	return 0, 0, false
}
