package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wasmeval/wasmeval/internal/rootlink"
	"github.com/wasmeval/wasmeval/runtimes/python"
	"github.com/wasmeval/wasmeval/store"
)

// Session persistence (ManagerOptions.Store). After each top-level Eval,
// while it still holds the session's turn, the session saves its state:
// its Python memory as the pages written over the template
// (python.Instance.PersistState), the files of its root changed since the
// last save, its cut outputs, fuel used and options. Eval returns only
// once the state is saved, so an answered eval is never lost; a save that
// fails makes Eval fail with an error wrapping ErrStore. A request for a
// session id the manager does not hold loads it from the store (its owner
// must match), so a restarted process finds every session.
//
// JavaScript state cannot be saved (a goja VM cannot be serialized): the
// session keeps a journal of its JavaScript cells and their inputs
// instead, from which a load rebuilds it at its next JavaScript cell
// (jsjournal.go). When it cannot (no journal: past its cap, a cell that was
// stopped; a replay that diverged), that cell starts JavaScript afresh and
// carries a "state_reset" status event saying so and why.

// ErrStore is wrapped by the errors of the session store: a session whose
// state could not be saved after its eval, or one that could not be
// loaded (the store unreachable, a damaged record, a record of another
// Python build). Servers answer 503.
var ErrStore = errors.New("sandbox: session store")

// saveObserved, when set (benchmarks, persist_export_test.go), is called
// as a save starts; what it returns, as the save ends.
var saveObserved func() func()

// persistTimeout bounds one save or load.
const persistTimeout = 60 * time.Second

// persistedOptions are what a session was created with over the
// manager's template (CreateWith's options).
type persistedOptions struct {
	Env           map[string]string `json:"env,omitempty"`
	PythonBackend string            `json:"python,omitempty"`
}

// persistedMeta is the rest of a session's metadata.
type persistedMeta struct {
	Created time.Time `json:"created"`
	// Reset lists languages whose state a load could not bring back and
	// whose next cell has not said so yet.
	Reset []string `json:"reset,omitempty"`
	// Languages are the languages with live state when saved, for a
	// listing of sessions no process holds (cluster_list.go).
	Languages []string `json:"languages,omitempty"`
	// Clock is a deterministic session's virtual clock and random stream
	// (cluster_clock.go, versioned), so that a load goes on with them.
	Clock *persistedClock `json:"clock,omitempty"`
	// Labels are the host's notes on the session (labels.go).
	Labels map[string]string `json:"labels,omitempty"`
	// JSBytes is the JavaScript VM's size (an upper bound) when saved: a
	// load charges it in the memory budget until the VM is rebuilt.
	JSBytes int64 `json:"js_bytes,omitempty"`
}

// persistedOutputs is the session's store of cut outputs.
type persistedOutputs struct {
	Next  int               `json:"next"`
	Items []persistedOutput `json:"items,omitempty"`
}

type persistedOutput struct {
	ID   string `json:"id"`
	Body []byte `json:"body"`
	Note string `json:"note,omitempty"`
}

// sessionStore links a session to its record in a store. Its fields are
// used under the session's turn (sem).
type sessionStore struct {
	st       store.Store
	id       string
	owner    string
	artifact string
	epoch    int64
	options  []byte
	created  time.Time
	base     map[string]fileStamp // the root as last saved; nil: save it whole
	py       python.StateCache
	reset    []string // languages whose state was lost by a load, not yet noted
	// outputs is the output store as last saved, when its next id was
	// outputsNext.
	outputs     []byte
	outputsNext string
	// jrnl is the JavaScript journal (jsjournal.go); jsWhy says why a
	// load could not rebuild JavaScript, for the reset's note.
	jrnl  jsJournal
	jsWhy string
	// jsPending says the session was loaded with JavaScript state that its
	// first JavaScript cell rebuilds from jrnl: its listed languages name
	// js before then. Read outside the turn (liveLanguages).
	jsPending atomic.Bool
	// jsBytes is the JavaScript VM's size as last saved, charged in the
	// memory budget while its journal waits to be replayed (budgetload.go).
	jsBytes int64
}

// fileStamp is what tells a changed file from an unchanged one: a file
// whose stamp is as last saved is not read again (nor hashed by the
// store).
type fileStamp struct {
	mode  fs.FileMode
	size  int64
	mtime int64
	ino   uint64 // a file replaced by another (renamed over it) has another
	racy  bool   // changed too close to the save to trust its time
}

