package main

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/wasmeval/wasmeval/runtimes/jupyter"
	"github.com/wasmeval/wasmeval/sandbox"
)

const pythonBackendUsage = `  --python-backend wasm|jupyter
        where Python cells run: wasm (the default) in the CPython sandbox,
        or jupyter in a native Jupyter kernel (Debian: apt-get install
        python3-ipykernel) with the whole Python world: numpy, matplotlib,
        the host's venv. A kernel is NOT a sandbox: its code runs as a host
        process (confined where the OS allows; see README.md)
  --python-backend-choice
        let each session choose its backend (serve: {"python": "jupyter"}
        in POST /v1/sessions); otherwise every session gets --python-backend
  --jupyter-mode session|per-call
        session (default) keeps a session's kernel from request to request;
        per-call starts a fresh kernel for each request
  --jupyter-idle-timeout DURATION
        shut down a kernel idle this long (default 5m; 0 for never); its
        session gets a fresh one, and is told so
  --jupyter-max-kernels N
        kernels running at once (default 4; 0 for no cap); one more shuts
        down the one idle longest
  --jupyter-python PATH
        the kernels' interpreter (default: $VIRTUAL_ENV's, <root>/.venv's,
        <root>/venv's, else python3 on PATH that imports ipykernel)
`

// pythonBackendFlags are eval's, serve's and mcp's flags of the Python
// backend (sandbox.Options.PythonBackend and .Jupyter).
type pythonBackendFlags struct {
	backend    string
	choice     bool
	mode       string
	idle       time.Duration
	maxKernels int
	python     string
}

func (f *pythonBackendFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.backend, "python-backend", sandbox.PythonWasm, "")
	fs.BoolVar(&f.choice, "python-backend-choice", false, "")
	fs.StringVar(&f.mode, "jupyter-mode", jupyter.ModeSession, "")
	fs.DurationVar(&f.idle, "jupyter-idle-timeout", jupyter.DefaultIdleTimeout, "")
	fs.IntVar(&f.maxKernels, "jupyter-max-kernels", jupyter.DefaultMaxKernels, "")
	fs.StringVar(&f.python, "jupyter-python", "", "")
}

// check says what is wrong with the flags, if anything.
func (f *pythonBackendFlags) check() error {
	switch {
	case f.backend != sandbox.PythonWasm && f.backend != sandbox.PythonJupyter:
		return fmt.Errorf("--python-backend %q: use %s", f.backend, strings.Join(sandbox.PythonBackends(), " or "))
	case jupyter.CheckMode(f.mode) != nil:
		return fmt.Errorf("--jupyter-mode %q: use %s or %s", f.mode, jupyter.ModeSession, jupyter.ModePerCall)
	case f.idle < 0:
		return fmt.Errorf("--jupyter-idle-timeout %s: give a positive duration, or 0 for never", f.idle)
	case f.maxKernels < 0:
		return fmt.Errorf("--jupyter-max-kernels %d: give a positive number, or 0 for no cap", f.maxKernels)
	}
	return nil
}

// apply sets the backend on o.
func (f *pythonBackendFlags) apply(o *sandbox.Options) {
	o.PythonBackend = f.backend
	o.PythonBackendChoice = f.choice
	o.Jupyter.Mode = f.mode
	o.Jupyter.Python = f.python
	o.Jupyter.IdleTimeout = f.idle
	if f.idle == 0 {
		o.Jupyter.IdleTimeout = -1 // the flag's 0 is never; the option's 0 the default
	}
	o.Jupyter.MaxKernels = f.maxKernels
	if f.maxKernels == 0 {
		o.Jupyter.MaxKernels = -1
	}
}
