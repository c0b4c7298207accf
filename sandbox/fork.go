package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/wasmeval/wasmeval/runtimes"
)

// Fork returns an independent copy of the session rooted at o.Root (an
// existing, empty directory): the session's files are copied there, and
// its Python state (globals, imports) is copied from a snapshot of the
// interpreter's memory. o's other fields configure the copy as for
// NewSession. Fork waits for a running Eval to finish.
//
// JavaScript state cannot be copied (a goja VM cannot be cloned): the
// copy starts JavaScript afresh, as after a reset, while its files and
// Python state are copied. FreshLanguages on the copy names the languages
// that started afresh, so a caller can tell its agent.
//
// # Errors
//
// The copy never follows a symbolic link; it copies a link only when
// the host could follow it safely too (a relative target whose every part
// is a plain name, leading down from the link's folder) and fails, naming
// the link, for any other; it fails on named pipes, devices and sockets
// without opening them. Sparse files stay sparse. o.Root is refused, as
// by NewSession, when it overlaps wasmeval's own folders (ErrRootOverlap),
// and when it is, contains or lies inside the session's root. A copy that
// would pass the new session's disk quota (o.DiskQuotaBytes and
// DiskQuotaFiles) stops before the entry that passes it, with an error
// matching hostcalls.ErrDiskQuota. On failure the copy's root is left
// empty again. Files the Python guest holds open are not carried over.
func (s *Session) Fork(ctx context.Context, o SessionOptions) (*Session, error) {
	if err := acquire(ctx, s.sem); err != nil {
		return nil, err
	}
	defer s.release()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if o.Root == "" {
		return nil, errors.New("sandbox: fork: SessionOptions.Root is required: an empty directory for the copy")
	}
	if entries, err := os.ReadDir(o.Root); err != nil {
		return nil, fmt.Errorf("sandbox: fork: %w", err)
	} else if len(entries) > 0 {
		return nil, fmt.Errorf("sandbox: fork: %s is not empty; the copy needs an empty root", o.Root)
	}
	// The copy's Python is the source's, which imported from the source's
	// package layer and runs on its backend: the copy keeps both (a reset
	// or a restart of the copy starts from that layer's template), and
	// asking for another layer is refused rather than mixed.
	if o.Packages == "" && o.Preload == nil {
		o.Packages, o.Preload = s.opts.Packages, s.opts.Preload
	} else if dir := o.Packages; (dir != "" && absClean(dir) != s.opts.Packages) || (dir == "" && s.opts.Packages != "") ||
		!slices.Equal(o.Preload, s.opts.Preload) {
		return nil, fmt.Errorf("%w: sandbox: fork: the copy's package layer (%q, preloading %q) is not the session's (%q, preloading %q): a fork's Python holds what it imported from its source's layer; leave SessionOptions.Packages and .Preload empty to keep the source's",
			ErrPackages, o.Packages, o.Preload, s.opts.Packages, s.opts.Preload)
	}
	if o.PythonBackend == "" {
		o.PythonBackend = s.opts.PythonBackend
	}
	// Options are checked before anything is copied.
	o, err := o.resolved()
	if err != nil {
		return nil, err
	}
	if err := checkRoot(o.Root, s.sb.protected); err != nil {
		return nil, err
	}
	if rel := overlap(o.Root, s.opts.Root); rel != "" {
		return nil, fmt.Errorf("sandbox: fork: the copy's root %s %s the session's root %s; give a folder outside it", o.Root, rel, s.opts.Root)
	}
	if err := copyRoot(s.opts.Root, o.Root, newCopyQuota(o)); err != nil {
		return nil, fmt.Errorf("sandbox: fork: copying the session's files: %w", err)
	}
	record := o.Record // the fork's tape starts with the source's (forkBoundary)
	o.Record = nil
	cp, err := s.sb.NewSession(ctx, o)
	if err != nil {
		emptyDir(o.Root)
		return nil, err
	}
	if err := cp.forkBoundary(s, record, o.ownRecord); err != nil {
		cp.Close(ctx)
		emptyDir(o.Root)
		return nil, fmt.Errorf("sandbox: fork: %w", err)
	}
	for lang, inst := range s.instances {
		forker, ok := inst.(runtimes.Forker)
		if !ok {
			cp.fresh = append(cp.fresh, lang)
			continue
		}
		child, err := forker.Fork(ctx, cp.instanceOptions(lang))
		if err != nil {
			cp.Close(ctx)
			emptyDir(o.Root)
			return nil, fmt.Errorf("sandbox: fork: %s: %w", lang, err)
		}
		cp.instances[lang] = child
	}
	slices.Sort(cp.fresh)
	return cp, nil
}

// FreshLanguages names the languages whose state a Fork could not copy
// (JavaScript): in this session, made by Fork, they started afresh. It is
// nil for a session that NewSession made, and for a fork that copied
// everything.
func (s *Session) FreshLanguages() []string { return slices.Clone(s.fresh) }
