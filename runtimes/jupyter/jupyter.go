// Package jupyter is wasmeval's native Jupyter backend for Python cells: a
// runtimes.Runtime whose instances run cells in a real Jupyter kernel
// (ipykernel started by wasmeval, or a Jupyter Server's), with the cell
// contract, helpers and results of the CPython sandbox. It is
// implementation detail of the sandbox package; see docs/design.md.
//
// A Jupyter kernel is not a sandbox: its code runs with the rights of the
// process that runs the kernel.
package jupyter

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	kernel "github.com/wasmeval/wasmeval/jupyter"
	"github.com/wasmeval/wasmeval/prelude"
	"github.com/wasmeval/wasmeval/runtimes"
)

// Defaults of Config, as the Jupyter-backed python tool has them.
const (
	DefaultIdleTimeout    = 5 * time.Minute
	DefaultMaxKernels     = 4
	DefaultInterruptGrace = 2 * time.Second
)

// Kernel modes (Config.Mode).
const (
	// ModeSession keeps a session's kernel, and its state, from request to
	// request.
	ModeSession = "session"
	// ModePerCall starts a fresh kernel for each request and shuts it
	// down after it: cells of one request share state, requests do not.
	ModePerCall = "per-call"
)

// Config configures the runtime. The zero value starts local kernels with
// DefaultCommand, in session mode, with the defaults above.
type Config struct {
	// Start starts a kernel; nil means a local kernel (kernel.StartLocal
	// with Command).
	Start kernel.Starter
	// Command builds a local kernel's command when Start is nil; nil means
	// kernel.DefaultCommand (kernel.KernelCommand: the seed's interpreter
	// choice and environment rules, Landlock, an unprivileged user).
	Command kernel.CommandFunc
	// Python is the local kernels' interpreter; empty means the one
	// kernel.ChoosePython finds (VIRTUAL_ENV, <root>/.venv, <root>/venv,
	// python3 on PATH).
	Python string
	// Mode is ModeSession (the default, "") or ModePerCall.
	Mode string
	// IdleTimeout shuts down a kernel idle this long (its session gets a
	// fresh one at its next cell, told that its state is lost); zero means
	// DefaultIdleTimeout, negative means never.
	IdleTimeout time.Duration
	// MaxKernels caps the kernels running at once; starting one more shuts
	// down the one idle longest, and fails when none is idle. Zero means
	// DefaultMaxKernels, negative means no cap.
	MaxKernels int
	// InterruptGrace is how long a cell has to stop after each step of an
	// interrupt (interrupt_request, then SIGINT or the server's interrupt)
	// before the next; past the last the kernel is restarted. Zero means
	// DefaultInterruptGrace.
	InterruptGrace time.Duration
}

// CheckMode validates a kernel mode name.
func CheckMode(mode string) error {
	switch mode {
	case "", ModeSession, ModePerCall:
		return nil
	}
	return fmt.Errorf("jupyter: unknown kernel mode %q; use %s or %s", mode, ModeSession, ModePerCall)
}

// Runtime runs Python cells in Jupyter kernels, one per session.
type Runtime struct {
	cfg      Config
	local    bool   // kernels are local processes (their env is the session's)
	helpers  string // _wasmeval_helpers.py
	jupyterP string // _wasmeval_jupyter.py

	// starting bounds the kernels starting at once: a start is a second or
	// more of CPU (importing ipykernel), and many at once on few cores
	// would all miss their start timeout instead of most coming up.
	starting chan struct{}

	mu        sync.Mutex
	instances map[*instance]struct{}
	closed    bool
	stop      chan struct{}
}