// racyWindow: a file modified this close before a save is sent again by
// the next one, whatever its stamp says, since a change within the
// clock's granularity may leave the stamp as it was.
const racyWindow = 100 * time.Millisecond

// persistAfterEval saves the session after a top-level Eval (the caller
// holds the turn). Eval's answer stands only once it is saved.
func (s *Session) persistAfterEval(ctx context.Context, res *Result, err error) (*Result, error) {
	if s.persist == nil {
		return res, err
	}
	s.journalEvalEnded(res, err) // jsjournal.go
	perr := s.saveState(ctx)
	if err != nil {
		return res, err
	}
	if perr != nil {
		return nil, perr
	}
	return res, nil
}

// saveState saves the session's state to its store; the caller holds the
// turn.
func (s *Session) saveState(ctx context.Context) error {
	p := s.persist
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	st := &store.State{ID: p.id, Owner: p.owner, Artifact: p.artifact, Options: p.options, FuelUsed: uint64(max(0, s.fuelUsedNow()))}
	s.imu.Lock()
	pyInst, hasPy := s.instances["py"]
	_, hasJS := s.instances["js"]
	s.imu.Unlock()
	if saveObserved != nil {
		if pi, ok := pyInst.(*python.Instance); ok {
			pi.AtRest() // the work between cells is not the save's
		}
		defer saveObserved()()
	}
	reset := slices.Clone(p.reset)
	if hasPy {
		if pi, ok := pyInst.(*python.Instance); ok {
			index, frames, err := pi.PersistState(ctx, &p.py)
			if err != nil {
				// An instance that cannot be read (its interpreter exited)
				// would fail every eval of the session here: it is saved
				// without its Python state, which a load then says is reset.
				s.sb.opts.Logger.Warn("saving a session without its Python state", "session", p.id, "err", err)
				p.py = python.StateCache{}
				if !slices.Contains(reset, "py") {
					reset = append(reset, "py")
				}
			}
			st.Python = index
			st.PythonFrames = make([]store.Frame, len(frames))
			for i, f := range frames {
				st.PythonFrames[i] = store.Frame(f)
			}
		} else if !slices.Contains(reset, "py") {
			reset = append(reset, "py") // a native kernel's state cannot be saved
		}
	}
	s.journalSave(st, hasJS) // the JavaScript journal (jsjournal.go)
	st.Meta, _ = json.Marshal(persistedMeta{Created: p.created, Reset: reset, Languages: s.liveLanguages(), Clock: s.clockState(), JSBytes: s.jsSaveBytes(), Labels: s.labelsNow()})
	// Outputs change only when one is added (next counts them): the
	// bytes saved last time are given again otherwise, so a store may
	// tell that they did not change.
	if next := s.outputs.nextID(); p.outputs == nil || p.outputsNext != next {
		p.outputs, p.outputsNext = s.outputs.marshal(), next
	}
	st.Outputs = p.outputs
	started := time.Now()
	cur, files, err := diffRoot(s.opts.Root, p.base, started, false)
	if err != nil {
		return fmt.Errorf("%w: reading the session's files: %v", ErrStore, err)
	}
	st.Files, st.FullFiles = files, p.base == nil
	err = p.st.Save(ctx, st, p.epoch)
	if !st.FullFiles && (errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrCorrupt)) {
		// The record is gone or unreadable (deleted, damaged): a delta has
		// nothing to apply to, so the whole root goes.
		if cur, st.Files, err = diffRoot(s.opts.Root, nil, started, false); err == nil {
			st.FullFiles = true
			err = p.st.Save(ctx, st, p.epoch)
		}
	}
	if err != nil {
		// The baseline stays: the next save sends every change since the
		// last one that was stored.
		return fmt.Errorf("%w: saving session %s: %w", ErrStore, p.id, err)
	}
	p.base = cur
	return nil
}

// dropPersistCache frees what the session keeps to make its next save
// cheaper (the compressed Python pages); for an idle session.
func (s *Session) dropPersistCache() {
	if s.persist != nil {
		s.persist.py = python.StateCache{}
	}
}

