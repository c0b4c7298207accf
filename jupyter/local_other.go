//go:build !unix

package jupyter

import (
	"fmt"
	"os/exec"
	"runtime"
)

// localSupport says why local kernels do not run here: a kernel cannot
// be given a process group of its own to interrupt and stop with its
// children. A Jupyter Server (--jupyter-url) works.
func localSupport() error {
	return fmt.Errorf("jupyter: local kernels are not supported on %s (they need Unix process groups to be interrupted and stopped with their children); use a Jupyter Server or Kernel Gateway (--jupyter-url) instead", runtime.GOOS)
}

func ownGroup(cmd *exec.Cmd) {}

func (k *LocalKernel) kill() { k.cmd.Process.Kill() }

// User returns false: a local kernel never runs as another user here.
func (k *LocalKernel) User() (uid, gid int, ok bool) { return 0, 0, false }