// New returns a runtime. It starts no kernel: each instance starts its own
// at its first cell.
func New(cfg Config) (*Runtime, error) {
	if err := CheckMode(cfg.Mode); err != nil {
		return nil, err
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeSession
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxKernels == 0 {
		cfg.MaxKernels = DefaultMaxKernels
	}
	if cfg.InterruptGrace <= 0 {
		cfg.InterruptGrace = DefaultInterruptGrace
	}
	local := cfg.Start == nil
	if cfg.Start == nil {
		cmd := cfg.Command
		cfg.Start = func(ctx context.Context, o kernel.StartOptions) (kernel.Kernel, error) {
			k, err := kernel.StartLocal(ctx, kernel.LocalOptions{StartOptions: o, Command: cmd})
			if err != nil {
				return nil, err // not a typed nil
			}
			return k, nil
		}
	}
	h, err := prelude.PythonFile("_wasmeval_helpers.py")
	if err != nil {
		return nil, err
	}
	j, err := prelude.PythonFile("_wasmeval_jupyter.py")
	if err != nil {
		return nil, err
	}
	rt := &Runtime{cfg: cfg, local: local, helpers: string(h), jupyterP: string(j),
		instances: make(map[*instance]struct{}), stop: make(chan struct{}),
		starting: make(chan struct{}, max(2, runtime.NumCPU()))}
	if cfg.IdleTimeout > 0 {
		go rt.evictIdle()
	}
	return rt, nil
}

// Language is "py".
func (rt *Runtime) Language() string { return "py" }

// Mode is the runtime's kernel mode.
func (rt *Runtime) Mode() string { return rt.cfg.Mode }

// NewInstance makes a session's instance; its kernel starts at its first
// cell.
func (rt *Runtime) NewInstance(ctx context.Context, opts runtimes.InstanceOptions) (runtimes.Instance, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return nil, errors.New("jupyter: runtime closed")
	}
	inst := &instance{rt: rt, opts: opts}
	rt.instances[inst] = struct{}{}
	return inst, nil
}

// Close shuts down every kernel.
func (rt *Runtime) Close(ctx context.Context) error {
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return nil
	}
	rt.closed = true
	close(rt.stop)
	list := make([]*instance, 0, len(rt.instances))
	for i := range rt.instances {
		list = append(list, i)
	}
	rt.mu.Unlock()
	var errs []error
	for _, i := range list {
		errs = append(errs, i.Close(ctx))
	}
	return errors.Join(errs...)
}

// Kernels is how many kernels run now.
func (rt *Runtime) Kernels() int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	n := 0
	for i := range rt.instances {
		if i.kernelNow() != nil {
			n++
		}
	}
	return n
}

// evictIdle shuts down kernels idle past IdleTimeout.
func (rt *Runtime) evictIdle() {
	tick := max(time.Second, min(rt.cfg.IdleTimeout/4, 30*time.Second))
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-rt.stop:
			return
		case <-t.C:
		}
		rt.mu.Lock()
		list := make([]*instance, 0, len(rt.instances))
		for i := range rt.instances {
			list = append(list, i)
		}
		rt.mu.Unlock()
		for _, i := range list {
			i.evictIfIdle(rt.cfg.IdleTimeout, fmt.Sprintf("it was idle for %s", rt.cfg.IdleTimeout))
		}
	}
}

// makeRoom shuts down the kernel idle longest when the cap is reached.
func (rt *Runtime) makeRoom(self *instance) error {
	if rt.cfg.MaxKernels < 0 {
		return nil
	}
	for {
		rt.mu.Lock()
		var idle []*instance
		running := 0
		for i := range rt.instances {
			if i == self {
				continue
			}
			i.mu.Lock()
			if i.k != nil {
				running++
				if !i.busy {
					idle = append(idle, i)
				}
			}
			i.mu.Unlock()
		}
		rt.mu.Unlock()
		if running < rt.cfg.MaxKernels {
			return nil
		}
		if len(idle) == 0 {
			return fmt.Errorf("jupyter: %d kernels are running cells, the most that may run at once; wait for one to finish, or raise the cap (--jupyter-max-kernels)", running)
		}
		sort.Slice(idle, func(a, b int) bool { return idle[a].lastUsedTime().Before(idle[b].lastUsedTime()) })
		idle[0].evictIfIdle(0, fmt.Sprintf("%d kernels were running, the cap, and it was idle longest", rt.cfg.MaxKernels))
	}
}

func (rt *Runtime) forget(i *instance) {
	rt.mu.Lock()
	delete(rt.instances, i)
	rt.mu.Unlock()
}

// instance is one session's kernel.
type instance struct {
	rt   *Runtime
	opts runtimes.InstanceOptions

	mu       sync.Mutex
	k        kernel.Kernel // nil until started, and after eviction
	busy     bool
	lastUsed time.Time
	evicted  string // why the last kernel was shut down, told at the next cell
	deaths   int    // kernel deaths since the instance started or was reset
	closed   bool
	owner    *hostcalls.RootOwner // the session's, given the kernel's user (owner.go)
	cell     *cellHandler         // the running cell's, for nested evals (nested.go)
}

var _ runtimes.Instance = (*instance)(nil)

func (i *instance) kernelNow() kernel.Kernel {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.k
}

