package jupyter_test

import (
	"context"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes/jupyter"
	"github.com/wasmeval/wasmeval/runtimes/runtimetest"
)

// newRuntime returns a runtime whose local kernels run testenv.JupyterPython,
// started as wasmeval starts them (kernel.KernelCommand: filtered
// environment, Landlock, an unprivileged user when the test runs as root).
func newRuntime(t testing.TB, cfg jupyter.Config) *jupyter.Runtime {
	t.Helper()
	cfg.Python = testenv.JupyterPython(t)
	if cfg.MaxKernels == 0 {
		cfg.MaxKernels = -1
	}
	rt, err := jupyter.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

// TestConformance runs the suite every runtime passes, with the CPython
// sandbox's snippets, less those a kernel cannot pass:
//
//   - ReadPasswd, ReadOutside, EscapeSymlink (NoEtcPasswd,
//     NoFileOutsideRoot, NoSymlinkEscape): the kernel is a host process,
//     not a sandbox; Landlock limits its writes, not its reads.
//   - PrintTime (Clock): the kernel reads the host's clock; the session's
//     clock (InstanceOptions.Now) cannot reach a native process.
//
// RandomIsSeeded passes: the prelude seeds random from the session's
// random source (os.urandom and secrets stay the host's).
func TestConformance(t *testing.T) {
	runtimetest.Run(t, newRuntime(t, jupyter.Config{}), runtimetest.Snippets{
		PrintHello:      "print('hello')",
		WriteStderr:     "import sys\nprint('oops', file=sys.stderr)",
		DefineState:     "x = 41",
		ReadState:       "x + 1",
		LastExpression:  "6 * 7",
		NoResult:        "y = 1",
		Raise:           "raise RuntimeError('boom')",
		SyntaxError:     "def f(:",
		InfiniteLoop:    "while True:\n    pass",
		ReadFile:        "print(open('data.txt').read(), end='')",
		PrintEnv:        "import os\nprint(os.environ['WASMEVAL_TEST_VAR'])",
		PrintHostSecret: "import os\nprint(os.environ.get('WASMEVAL_HOST_SECRET', ''))",
		DisplayJSON:     "display({'a': 1, 'b': [1, 2]})",
		DisplayMarkdown: "class M:\n    def _repr_markdown_(self):\n        return '# Title'\ndisplay(M())",
		PrintRandom:     "import random\nprint(random.random())",
	})
}
