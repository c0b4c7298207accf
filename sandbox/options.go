package sandbox

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/wasm"
)

// Options configure a Sandbox. The zero value is ready to use.
type Options struct {
	// CacheDir holds the compilation cache of the wasm runtimes, so a new
	// process does not compile python.wasm again. Empty means
	// os.UserCacheDir()/wasmeval, or no cache when there is no user cache
	// directory.
	CacheDir string
	// Packages is a folder of installed pure-Python distributions (what
	// pip install --target DIR leaves, or Debian's dist-packages) that
	// every Python session sees read-only at
	// /usr/local/lib/wasmeval/site-packages, on sys.path after the session
	// root. Empty means none. It must not
	// overlap the cache directory, and no session root may overlap it
	// (ErrRootOverlap). It is the default of the Sandbox's sessions; one
	// may name a layer of its own (SessionOptions.Packages), which gets a
	// template snapshot of its own (see Preload).
	Packages string
	// Preload names packages of Packages (sympy, networkx.algorithms)
	// imported into the Python template snapshot, so that a new session
	// starts with them imported instead of paying for the import. The
	// template is cached under a key that covers the layer's files (path,
	// size, mode, mtime) and this list: a changed layer makes a new one.
	Preload []string
	// Logger receives the sandbox's own diagnostics (runtime start-up,
	// host failures). Nil means none.
	Logger *slog.Logger
	// Host answers the guests' tool, llm and agent calls. Nil means none:
	// those helpers then fail with a message saying that nothing is
	// configured.
	Host hostcalls.Host
	// Languages are the cell languages the sandbox runs, of "py", "js"
	// and "ts"; nil means all. A cell in another language fails with an
	// error that names the enabled ones, and its runtime never starts.
	// "ts" follows "js" unless listed itself: TypeScript cells run on the
	// JavaScript runtime. What the commands' --languages flag sets.
	Languages []string
	// Engine is the WebAssembly engine Python runs on: "wasmtime" (which
	// needs a binary built with cgo) or "wazero". Empty means
	// $WASMEVAL_ENGINE, else wasm.DefaultEngine: wasmtime where it is
	// compiled in, wazero in a build with CGO_ENABLED=0 (README.md,
	// "Engines", gives the figures that chose it).
	// What the commands' --engine flag sets.
	Engine string
	// PythonBackend is where Python cells run: PythonWasm ("wasm", the
	// default, "") in the CPython sandbox, or PythonJupyter ("jupyter") in
	// a native Jupyter kernel, which is not a sandbox (JupyterOptions).
	// What the commands' --python-backend flag sets.
	PythonBackend string
	// PythonBackendChoice lets each session choose its Python backend
	// (SessionOptions.PythonBackend); otherwise every session gets
	// PythonBackend. What --python-backend-choice sets.
	PythonBackendChoice bool
	// Jupyter configures the jupyter Python backend.
	Jupyter JupyterOptions
}

// checkEngine says what is wrong with Options.Engine (or, when it is
// empty, $WASMEVAL_ENGINE), if anything.
func checkEngine(name string) error {
	if _, err := wasm.ResolveEngine(name); err != nil {
		if name != "" {
			return fmt.Errorf("sandbox: Options.Engine %q: use %s", name, strings.Join(wasm.Engines(), " or "))
		}
		return fmt.Errorf("sandbox: %w", errors.Unwrap(err))
	}
	return nil
}