func (i *instance) lastUsedTime() time.Time {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.lastUsed
}

// evictIfIdle shuts the kernel down when it has been idle at least d.
func (i *instance) evictIfIdle(d time.Duration, why string) {
	i.mu.Lock()
	if i.k == nil || i.busy || time.Since(i.lastUsed) < d {
		i.mu.Unlock()
		return
	}
	k := i.k
	i.k = nil
	i.evicted = why
	i.mu.Unlock()
	k.Close(context.Background())
}

// start starts a kernel and loads the prelude into it.
func (i *instance) start(ctx context.Context) (kernel.Kernel, error) {
	if err := i.rt.makeRoom(i); err != nil {
		return nil, err
	}
	select {
	case i.rt.starting <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-i.rt.starting }()
	k, err := i.rt.cfg.Start(ctx, kernel.StartOptions{Root: i.opts.Root, Env: kernelEnv(i.opts.Env), Python: i.rt.cfg.Python})
	if err != nil {
		return nil, err
	}
	i.noteUser(k)
	if err := i.bootstrap(ctx, k); err != nil {
		k.Close(context.Background())
		return nil, err
	}
	return k, nil
}

// bootstrap runs the prelude in a fresh kernel: the session's working
// directory, environment and sys.path, a seed for random, then the
// helpers.
func (i *instance) bootstrap(ctx context.Context, k kernel.Kernel) error {
	var seed uint64
	src := i.opts.Rand
	if src == nil {
		src = rand.Reader
	}
	var b [8]byte
	if _, err := io.ReadFull(src, b[:]); err == nil {
		seed = binary.LittleEndian.Uint64(b[:])
	}
	cfg, err := json.Marshal(map[string]any{
		"cwd": i.opts.Root, "env": kernelEnv(i.opts.Env), "set_env": !i.rt.local, "seed": seed, "helpers": i.rt.helpers,
	})
	if err != nil {
		return err
	}
	mod, _ := json.Marshal(i.rt.jupyterP)
	code := fmt.Sprintf(`def _wasmeval_boot():
    import json, sys, types
    m = types.ModuleType("_wasmeval_jupyter")
    m.__file__ = "<wasmeval:_wasmeval_jupyter>"
    sys.modules["_wasmeval_jupyter"] = m
    exec(compile(json.loads(%s), m.__file__, "exec"), m.__dict__)
    m.setup(json.loads(%s))
    exec(compile(json.loads(%s), "<wasmeval:nested>", "exec"), {"__name__": "_wasmeval_nested"})
_wasmeval_boot()
del _wasmeval_boot
`, pyString(string(mod)), pyString(string(cfg)), pyString(nestedJSON))
	var errText strings.Builder
	h := &bootHandler{errText: &errText}
	reply, err := k.Client().Execute(ctx, code, kernel.ExecuteOptions{Silent: true, NoStdin: true}, h)
	if err != nil {
		return fmt.Errorf("jupyter: loading the prelude into the kernel: %w", err)
	}
	if reply.Status != "ok" {
		return fmt.Errorf("jupyter: loading the prelude into the kernel failed: %s: %s\n%s", reply.EName, reply.EValue, stripANSI(strings.Join(reply.Traceback, "\n")))
	}
	return nil
}

// pyString is s as a Python string literal (JSON's are, for our text).
func pyString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

type bootHandler struct{ errText *strings.Builder }

func (h *bootHandler) IOPub(msgType string, m *kernel.Message) {
	if msgType == "error" || msgType == "stream" {
		h.errText.Write(m.Content)
	}
}
func (h *bootHandler) Input(string, bool) string { return "" }

// ErrKernelDied is the error of a cell whose kernel died after the
// automatic restart that its first death got.
var ErrKernelDied = errors.New("jupyter: the kernel died again after its automatic restart")

// Run runs one cell in the session's kernel, starting the kernel first
// when there is none.
func (i *instance) Run(ctx context.Context, code string, sink runtimes.Sink) (runtimes.Outcome, error) {
	interrupted := runtimes.Outcome{Failed: true, Interrupted: true}
	if ctx.Err() != nil {
		return interrupted, nil
	}
	i.mu.Lock()
	if i.closed {
		i.mu.Unlock()
		return runtimes.Outcome{}, errors.New("jupyter: instance closed")
	}
	i.busy = true
	k, evicted := i.k, i.evicted
	i.evicted = ""
	i.mu.Unlock()
	defer func() {
		i.mu.Lock()
		i.busy = false
		i.lastUsed = time.Now()
		i.mu.Unlock()
	}()
	if k == nil {
		if evicted != "" {
			sink.Status("kernel", "a new Python kernel started: the last one was shut down because "+evicted+", so the session's Python state (variables, imports) is gone")
		}
		var err error
		if k, err = i.start(ctx); err != nil {
			if ctx.Err() != nil {
				return interrupted, nil
			}
			return runtimes.Outcome{}, err
		}
		i.mu.Lock()
		i.k = k
		i.mu.Unlock()
	}
	return i.execute(ctx, k, code, sink)
}

