package sandbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/python"
)

// Package layers of a session's own (SessionOptions.Packages, .Preload).
// Python sessions start from a template snapshot, and the layer and its
// preloaded packages are part of it, so each distinct layer needs a
// template: a Python runtime that shares the Sandbox's compiled module
// (python.Runtime.WithLayer), made at the first Python cell of a session
// that names the layer and shared by every later one.

// layerRuntimes are a Sandbox's runtimes for its sessions' own layers.
type layerRuntimes struct {
	mu    sync.Mutex
	byKey map[string]*lazyRuntime // by folder and preload list
	dirs  []protectedDir          // the layers sessions named, which no root may overlap
}

// ownLayer reports whether the session's Python runs on a layer other
// than the Sandbox's.
func (s *Session) ownLayer() bool {
	o := s.opts
	if o.Packages == "" && o.Preload == nil {
		return false
	}
	return o.Packages != s.sb.opts.Packages || !slices.Equal(o.Preload, s.sb.opts.Preload)
}

// resolveSessionLayer checks o's package layer and preload list as
// NewSession takes them, makes the layer's path absolute, and checks that
// neither the root and the layer nor the layer and another session's root
// overlap: a guest that could write into a layer would change what the
// sessions on it import.
func (sb *Sandbox) resolveSessionLayer(o *SessionOptions) error {
	sb.layers.mu.Lock()
	others := slices.Clone(sb.layers.dirs)
	sb.layers.mu.Unlock()
	if err := checkRoot(o.Root, others); err != nil {
		return err
	}
	if o.Packages == "" && o.Preload == nil {
		return nil
	}
	o.Preload = slices.Clone(o.Preload)
	const flag, preloadFlag = "SessionOptions.Packages", "SessionOptions.Preload"
	if o.Packages == "" {
		if sb.opts.Packages == "" && len(o.Preload) > 0 {
			return fmt.Errorf("%w: %s %s: neither the session nor the sandbox has a package layer to preload from; give %s (or Options.Packages) too",
				ErrPackages, preloadFlag, strings.Join(o.Preload, ","), flag)
		}
		if err := python.CheckPackages(sb.opts.Packages, o.Preload, "Options.Packages", preloadFlag); err != nil {
			return fmt.Errorf("%w: %w", ErrPackages, err)
		}
		return nil
	}
	dir := absClean(o.Packages)
	if err := python.CheckPackages(dir, o.Preload, flag, preloadFlag); err != nil {
		return fmt.Errorf("%w: %w", ErrPackages, err)
	}
	for _, d := range protectedDirs(sb.opts) {
		if rel := overlap(dir, d.path); rel != "" {
			return fmt.Errorf("%w: the session's package layer (%s) %s %s %s, %s. Give a folder of installed packages outside %s",
				ErrPackages, flag, dir, rel, d.path, d.what, d.path)
		}
	}
	o.Packages = dir
	layer := protectedDir{
		path: dir,
		what: "a package layer sessions import from (SessionOptions.Packages)",
		fix:  "or give the session a package layer outside its root",
	}
	if err := checkRoot(o.Root, []protectedDir{layer}); err != nil {
		return err
	}
	sb.mu.Lock()
	var roots []string
	for s := range sb.sessions {
		roots = append(roots, s.opts.Root)
	}
	sb.mu.Unlock()
	for _, root := range roots {
		if rel := overlap(root, dir); rel != "" {
			return fmt.Errorf("%w: the root %s of another session of the sandbox %s the package layer %s (%s), so its guest could change what this session imports; "+
				"give a package layer outside every session root", ErrRootOverlap, root, rel, dir, flag)
		}
	}
	sb.layers.mu.Lock()
	if !slices.ContainsFunc(sb.layers.dirs, func(d protectedDir) bool { return d.path == dir }) {
		sb.layers.dirs = append(sb.layers.dirs, layer)
	}
	sb.layers.mu.Unlock()
	return nil
}

// runtimeFor returns the runtime of lang for the session: for Python on a
// layer of its own, that layer's.
func (s *Session) runtimeFor(ctx context.Context, lang string) (runtimes.Runtime, error) {
	if lang != "py" || !s.ownLayer() {
		return s.sb.runtime(ctx, lang)
	}
	dir := s.opts.Packages
	if dir == "" {
		dir = s.sb.opts.Packages
	}
	return s.sb.layerRuntime(ctx, dir, s.opts.Preload)
}

// layeredRuntime is a runtime that can make a runtime sharing it for
// another package layer (python.Runtime).
type layeredRuntime interface {
	WithLayer(ctx context.Context, dir string, preload []string) (*python.Runtime, error)
}

// layerRuntime returns the Python runtime of the package layer dir with
// preload imported, making it on first use.
func (sb *Sandbox) layerRuntime(ctx context.Context, dir string, preload []string) (runtimes.Runtime, error) {
	base, err := sb.runtime(ctx, "py")
	if err != nil {
		return nil, err
	}
	key := dir + "\x00" + strings.Join(preload, ",")
	sb.layers.mu.Lock()
	if sb.layers.byKey == nil {
		sb.layers.byKey = map[string]*lazyRuntime{}
	}
	lr := sb.layers.byKey[key]
	if lr == nil {
		lr = &lazyRuntime{lang: "py", sem: make(chan struct{}, 1)}
		sb.layers.byKey[key] = lr
	}
	sb.layers.mu.Unlock()
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
	wl, ok := base.(layeredRuntime)
	if !ok {
		lr.done, lr.err = true, fmt.Errorf("%w: the py runtime (%T) cannot take a package layer of a session's own", ErrPackages, base)
		return nil, lr.err
	}
	rt, err := wl.WithLayer(ctx, dir, preload)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("py runtime: %w", err) // try again next time
		}
		if pe, ok := errors.AsType[*python.PreloadError](err); ok {
			err = fmt.Errorf("%w: %w", ErrPackages, pe)
		}
		lr.done, lr.err = true, fmt.Errorf("py runtime: %w", err)
		return nil, lr.err
	}
	lr.done, lr.rt = true, rt
	return rt, nil
}

// closeLayers closes the runtimes of the sessions' layers; Close calls it
// before it closes the runtime whose module they share.
func (sb *Sandbox) closeLayers(ctx context.Context) error {
	sb.layers.mu.Lock()
	lrs := make([]*lazyRuntime, 0, len(sb.layers.byKey))
	for _, lr := range sb.layers.byKey {
		lrs = append(lrs, lr)
	}
	sb.layers.mu.Unlock()
	var errs []error
	for _, lr := range lrs {
		if err := acquire(ctx, lr.sem); err != nil {
			errs = append(errs, fmt.Errorf("sandbox: closing a package layer's py runtime: %w", err))
			continue
		}
		if lr.done && lr.rt != nil {
			if err := lr.rt.Close(ctx); err != nil {
				errs = append(errs, fmt.Errorf("sandbox: closing a package layer's py runtime: %w", err))
			}
		}
		lr.done, lr.rt, lr.err = true, nil, ErrClosed
		<-lr.sem
	}
	return errors.Join(errs...)
}