// SessionOptions configure a Session.
type SessionOptions struct {
	// Root is the session root: the guest's working directory, visible to
	// the guest at the same absolute path and nothing else of the host's
	// filesystem. It is required and must be an existing directory; a
	// relative path is made absolute.
	Root string
	// Env is the guest's environment. Nil means DefaultEnv: a short
	// allowlist copied from the host (PATH, LANG, TZ and every LC_
	// variable, where set, never a secret-looking name: SecretEnvName)
	// plus HOME and PWD set to Root. A non-nil map is used exactly as given
	// (an empty one means an empty environment). Names and values must
	// pass CheckEnv.
	Env map[string]string
	// SetEnv adds variables to the environment (Env, or the default one
	// when Env is nil), replacing those of the same name: what the
	// commands' --env and --env-file give. Secret-looking names are passed
	// as given: they are the embedder's own choice.
	SetEnv map[string]string
	// Now is the clock the guest sees; nil means time.Now. With Rand, it
	// makes a session replayable.
	Now func() time.Time
	// Rand is the guest's source of randomness; nil means crypto/rand.
	Rand io.Reader
	// MemoryLimitBytes caps each language's guest memory where the runtime
	// can; zero means the runtime's default. It must not be negative.
	MemoryLimitBytes int64
	// Checkpoints keeps a copy of the session's Python state between cells
	// so that a cell stopped hard (it ignores its KeyboardInterrupt for the
	// grace period) rolls the state back to before that cell instead of
	// restarting Python with its state lost. It costs a copy of the pages
	// the session has written after each cell (about 0.1 ms per MiB, in the
	// background between cells; back-to-back cells wait for it).
	Checkpoints bool
	// FuelBudget, when positive, is the fuel all of the session's Python
	// cells may use together; a cell that would go past it stops with "fuel
	// exhausted", deterministically. Zero means no session budget.
	FuelBudget int64
	// AgentDepth is how deep in nested agents this session runs: 0 for a
	// top-level session. A Host that runs a sub-agent's cells in a session
	// of its own sets it to hostcalls.AgentRequest.Depth, so that agents
	// nest at most hostcalls.MaxAgentDepth deep. It must be 0..3.
	AgentDepth int
	// DiskQuotaBytes and DiskQuotaFiles cap what the session root may
	// hold: the bytes of its files (sparse ones at their full size) and
	// its entries (files, directories, links). Past them the guest's
	// writes fail with ENOSPC and the file helpers with "disk quota
	// exceeded". Zero means the default, hostcalls.DefaultDiskQuotaBytes
	// (1 GiB) and hostcalls.DefaultDiskQuotaFiles (100,000); a negative
	// value means no cap. The count starts from what the root holds when
	// the session starts; see hostcalls.DiskQuota.
	DiskQuotaBytes, DiskQuotaFiles int64
	// Languages narrow Options.Languages for this session: a cell runs
	// only in a language both enable. Nil means all.
	Languages []string
	// PythonBackend is the session's Python backend, PythonWasm or
	// PythonJupyter; empty means Options.PythonBackend. Another than that
	// one needs Options.PythonBackendChoice.
	PythonBackend string
	// Packages is a package layer of the session's own, as
	// Options.Packages describes one: a folder of installed pure-Python
	// distributions its Python cells import from. Empty means the
	// Sandbox's (Options.Packages). Sessions of a Sandbox that name the
	// same layer and Preload share one template; each other layer gets its
	// own, made at the first Python cell of a session that names it (and
	// cached like the Sandbox's); it stays in memory until the Sandbox is
	// closed (tens of MiB each). It must be an existing folder outside
	// the cache and outside every session root, and the session's root
	// must not overlap it (ErrRootOverlap); a bad one fails NewSession
	// with an error wrapping ErrPackages.
	Packages string
	// Preload names packages of the session's layer (Packages, or the
	// Sandbox's when Packages is empty) imported into its template, as
	// Options.Preload. Nil means Options.Preload when Packages is empty,
	// and none otherwise. A package that does not import fails the
	// session's first Python cell with an error wrapping ErrPackages.
	Preload []string
	// Deterministic gives the guest a virtual clock (from
	// DeterministicEpoch, DeterministicStep further at each read of the
	// wall or monotonic clock) and seeded randomness, where Now and Rand
	// are nil: two fresh sessions that run the same requests give the same
	// bytes (the cells' DurationMs are zero). A Python sleep moves the
	// clock on by its length without waiting. Python's hash seed is fixed
	// in every session.
	Deterministic bool
	// Record, when set, receives the session's tape (package tape): the
	// header and root, then every request, clock read, random byte, host
	// call and result. It is flushed after each request and finished by
	// Close; the session does not close it.
	Record io.Writer
	// RecordLimitBytes bounds the tape (Record's, or the file
	// ManagerOptions.RecordDir gives the session): the record that would
	// take it past this many bytes is not written, the tape ends whole
	// before it (its replay ends there, as for a recording cut short),
	// and the session goes on unrecorded; the first result after it has
	// a status event of kind "recording" that says so. Zero means
	// DefaultRecordLimitBytes (1 GiB); negative means no limit.
	RecordLimitBytes int64
	// Replay, when set, feeds the guest's clocks, randomness and host
	// calls from a recorded tape instead of the world (see the replay
	// package). It overrides Now, Rand and Deterministic.
	Replay ReplayFeed

	ownRecord bool // Record is the session's own file, closed with it
}

func (o Options) resolved() Options {
	if o.CacheDir == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			o.CacheDir = filepath.Join(dir, "wasmeval")
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

func (o SessionOptions) resolved() (SessionOptions, error) {
	if o.Root == "" {
		return o, errors.New("sandbox: SessionOptions.Root is required: give the session root, an existing directory the guest works in")
	}
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return o, fmt.Errorf("sandbox: session root %q: %w", o.Root, err)
	}
	fi, err := os.Stat(root)
	if err != nil {
		return o, fmt.Errorf("sandbox: session root: %w; give an existing directory", err)
	}
	if !fi.IsDir() {
		return o, fmt.Errorf("sandbox: session root %s is not a directory; give an existing directory", root)
	}
	o.Root = root
	if o.MemoryLimitBytes < 0 {
		return o, fmt.Errorf("sandbox: SessionOptions.MemoryLimitBytes is %d; give a positive number of bytes, or zero for the default", o.MemoryLimitBytes)
	}
	if o.FuelBudget < 0 {
		return o, fmt.Errorf("sandbox: SessionOptions.FuelBudget is %d; give a positive number of fuel units, or zero for none", o.FuelBudget)
	}
	if err := checkLanguages("SessionOptions.Languages", o.Languages); err != nil {
		return o, err
	}
	o.Languages = append([]string(nil), o.Languages...)
	if o.AgentDepth < 0 || o.AgentDepth > hostcalls.MaxAgentDepth {
		return o, fmt.Errorf("sandbox: SessionOptions.AgentDepth is %d; give 0..%d", o.AgentDepth, hostcalls.MaxAgentDepth)
	}
	if o.Env, err = resolveEnv(root, o.Env, o.SetEnv); err != nil {
		return o, err
	}
	o.SetEnv = maps.Clone(o.SetEnv) // kept for a fork's copy (Manager.Fork)
	return o, nil
}