// execute runs code on k, interrupting it when ctx ends and restarting it
// when it dies.
func (i *instance) execute(ctx context.Context, k kernel.Kernel, code string, sink runtimes.Sink) (runtimes.Outcome, error) {
	h := &cellHandler{ctx: ctx, sink: sink, call: i.opts.Call, done: make(chan callDone), stopped: make(chan struct{}), nested: make(chan *nestedRun)}
	// Host calls still running when the cell ends give up their answers.
	defer h.stop()
	i.mu.Lock()
	i.cell = h
	i.mu.Unlock()
	defer func() {
		i.mu.Lock()
		if i.cell == h {
			i.cell = nil
		}
		i.mu.Unlock()
	}()
	// execCtx ends only when the kernel must be given up on: it died, or
	// it ignored every interrupt.
	execCtx, abort := context.WithCancelCause(context.Background())
	defer abort(nil)
	type result struct {
		reply *kernel.ExecuteReply
		err   error
	}
	res := make(chan result, 1)
	go func() {
		r, err := k.Client().Execute(execCtx, code, kernel.ExecuteOptions{}, h)
		res <- result{r, err}
	}()
	var (
		stopped bool // the cell's context ended and the kernel was told
		restart string
		deadErr error
	)
	// The heartbeat, on its own goroutine so that a slow ping never holds
	// up the cell's result or its interrupt steps.
	hbDead := make(chan error, 1)
	hbStop := make(chan struct{})
	defer close(hbStop)
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-hbStop:
				return
			case <-t.C:
			}
			if err := k.Client().Ping(context.Background(), 3*time.Second); err != nil {
				select {
				case <-hbStop: // the cell ended meanwhile
				default:
					hbDead <- err
				}
				return
			}
		}
	}()
	stepTimer := time.NewTimer(time.Hour)
	stepTimer.Stop()
	step := 0
	ctxDone := ctx.Done()
	for {
		select {
		case r := <-res:
			if deadErr != nil || (r.err != nil && execCtx.Err() == nil) {
				if deadErr == nil {
					deadErr = r.err
				}
				return i.died(ctx, sink, deadErr)
			}
			if restart != "" {
				sink.Stderr(restart)
				if err := i.restartKernel(ctx); err != nil {
					return runtimes.Outcome{}, err
				}
				return runtimes.Outcome{Failed: true, Interrupted: true}, nil
			}
			out := runtimes.Outcome{Failed: r.reply.Status != "ok" || h.stdinAsked}
			if stopped {
				out.Failed, out.Interrupted = true, true
			}
			if r.reply.Status == "aborted" {
				sink.Stderr("the kernel aborted the cell without running it\n")
			}
			if r.reply.Status == "error" && !h.sawError {
				sink.Stderr(stripANSI(strings.Join(r.reply.Traceback, "\n")) + "\n")
			}
			return out, nil
		case <-ctxDone:
			ctxDone = nil
			stopped = true
			h.stop()
			ictx, cancel := context.WithTimeout(context.Background(), i.rt.cfg.InterruptGrace)
			_ = k.Client().Interrupt(ictx)
			cancel()
			stepTimer.Reset(i.rt.cfg.InterruptGrace)
		case <-stepTimer.C:
			step++
			if step == 1 {
				ictx, cancel := context.WithTimeout(context.Background(), i.rt.cfg.InterruptGrace)
				_ = k.Interrupt(ictx)
				cancel()
				stepTimer.Reset(i.rt.cfg.InterruptGrace)
				continue
			}
			restart = fmt.Sprintf("the cell ignored its interrupts for %s, so the Python kernel was restarted: the session's Python state (variables, imports) is gone\n", 2*i.rt.cfg.InterruptGrace)
			abort(errors.New("interrupt ignored"))
		case <-k.Dead():
			deadErr = errors.New("the kernel process exited")
			abort(deadErr)
		case err := <-hbDead:
			deadErr = fmt.Errorf("its heartbeat stopped: %w", err)
			abort(deadErr)
		}
	}
}

