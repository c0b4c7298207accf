//go:build linux

package testenv

import (
	"os/exec"
	"syscall"
)

// dieWithTest has the kernel kill cmd when the test process dies (a
// timeout's panic, a kill), so that no serve outlives its test.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