// beforeCell journals a JavaScript or TypeScript cell (c as the request
// gave it), rebuilding JavaScript state a load brought back as a journal
// (jsjournal.go), and tells the first cell of a language whose state a
// load could not bring back that it starts afresh. It returns the context
// to run the cell with.
func (s *Session) beforeCell(ctx context.Context, c Cell, sink *cellSink) context.Context {
	if s.persist == nil {
		return ctx
	}
	lang := c.Language
	if lang == "ts" {
		lang = "js"
	}
	ctx = s.journalCell(ctx, c, lang, sink)
	if !slices.Contains(s.persist.reset, lang) {
		return ctx
	}
	s.persist.reset = slices.DeleteFunc(s.persist.reset, func(l string) bool { return l == lang })
	what, why := "JavaScript", ""
	if lang == "py" {
		what = "Python"
	} else if s.persist.jsWhy != "" {
		why = " (it could not be rebuilt from its journal: " + s.persist.jsWhy + ")"
		s.persist.jsWhy = ""
	}
	sink.Status("state_reset", fmt.Sprintf("%s state was reset: this session was restored from its store after the server restarted or moved it, and its %s globals are gone%s; its files, outputs and other languages' state were kept", what, lang, why))
	return ctx
}

// diffRoot walks root and returns its stamps and the entries that differ
// from base (all of them when base is nil), with Deleted entries for what
// base had and root no longer has.
// With stampsOnly it reads no content and returns no entries.
//
// It walks and reads through an os.Root opened on root, never by host
// path: a folder swapped for a link between the listing of its parent and
// its own (by code that runs beside the save, as a native Jupyter kernel
// may) would lead a walk by path out of the root, and the save would copy
// host files, read with wasmeval's rights, into the session's store and
// so into its root at the next load. Through the Root every open stays
// inside; what a swap inside the root shows is the session's own.
func diffRoot(root string, base map[string]fileStamp, now time.Time, stampsOnly bool) (map[string]fileStamp, []store.File, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	cur := map[string]fileStamp{}
	var files []store.File
	racyAfter := now.Add(-racyWindow).UnixNano()
	err = fs.WalkDir(r.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // gone meanwhile
			}
			return err
		}
		mode := fi.Mode()
		if !mode.IsDir() && !mode.IsRegular() && mode&fs.ModeSymlink == 0 {
			return nil // pipes, sockets, devices: not kept
		}
		stamp := fileStamp{mode: mode, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
			stamp.ino = uint64(sys.Ino)
		}
		stamp.racy = stamp.mtime >= racyAfter
		cur[rel] = stamp
		if old, ok := base[rel]; stampsOnly || ok && !old.racy && old == stamp {
			return nil
		}
		f := store.File{Path: rel, Mode: mode &^ (fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky), ModTime: stamp.mtime}
		switch {
		case mode&fs.ModeSymlink != 0:
			t, err := r.Readlink(rel)
			if err != nil {
				return err
			}
			if rootlink.Safe(rel, t) != nil {
				// Not kept, as pipes are not: neither the guest nor a
				// package manager makes such a link (the host put it
				// there), and restoreRoot would refuse the whole session
				// for it. Out of cur, so a kept entry it replaced is
				// deleted from the store.
				delete(cur, rel)
				return nil
			}
			f.Data = []byte(t)
		case mode.IsRegular():
			b, ok, err := readRegular(r, rel)
			if err != nil {
				return err
			}
			if !ok {
				delete(cur, rel) // no longer a regular file: as pipes, not kept
				return nil
			}
			f.Data = b
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for rel := range base {
		if _, ok := cur[rel]; !ok && !stampsOnly {
			files = append(files, store.File{Path: rel, Deleted: true})
		}
	}
	return cur, files, nil
}

// readRegular reads rel in r if it is still a regular file (ok false when
// something else was put in its place), without following a link put
// there and without blocking on a named pipe.
func readRegular(r *os.Root, rel string) (data []byte, ok bool, err error) {
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, false, nil // a link now
		}
		return nil, false, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, false, err
	}
	b, err := io.ReadAll(f)
	return b, err == nil, err
}