// died handles a kernel death during a cell: the first restarts the
// kernel (the cell fails, the state is lost), a second is a hard error.
func (i *instance) died(ctx context.Context, sink runtimes.Sink, why error) (runtimes.Outcome, error) {
	i.mu.Lock()
	i.deaths++
	deaths := i.deaths
	k := i.k
	i.k = nil
	i.mu.Unlock()
	if k != nil {
		k.Close(context.Background())
	}
	if deaths > 1 {
		return runtimes.Outcome{}, fmt.Errorf("%w (%v); reset the session to start a new kernel", ErrKernelDied, why)
	}
	sink.Stderr(fmt.Sprintf("the Python kernel died while running the cell (%v); it was restarted once, so the session's Python state (variables, imports) is gone. A second death is an error.\n", why))
	// Not the cell's context: it may have ended with the kernel, and the
	// session needs its new kernel all the same.
	nk, err := i.start(context.WithoutCancel(ctx))
	if err != nil {
		return runtimes.Outcome{}, fmt.Errorf("jupyter: restarting the kernel after it died: %w", err)
	}
	i.mu.Lock()
	i.k = nk
	i.mu.Unlock()
	return runtimes.Outcome{Failed: true}, nil
}

// restartKernel replaces the kernel with a fresh one.
func (i *instance) restartKernel(ctx context.Context) error {
	i.mu.Lock()
	k := i.k
	i.k = nil
	i.mu.Unlock()
	if k != nil {
		k.Close(context.Background())
	}
	nk, err := i.start(context.WithoutCancel(ctx))
	if err != nil {
		return fmt.Errorf("jupyter: restarting the kernel: %w", err)
	}
	i.mu.Lock()
	i.k = nk
	i.mu.Unlock()
	return nil
}

// Reset restarts the kernel: the state is gone, the prelude loaded again.
func (i *instance) Reset(ctx context.Context) error {
	i.mu.Lock()
	i.deaths = 0
	i.evicted = ""
	started := i.k != nil
	i.mu.Unlock()
	if !started {
		return nil // the next cell starts a fresh kernel
	}
	return i.restartKernel(ctx)
}

// EndRequest ends a request: in per-call mode the kernel is shut down, so
// the next request starts a fresh one.
func (i *instance) EndRequest(ctx context.Context) {
	if i.rt.cfg.Mode != ModePerCall {
		return
	}
	i.mu.Lock()
	k := i.k
	i.k = nil
	i.mu.Unlock()
	if k != nil {
		k.Close(context.WithoutCancel(ctx))
	}
}

// Close shuts the kernel down.
func (i *instance) Close(ctx context.Context) error {
	i.mu.Lock()
	if i.closed {
		i.mu.Unlock()
		return nil
	}
	i.closed = true
	k := i.k
	i.k = nil
	i.mu.Unlock()
	i.rt.forget(i)
	if k != nil {
		return k.Close(ctx)
	}
	return nil
}

// ---- a cell's messages ------------------------------------------------------

const callTag = "\x00wasmeval:"

// stdinNote is what a cell that called input() is told.
const stdinNote = "input() is not supported: there is no one to type an answer. The cell got an empty line and fails; pass the data in the code or a file instead.\n"

type callDone struct {
	id   int
	resp string
}

// cellHandler turns a cell's iopub and stdin messages into sink events
// and host calls.
type cellHandler struct {
	ctx  context.Context
	sink runtimes.Sink
	call func(ctx context.Context, request []byte) []byte

	nextID     int
	inFlight   int
	done       chan callDone
	stopOnce   sync.Once
	stopped    chan struct{}
	stdinAsked bool
	sawError   bool
	// nested takes the nested cells RunNested sends; nest are those the
	// kernel runs, innermost last (nested.go).
	nested chan *nestedRun
	nest   []*nestedRun
}

func (h *cellHandler) stop() { h.stopOnce.Do(func() { close(h.stopped) }) }

