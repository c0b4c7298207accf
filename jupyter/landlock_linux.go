package jupyter

import (
	"encoding/json"
	"fmt"
	"os"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
)

// The confinement helper: the child side of a confined kernel command
// (see Confinement in launch_linux.go). It runs in this package's init,
// before any other code of the binary that links it, so a test binary or
// an embedder's program is a helper too and never runs its own main with
// the kernel's arguments.
func init() {
	if len(os.Args) < 3 || os.Args[0] != kernelHelperName {
		return
	}
	err := runKernelHelper(os.Args[1], os.Args[2:])
	// Reached only when the restriction or the exec failed: the kernel
	// does not start unconfined.
	fmt.Fprintf(os.Stderr, "wasmeval: the Jupyter kernel's confinement failed, so it did not start: %v\n", err)
	os.Exit(126)
}

// kernelDevices are the device files a kernel may write besides its
// folders: the sinks and sources Python and its libraries open for
// writing.
var kernelDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom"}

// kernelSharedMemory is the folder of POSIX shared memory, which a kernel
// may write too.
const kernelSharedMemory = "/dev/shm"

// runKernelHelper applies Landlock as spec says and executes argv.
func runKernelHelper(spec string, argv []string) error {
	var s helperSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		return fmt.Errorf("bad helper spec: %v", err)
	}
	if len(s.Writable) == 0 {
		return fmt.Errorf("bad helper spec: no writable folders")
	}
	rw := landlock.RWDirs(s.Writable...)
	if s.ABI >= 2 {
		// Renames and links between folders of the root (and the
		// temporary folder) are refused with EXDEV unless "refer" is
		// granted; best effort drops Landlock altogether when a rule asks
		// for it on ABI 1, hence the condition.
		rw = rw.WithRefer()
	}
	err := landlock.V11.BestEffort().RestrictPaths(
		// Reading (and executing) stays as open as the user's rights: the
		// interpreter, its packages, /etc and /proc live everywhere.
		landlock.RODirs("/"),
		rw,
		landlock.RWFiles(kernelDevices...).IgnoreIfMissing(),
		// POSIX semaphores and shared memory are files there
		// (multiprocessing's locks and pools, joblib, torch's loaders); a
		// tmpfs, gone at reboot.
		landlock.RWDirs(kernelSharedMemory).IgnoreIfMissing(),
	)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return syscall.Exec(argv[0], argv, os.Environ())
}