// restoreRoot makes root hold exactly files: entries it holds that files
// do not are removed, the others written (a regular file only when its
// content differs), with their modes and times.
func restoreRoot(root string, files []store.File) error {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	want := map[string]store.File{}
	links := map[string]bool{}
	for _, f := range files {
		if err := store.CheckPath(f.Path); err != nil {
			return err
		}
		want[f.Path] = f
		if f.Mode&fs.ModeSymlink != 0 {
			links[f.Path] = true
		}
	}
	// Links only as the host can follow them and stay in the root
	// (rootlink.Safe, the rule fork, replay and the save keep), and
	// nothing below a link: made through it, an entry would lie elsewhere
	// than its path says, and a link there would climb from another
	// folder than the one it was judged by. Checked before the root is
	// touched: a store written by something else, or tampered with, fails
	// the load and leaves the root as it was.
	for _, f := range files {
		if via, ok := rootlink.Through(f.Path, func(rel string) bool { return links[rel] }); ok {
			return fmt.Errorf("the entry %s lies below %s, which is a symbolic link: a kept root has nothing below its links", f.Path, via)
		}
		if f.Mode&fs.ModeSymlink == 0 {
			continue
		}
		if err := rootlink.Safe(f.Path, string(f.Data)); err != nil {
			return fmt.Errorf("the link %s points to %q, which the host could not follow and stay in the root: %v", f.Path, f.Data, err)
		}
	}
	// What is there and should not be (or has another type) goes first.
	var extra []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		f, ok := want[rel]
		if !ok || f.Mode.Type() != d.Type() {
			extra = append(extra, rel)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	for _, rel := range extra {
		if err := r.RemoveAll(rel); err != nil {
			return err
		}
	}
	slices.SortFunc(files, func(a, b store.File) int { return strings.Compare(a.Path, b.Path) })
	for _, f := range files {
		switch {
		case f.Mode.IsDir():
			if err := r.MkdirAll(f.Path, 0o700); err != nil {
				return err
			}
		case f.Mode&fs.ModeSymlink != 0:
			t := string(f.Data) // rootlink.Safe, checked above
			if cur, err := r.Readlink(f.Path); err == nil && cur == t {
				continue
			}
			r.Remove(f.Path)
			if err := r.Symlink(t, f.Path); err != nil {
				return err
			}
		default:
			if cur, err := r.ReadFile(f.Path); err != nil || string(cur) != string(f.Data) {
				if err := r.WriteFile(f.Path, f.Data, 0o600); err != nil {
					return err
				}
			}
			if err := r.Chmod(f.Path, f.Mode.Perm()); err != nil {
				return err
			}
			t := time.Unix(0, f.ModTime)
			if err := r.Chtimes(f.Path, t, t); err != nil {
				return err
			}
		}
	}
	// Folders last, deepest first: writing inside one changes its time.
	for i := len(files) - 1; i >= 0; i-- {
		if f := files[i]; f.Mode.IsDir() {
			r.Chmod(f.Path, f.Mode.Perm()|0o700)
			t := time.Unix(0, f.ModTime)
			r.Chtimes(f.Path, t, t)
		}
	}
	return nil
}

// marshal is the output store as JSON, for a save.
func (s *outputStore) marshal() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	po := persistedOutputs{Next: s.next}
	for _, id := range s.order {
		o := s.texts[id]
		po.Items = append(po.Items, persistedOutput{ID: id, Body: o.body, Note: o.note})
	}
	b, _ := json.Marshal(po)
	return b
}

// unmarshal restores the output store from a save.
func (s *outputStore) unmarshal(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	var po persistedOutputs
	if err := json.Unmarshal(b, &po); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next, s.order, s.texts, s.size = po.Next, nil, map[string]storedOutput{}, 0
	for _, o := range po.Items {
		s.order = append(s.order, o.ID)
		s.texts[o.ID] = storedOutput{body: o.Body, note: o.Note}
		s.size += len(o.Body) + len(o.Note)
	}
	return nil
}

// managerStore is the Manager's side of its store: the artifact key and
// the loads in progress.
type managerStore struct {
	keyOnce sync.Once
	key     string
	keyErr  error

	mu         sync.Mutex
	loading    map[string]chan struct{}
	lastExpire time.Time
}

// stateKey names the Python template the manager's sessions run on, the
// key of their saved states.
func (m *Manager) stateKey(ctx context.Context) (string, error) {
	ms := &m.ms
	ms.keyOnce.Do(func() {
		o := m.opts.Session
		o.Root = m.opts.Workspace
		o, err := o.resolved()
		if err == nil {
			err = m.sb.resolveSessionLayer(&o)
		}
		if err != nil {
			ms.keyErr = err
			return
		}
		probe := &Session{sb: m.sb, opts: o}
		rt, err := probe.runtimeFor(ctx, "py")
		if err != nil {
			ms.key = "no-python" // nothing of Python is saved then
			return
		}
		pr, ok := rt.(*python.Runtime)
		if !ok {
			ms.key = "no-python"
			return
		}
		ms.key, ms.keyErr = pr.StateKey()
	})
	return ms.key, ms.keyErr
}

