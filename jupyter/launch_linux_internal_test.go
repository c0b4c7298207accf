//go:build linux

package jupyter

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// On a Linux kernel without Landlock the kernel still starts, directly,
// and a log line says so once.
func TestNoLandlockNotice(t *testing.T) {
	probe := landlockProbe
	t.Cleanup(func() { landlockProbe = probe; noLandlockNotice = sync.Once{} })
	landlockProbe = func() (int, error) { return 0, syscall.ENOSYS }
	noLandlockNotice = sync.Once{}

	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	for range 2 {
		root, tmp := t.TempDir(), t.TempDir()
		conn := filepath.Join(tmp, "kernel.json")
		os.WriteFile(conn, []byte("{}"), 0o600)
		cmd, err := KernelCommand(context.Background(), LaunchConfig{Root: root, TempDir: tmp, ConnectionFile: conn, Python: "/usr/bin/python3", Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		if cmd.Path != "/usr/bin/python3" || cmd.Args[0] == kernelHelperName {
			t.Errorf("without Landlock the command is %s %q; want python itself", cmd.Path, cmd.Args)
		}
	}
	if n := strings.Count(logged.String(), "Landlock is not available"); n != 1 {
		t.Errorf("log said it %d times, want once:\n%s", n, logged.String())
	}
}

// A helper that cannot confine does not start Python.
func TestKernelHelperFailsClosed(t *testing.T) {
	var stderr bytes.Buffer
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{kernelHelperName, "{not json", "/usr/bin/python3", "-c", "print('ran')"}, Stderr: &stderr}
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 126 || strings.Contains(string(out), "ran") ||
		!strings.Contains(stderr.String(), "confinement failed") {
		t.Errorf("helper with a bad spec: %v, stdout %q, stderr %q; want exit 126 saying the confinement failed", err, out, stderr.String())
	}
}
