package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/runtimes"
)

// ErrClosed is returned by a Sandbox or Session used after Close.
var ErrClosed = errors.New("sandbox: closed")

// Sandbox holds what its sessions share: the language runtimes, each made
// on the first cell of its language. It is safe for concurrent use.
type Sandbox struct {
	opts      Options
	runtimes  map[string]*lazyRuntime
	protected []protectedDir // folders no session root may overlap
	layers    layerRuntimes  // for sessions' own package layers (sessionlayer.go)

	mu       sync.Mutex
	closed   bool
	sessions map[*Session]struct{}
}

// lazyRuntime makes one language's runtime once. A failure is remembered,
// except one caused by the caller's context ending: the next caller tries
// again.
type lazyRuntime struct {
	lang string
	sem  chan struct{} // held while making
	done bool
	rt   runtimes.Runtime
	err  error
}

// New returns a Sandbox. It does no expensive work: runtimes start lazily,
// on the first cell of their language.
func New(ctx context.Context, o Options) (*Sandbox, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkLanguages("Options.Languages", o.Languages); err != nil {
		return nil, err
	}
	if err := checkPythonBackend(o); err != nil {
		return nil, err
	}
	if err := checkEngine(o.Engine); err != nil {
		return nil, err
	}
	o.Languages = append([]string(nil), o.Languages...)
	sb := &Sandbox{
		opts:     o.resolved(),
		runtimes: make(map[string]*lazyRuntime, len(newRuntime)),
		sessions: make(map[*Session]struct{}),
	}
	sb.protected = protectedDirs(sb.opts)
	layer, err := resolvePackages(&sb.opts, sb.protected)
	if err != nil {
		return nil, err
	}
	sb.protected = append(sb.protected, layer...)
	for lang := range newRuntime {
		sb.runtimes[lang] = &lazyRuntime{lang: lang, sem: make(chan struct{}, 1)}
	}
	return sb, nil
}

// runtime returns the language's runtime, making it on first use.
func (sb *Sandbox) runtime(ctx context.Context, lang string) (runtimes.Runtime, error) {
	lr, ok := sb.runtimes[lang]
	if !ok {
		return nil, fmt.Errorf("no runtime for language %q", lang)
	}
	if err := acquire(ctx, lr.sem); err != nil {
		return nil, err
	}
	defer func() { <-lr.sem }()
	if lr.done {
		return lr.rt, lr.err
	}
	sb.mu.Lock()
	closed := sb.closed
	sb.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	start := time.Now()
	rt, err := newRuntime[lang](ctx, sb.opts)
	if err != nil {
		err = fmt.Errorf("%s runtime: %w", lang, err)
		if ctx.Err() != nil {
			return nil, err // try again next time
		}
	} else {
		sb.opts.Logger.Info("runtime started", "language", lang, "duration", time.Since(start))
	}
	lr.done, lr.rt, lr.err = true, rt, err
	return rt, err
}

// NewSession starts a session. Its language instances start lazily, on the
// session's first cell of each language.
//
// # Errors
//
// A root that is, contains or lies inside the cache directory or the
// folder of the cache key is refused with an error wrapping ErrRootOverlap
// that names both.
func (sb *Sandbox) NewSession(ctx context.Context, o SessionOptions) (*Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o, err := o.resolved()
	if err != nil {
		return nil, err
	}
	if err := sb.checkSessionPython(&o); err != nil {
		return nil, err
	}
	if err := checkRoot(o.Root, sb.protected); err != nil {
		return nil, err
	}
	if err := sb.resolveSessionLayer(&o); err != nil {
		return nil, err
	}
	hostSetting := "sandbox.Options.Host is nil"
	if sb.opts.Host != nil {
		hostSetting = "sandbox.Options.Host"
	}
	s := &Session{
		sb:        sb,
		opts:      o,
		sem:       make(chan struct{}, 1),
		instances: make(map[string]runtimes.Instance),
	}
	// sessionHost lets WithHost override Options.Host per Eval.
	calls, err := hostcalls.NewDispatcher(o.Root, sessionHost{fallback: sb.opts.Host}, hostcalls.DispatcherOptions{
		AgentDepth: o.AgentDepth, HostSetting: hostSetting, Outputs: s.outputs.guestGet,
		MemoryLimitBytes: o.MemoryLimitBytes, DiskQuotaBytes: o.DiskQuotaBytes, DiskQuotaFiles: o.DiskQuotaFiles,
	})
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	s.calls = calls
	if err := s.startBoundary(); err != nil {
		calls.Close()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.closed {
		calls.Close()
		return nil, ErrClosed
	}
	sb.sessions[s] = struct{}{}
	return s, nil
}

func (sb *Sandbox) forget(s *Session) {
	sb.mu.Lock()
	delete(sb.sessions, s)
	sb.mu.Unlock()
}

// Close closes every session of the sandbox, then its runtimes. Cells that
// are running are cancelled. Closing again does nothing.
func (sb *Sandbox) Close(ctx context.Context) error {
	sb.mu.Lock()
	if sb.closed {
		sb.mu.Unlock()
		return nil
	}
	sb.closed = true
	sessions := make([]*Session, 0, len(sb.sessions))
	for s := range sb.sessions {
		sessions = append(sessions, s)
	}
	sb.mu.Unlock()

	var errs []error
	for _, s := range sessions {
		errs = append(errs, s.Close(ctx))
	}
	errs = append(errs, sb.closeLayers(ctx)) // before the runtime they share
	for _, lr := range sb.runtimes {
		if err := acquire(ctx, lr.sem); err != nil {
			errs = append(errs, fmt.Errorf("sandbox: closing the %s runtime: %w", lr.lang, err))
			continue
		}
		if lr.done && lr.rt != nil {
			if err := lr.rt.Close(ctx); err != nil {
				errs = append(errs, fmt.Errorf("sandbox: closing the %s runtime: %w", lr.lang, err))
			}
		}
		lr.done, lr.rt, lr.err = true, nil, ErrClosed
		<-lr.sem
	}
	return errors.Join(errs...)
}