// attachStore links a new session to the store and saves it, so that it
// is found after a restart even before its first eval.
func (m *Manager) attachStore(ctx context.Context, sess *Session, id, owner string) error {
	if m.opts.Store == nil {
		return nil
	}
	key, err := m.stateKey(ctx)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStore, err)
	}
	opts, _ := json.Marshal(persistedOptions{Env: sess.opts.SetEnv, PythonBackend: sess.opts.PythonBackend})
	sess.persist = &sessionStore{st: m.opts.Store, id: id, owner: owner, artifact: key, epoch: m.epoch(id), options: opts, created: time.Now()}
	sess.persist.jrnl.limit = journalLimit(m.opts.JSJournalBytes)
	if err := acquire(ctx, sess.sem); err != nil {
		return err
	}
	defer func() { <-sess.sem }()
	return sess.saveState(ctx)
}

// epoch is the fencing epoch of the manager's saves of id.
func (m *Manager) epoch(id string) int64 {
	if m.opts.StoreEpoch != nil {
		return m.opts.StoreEpoch(id)
	}
	return 1
}

// loadMissing loads the session id of owner from the store when the
// manager does not hold it. It returns an error only for a store that
// failed (ErrStore); a session the store does not hold, or holds for
// another owner, is left for the caller's ErrNoSession.
func (m *Manager) loadMissing(owner, id string) error {
	if m.opts.Store == nil || store.CheckID(id) != nil {
		return nil
	}
	ms := &m.ms
	for {
		m.mu.Lock()
		_, held := m.byID[id]
		closed := m.closed
		m.mu.Unlock()
		if held || closed {
			return nil
		}
		ms.mu.Lock()
		if ms.loading == nil {
			ms.loading = map[string]chan struct{}{}
		}
		wait, busy := ms.loading[id]
		if !busy {
			done := make(chan struct{})
			ms.loading[id] = done
			ms.mu.Unlock()
			err := m.chargeLoaded(id, m.load(owner, id)) // budgetload.go
			ms.mu.Lock()
			delete(ms.loading, id)
			ms.mu.Unlock()
			close(done)
			return err
		}
		ms.mu.Unlock()
		<-wait // another request loads it; look again
	}
}

// load reads the session id from the store and keeps it, when owner's.
func (m *Manager) load(owner, id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), persistTimeout)
	defer cancel()
	start := time.Now()
	key, err := m.stateKey(ctx)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStore, err)
	}
	st, err := m.opts.Store.Load(ctx, id, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		m.sb.opts.Logger.Warn("loading a session from the store", "session", id, "err", err)
		return fmt.Errorf("%w: loading session %s: %w", ErrStore, id, err)
	}
	if st.Owner != owner {
		return nil // not this owner's: the same answer as no session
	}
	var po persistedOptions
	var meta persistedMeta
	if err := errors.Join(unmarshalIf(st.Options, &po), unmarshalIf(st.Meta, &meta)); err != nil {
		return fmt.Errorf("%w: session %s: its record's metadata does not decode: %v", ErrStore, id, err)
	}
	pyFrames, jrnl, jsWhy, err := loadJournal(st, m.opts.JSJournalBytes) // jsjournal.go
	if err != nil {
		return fmt.Errorf("%w: session %s: %v", ErrStore, id, err)
	}
	root := filepath.Join(m.opts.Workspace, id)
	if err := restoreRoot(root, st.Files); err != nil {
		return fmt.Errorf("%w: session %s: restoring its files: %v", ErrStore, id, err)
	}
	so := m.opts.Session
	so.Root = root
	so.SetEnv = po.Env
	so.PythonBackend = po.PythonBackend
	sess, err := m.sb.NewSession(ctx, so)
	if err != nil {
		return fmt.Errorf("%w: session %s: %v", ErrStore, id, err)
	}
	fail := func(err error) error {
		sess.Close(ctx)
		return fmt.Errorf("%w: session %s: %v", ErrStore, id, err)
	}
	if err := sess.restoreClock(meta.Clock); err != nil { // before any clock read
		return fail(err)
	}
	if err := sess.outputs.unmarshal(st.Outputs); err != nil {
		return fail(fmt.Errorf("its outputs do not decode: %v", err))
	}
	sess.fuelUsed = int64(min(st.FuelUsed, 1<<62))
	var pyCache python.StateCache
	if len(st.Python) > 0 {
		rt, err := sess.runtimeFor(ctx, "py")
		if err != nil {
			return fail(err)
		}
		pr, ok := rt.(*python.Runtime)
		if !ok {
			return fail(errors.New("its Python state needs the CPython runtime"))
		}
		frames := make([]python.Frame, len(pyFrames))
		for i, f := range pyFrames {
			frames[i] = python.Frame(f)
		}
		// The cache is seeded with the loaded frames: the first save
		// after the load compresses only what its eval changed.
		inst, err := pr.RestoreInstance(ctx, sess.instanceOptions("py"), st.Python, frames, &pyCache)
		if err != nil {
			return fail(err)
		}
		sess.instances["py"] = inst
	}
	reset := meta.Reset
	if jsWhy != "" && !slices.Contains(reset, "js") {
		reset = append(reset, "js")
	}
	created := meta.Created
	if created.IsZero() {
		created = time.Now()
	}
	opts, _ := json.Marshal(po)
	sess.persist = &sessionStore{st: m.opts.Store, id: id, owner: owner, artifact: key, epoch: max(st.Epoch, m.epoch(id)), options: opts, created: created, reset: reset, py: pyCache, jrnl: jrnl, jsWhy: jsWhy, jsBytes: meta.JSBytes}
	sess.persist.jsPending.Store(len(jrnl.pending) > 0)
	sess.restoreLabels(meta.Labels)
	if base, _, err := diffRoot(root, nil, time.Now(), true); err == nil {
		sess.persist.base = base
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		sess.Close(ctx)
		return ErrClosed
	}
	evict := m.evictForLocked(owner)
	now := time.Now()
	m.byID[id] = &managed{id: id, owner: owner, sess: sess, root: root, created: created, lastUsed: now}
	m.mu.Unlock()
	m.dropAll(ctx, evict, "too many sessions")
	m.sb.opts.Logger.Info("session loaded from the store", "session", id, "owner", owner, "files", len(st.Files), "pythonBytes", len(st.Python), "ms", time.Since(start).Milliseconds())
	return nil
}

