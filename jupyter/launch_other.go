//go:build !linux

package jupyter

import (
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"runtime"
	"sync"
)

// confinement is empty off Linux: the kernel runs as wasmeval's user,
// with its filtered environment only.
type confinement struct{ user *kernelUser }

type kernelUser struct {
	uid, gid uint32
	name     string
}

func (c confinement) uid() int { return -1 }

func (c confinement) landlockABI() int { return 0 }

func (c confinement) plain(ctx context.Context, python string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, python, args...)
}

func (c confinement) wrap(python string, args ...string) *exec.Cmd {
	return exec.Command(python, args...)
}

var noConfinementNotice sync.Once

func prepareConfinement(root, tempDir, connFile string, log *slog.Logger) (confinement, error) {
	noConfinementNotice.Do(func() {
		log.Warn("jupyter: local Jupyter kernels run without write confinement or a separate user on " + runtime.GOOS + " (Landlock is Linux's)")
	})
	return confinement{}, nil
}

// LandlockABI returns 0: Landlock is Linux's.
func LandlockABI() (int, error) { return 0, errNoLandlock }

var errNoLandlock = errors.New("jupyter: Landlock is Linux's")
