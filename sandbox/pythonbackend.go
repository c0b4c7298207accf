package sandbox

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	kernel "github.com/wasmeval/wasmeval/jupyter"
	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/jupyter"
)

// Python backends: where a session's Python cells run.
const (
	// PythonWasm runs Python cells in CPython-WASI inside wazero: the
	// sandbox. The default.
	PythonWasm = "wasm"
	// PythonJupyter runs Python cells in a native Jupyter kernel (ipykernel
	// started by wasmeval, or a Jupyter Server's): the whole Python world
	// (numpy, matplotlib, the host's venv), and no sandbox. See
	// JupyterOptions.
	PythonJupyter = "jupyter"
)

// PythonBackends returns the names Options.PythonBackend and
// SessionOptions.PythonBackend take.
func PythonBackends() []string { return []string{PythonWasm, PythonJupyter} }

// JupyterOptions configure the jupyter Python backend (Options.Jupyter).
// The zero value starts local kernels, one per session, with the
// defaults of the Jupyter-backed python tool wasmeval replaces.
type JupyterOptions struct {
	// Mode is "session" (a session keeps its kernel from request to
	// request; the default) or "per-call" (a fresh kernel for each request,
	// shut down after it).
	Mode string
	// IdleTimeout shuts down a kernel idle this long; its session gets a
	// fresh one at its next cell, told by a status event that its Python
	// state is gone. Zero means 5 minutes, negative never.
	IdleTimeout time.Duration
	// MaxKernels caps the kernels running at once: one more shuts down the
	// kernel idle longest, and fails when every kernel runs a cell. Zero
	// means 4, negative no cap.
	MaxKernels int
	// Python is the local kernels' interpreter; empty chooses as the seed
	// does: VIRTUAL_ENV, <root>/.venv, <root>/venv, python3 on PATH. It
	// must import ipykernel (Debian: apt-get install python3-ipykernel).
	Python string
	// Start, when set, starts kernels elsewhere (a Jupyter Server:
	// kernel.DialGateway's Gateway.Start) instead of local processes.
	Start kernel.Starter
}

// checkPythonBackend validates Options.PythonBackend and Options.Jupyter.
func checkPythonBackend(o Options) error {
	switch o.PythonBackend {
	case "", PythonWasm, PythonJupyter:
	default:
		return fmt.Errorf("sandbox: Options.PythonBackend %s: use %s or %s", quote(o.PythonBackend), PythonWasm, PythonJupyter)
	}
	if err := jupyter.CheckMode(o.Jupyter.Mode); err != nil {
		return fmt.Errorf("sandbox: Options.Jupyter.Mode: %w", err)
	}
	return nil
}

// checkSessionPython validates SessionOptions.PythonBackend against the
// sandbox's options, and sets it to the backend the session uses.
func (sb *Sandbox) checkSessionPython(o *SessionOptions) error {
	def := sb.opts.PythonBackend
	if def == "" {
		def = PythonWasm
	}
	switch o.PythonBackend {
	case "":
		o.PythonBackend = def
	case PythonWasm, PythonJupyter:
		if o.PythonBackend != def && !sb.opts.PythonBackendChoice {
			return fmt.Errorf("sandbox: SessionOptions.PythonBackend %s: this sandbox runs Python on %s only (the operator has not let sessions choose: Options.PythonBackendChoice, the commands' --python-backend-choice)", quote(o.PythonBackend), def)
		}
	default:
		return fmt.Errorf("sandbox: SessionOptions.PythonBackend %s: use %s or %s", quote(o.PythonBackend), PythonWasm, PythonJupyter)
	}
	if o.PythonBackend == PythonJupyter && (o.Deterministic || o.Replay != nil) {
		return fmt.Errorf("sandbox: a deterministic or replayed session cannot run Python on the jupyter backend: a native kernel reads the host's clock and randomness; use the %s backend", PythonWasm)
	}
	return nil
}

// jupyterRuntimeKey is the jupyter backend's key among the sandbox's
// runtimes, beside "py" (the wasm backend) and "js".
const jupyterRuntimeKey = "py-jupyter"

func init() {
	newRuntime[jupyterRuntimeKey] = func(ctx context.Context, o Options) (runtimes.Runtime, error) {
		rt, err := jupyter.New(jupyter.Config{
			Start: o.Jupyter.Start, Mode: o.Jupyter.Mode, IdleTimeout: o.Jupyter.IdleTimeout,
			MaxKernels: o.Jupyter.MaxKernels, Python: o.Jupyter.Python,
		})
		if err != nil {
			return nil, err
		}
		return rt, nil
	}
}

// sessionRuntime returns the runtime of lang for the session: the jupyter
// backend's for Python when the session uses it.
func (s *Session) sessionRuntime(ctx context.Context, lang string) (runtimes.Runtime, error) {
	if lang == "py" && s.opts.PythonBackend == PythonJupyter {
		return s.sb.runtime(ctx, jupyterRuntimeKey)
	}
	return s.runtimeFor(ctx, lang) // the session's package layer's for Python
}

// requestEnder is an instance that acts at the end of each top-level
// request (the jupyter backend's per-call mode shuts its kernel down).
type requestEnder interface {
	EndRequest(ctx context.Context)
}

// endRequest tells the session's instances that a request ended.
func (s *Session) endRequest(ctx context.Context) {
	s.imu.Lock()
	defer s.imu.Unlock()
	for _, inst := range s.instances {
		if e, ok := inst.(requestEnder); ok {
			e.EndRequest(ctx)
		}
	}
}

// ErrBadPythonBackend is wrapped by the error of Manager.CreateWith for a
// Python backend the session may not have: an unknown name, or another
// than the sandbox's default where sessions may not choose.
var ErrBadPythonBackend = errors.New("sandbox: bad Python backend")

// CreateOptions are what a client may set on a session it creates
// (Manager.CreateWith), over the manager's template.
type CreateOptions struct {
	// Env is set in the session's environment, as CreateWithEnv's env.
	Env map[string]string
	// PythonBackend is the session's Python backend, PythonWasm or
	// PythonJupyter; empty means the sandbox's. Another than the
	// sandbox's needs Options.PythonBackendChoice.
	PythonBackend string
}

// CreateWith is Create for a session with o set over the manager's
// template, as serve's POST /v1/sessions body asks ({"env": {...},
// "python": "jupyter"}). A bad env or backend is refused before anything
// is made, with an error that wraps ErrBadEnv or ErrBadPythonBackend and
// says what is wrong.
func (m *Manager) CreateWith(ctx context.Context, owner string, o CreateOptions) (string, error) {
	if o.PythonBackend == "" {
		return m.CreateWithEnv(ctx, owner, o.Env)
	}
	probe := SessionOptions{PythonBackend: o.PythonBackend, Deterministic: m.opts.Session.Deterministic, Replay: m.opts.Session.Replay}
	if err := m.sb.checkSessionPython(&probe); err != nil {
		return "", fmt.Errorf("%w: %s", ErrBadPythonBackend, strings.TrimPrefix(err.Error(), "sandbox: "))
	}
	if err := CheckEnv(o.Env); err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadEnv, err)
	}
	return m.add(ctx, owner, func(so SessionOptions) (*Session, error) {
		if len(o.Env) > 0 {
			set := maps.Clone(so.SetEnv)
			if set == nil {
				set = map[string]string{}
			}
			maps.Copy(set, o.Env)
			so.SetEnv = set
		}
		so.PythonBackend = o.PythonBackend
		return m.sb.NewSession(ctx, so)
	})
}