func unmarshalIf(b []byte, v any) error {
	if len(b) == 0 {
		return nil
	}
	return json.Unmarshal(b, v)
}

// expireEvery is how often the manager looks for stored sessions idle
// past its timeout that it does not hold.
const expireEvery = 30 * time.Second

// expireStored deletes the records (and the folders) of the sessions the
// manager does not hold whose last save is older than the idle timeout:
// sessions nobody came back for, also across restarts. It runs at most
// every expireEvery, and only for a store that knows its records' ages
// (store.Aged). It returns how many it deleted.
func (m *Manager) expireStored(ctx context.Context) int {
	aged, ok := m.opts.Store.(store.Aged)
	if !ok || m.opts.IdleTimeout < 0 {
		return 0
	}
	ms := &m.ms
	ms.mu.Lock()
	if time.Since(ms.lastExpire) < expireEvery {
		ms.mu.Unlock()
		return 0
	}
	ms.lastExpire = time.Now()
	ms.mu.Unlock()
	ids, err := aged.SavedBefore(ctx, time.Now().Add(-m.opts.IdleTimeout))
	if err != nil {
		m.sb.opts.Logger.Warn("listing the store's idle sessions", "err", err)
		return 0
	}
	n := 0
	for _, id := range ids {
		// Held like a load, so no load of id starts meanwhile.
		m.mu.Lock()
		_, held := m.byID[id]
		m.mu.Unlock()
		ms.mu.Lock()
		if ms.loading == nil {
			ms.loading = map[string]chan struct{}{}
		}
		_, busy := ms.loading[id]
		if held || busy {
			ms.mu.Unlock()
			continue
		}
		done := make(chan struct{})
		ms.loading[id] = done
		ms.mu.Unlock()
		m.mu.Lock()
		_, held = m.byID[id]
		m.mu.Unlock()
		if !held {
			m.forgetStored(ctx, id)
			if !m.opts.KeepFiles {
				os.RemoveAll(filepath.Join(m.opts.Workspace, id))
			}
			m.sb.opts.Logger.Info("stored session expired", "session", id, "reason", "idle")
			n++
		}
		ms.mu.Lock()
		delete(ms.loading, id)
		ms.mu.Unlock()
		close(done)
	}
	return n
}

// forgetStored deletes the stored state of a session the manager deleted
// or evicted: it is gone, as without a store.
func (m *Manager) forgetStored(ctx context.Context, id string) {
	if m.opts.Store == nil {
		return
	}
	if err := m.opts.Store.Delete(context.WithoutCancel(ctx), id); err != nil {
		m.sb.opts.Logger.Warn("deleting a session from the store", "session", id, "err", err)
	}
}