func (h *cellHandler) IOPub(msgType string, m *kernel.Message) {
	switch msgType {
	case "stream":
		var s kernel.StreamContent
		if m.Decode(&s) != nil {
			return
		}
		if s.Name == "stderr" {
			h.sink.Stderr(s.Text)
		} else {
			h.sink.Stdout(s.Text)
		}
	case "display_data", "update_display_data", "execute_result":
		var d kernel.DisplayContent
		if m.Decode(&d) != nil {
			return
		}
		h.sink.Display(bundle(d.Data), msgType == "execute_result")
	case "error":
		var e kernel.ErrorContent
		if m.Decode(&e) != nil {
			return
		}
		h.sawError = true
		h.sink.Stderr(stripANSI(strings.Join(e.Traceback, "\n")) + "\n")
	}
}

// bundle converts a Jupyter MIME bundle: text stays text, a JSON value
// (application/json, a status payload) becomes its JSON text. A JSON type
// given a string that is JSON text already (display({"...+json":
// json.dumps(v)}, raw=True), as the profiles' setup cells and the wasm
// backend's callers send it) stays that text, as on the wasm backend;
// another string is a JSON string value and keeps its quotes.
func bundle(data map[string]json.RawMessage) runtimes.Bundle {
	b := make(runtimes.Bundle, len(data))
	for mime, raw := range data {
		var s string
		if json.Unmarshal(raw, &s) == nil && (!strings.HasSuffix(mime, "json") || json.Valid([]byte(s))) {
			b[mime] = s
			continue
		}
		if strings.HasPrefix(mime, "text/") || strings.HasPrefix(mime, "image/") {
			// A list of lines, as notebooks may store text.
			var lines []string
			if json.Unmarshal(raw, &lines) == nil {
				b[mime] = strings.Join(lines, "")
				continue
			}
		}
		var buf bytes.Buffer
		if json.Compact(&buf, raw) == nil {
			b[mime] = buf.String()
		} else {
			b[mime] = string(raw)
		}
	}
	return b
}

func (h *cellHandler) Input(prompt string, password bool) string {
	if !strings.HasPrefix(prompt, callTag) {
		if n := h.innermost(); n != nil {
			n.mu.Lock()
			n.stdinAsked = true
			if !n.abandoned {
				n.sink.Status("stdin", "the cell asked for input (input() or getpass); it got an empty line and fails")
				n.sink.Stderr(stdinNote)
			}
			n.mu.Unlock()
			return ""
		}
		h.stdinAsked = true
		h.sink.Status("stdin", "the cell asked for input (input() or getpass); it got an empty line and fails")
		h.sink.Stderr(stdinNote)
		return ""
	}
	var req struct {
		Op      string `json:"op"`
		Request string `json:"request"`
		Result  string `json:"result"`
	}
	if err := json.Unmarshal([]byte(prompt[len(callTag):]), &req); err != nil {
		return `[-2, ""]`
	}
	switch req.Op {
	case "nested_done":
		h.finishNested(req.Result)
		return ""
	case "start":
		h.nextID++
		id := h.nextID
		h.inFlight++
		request := []byte(req.Request)
		// A call of nested code is the nested cell's (its frame, its
		// budget), not the waiting cell's.
		callCtx := h.ctx
		if n := h.innermost(); n != nil {
			callCtx = n.ctx
		}
		go func() {
			var resp []byte
			if h.call == nil {
				resp = []byte(`{"error":{"message":"the host offers no helpers here (read, write, tool, llm, agent need a host)"}}`)
			} else {
				resp = h.call(callCtx, request)
			}
			select {
			case h.done <- callDone{id, string(resp)}:
			case <-h.stopped:
			}
		}()
		return fmt.Sprint(id)
	case "wait":
		if h.inFlight == 0 {
			return `[-2, ""]`
		}
		select {
		case d := <-h.done:
			h.inFlight--
			b, _ := json.Marshal([]any{d.id, d.resp})
			return string(b)
		case n := <-h.nested:
			return h.startNested(n)
		case <-h.ctx.Done():
			return `[-1, ""]`
		case <-h.stopped:
			return `[-1, ""]`
		}
	}
	return `[-2, ""]`
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

func stripANSI(s string) string { return ansi.ReplaceAllString(s, "") }

// kernelEnv is the session's environment as its kernel gets it: without
// the default environment's PATH (runtimes.GuestPATH, what a wasm guest
// sees instead of the host's), so that the kernel, which runs the host's
// programs, keeps the PATH of its host (a local kernel's from the seed's
// allowlist, a remote one's its server's). A PATH the session set is kept.
func kernelEnv(env map[string]string) map[string]string {
	if env["PATH"] != runtimes.GuestPATH {
		return env
	}
	env = maps.Clone(env)
	delete(env, "PATH")
	return env
}
