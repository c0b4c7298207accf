package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// JupyterPythonEnv names the interpreter the Jupyter tests start kernels
// with, when it is not Debian's /usr/bin/python3.
const JupyterPythonEnv = "WASMEVAL_JUPYTER_PYTHON"

// JupyterPython returns the interpreter the Jupyter backend's tests start
// kernels with: $WASMEVAL_JUPYTER_PYTHON, or /usr/bin/python3 with
// Debian's python3-ipykernel (make jupyter-deps). It fails tb, not skips
// it, when that interpreter cannot import ipykernel and the modules also
// names (numpy, matplotlib): a machine without them would otherwise pass
// the Jupyter tests by not running them.
func JupyterPython(tb testing.TB, also ...string) string {
	tb.Helper()
	py := os.Getenv(JupyterPythonEnv)
	if py == "" {
		py = "/usr/bin/python3"
	}
	modules := strings.Join(append([]string{"ipykernel"}, also...), ", ")
	if out, err := exec.Command(py, "-c", "import "+modules).CombinedOutput(); err != nil {
		tb.Fatalf("%s cannot import %s (run make jupyter-deps, or set %s): %v\n%s", py, modules, JupyterPythonEnv, err, out)
	}
	return py
}
