package profiles

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/wasmeval/wasmeval/sandbox"
)

// ErrNoContext is the error of a code context that does not exist: never
// created, deleted, evicted, or another owner's.
var ErrNoContext = errors.New("profiles: no such code context")

// ContextHost makes, runs in and deletes the code contexts of a face
// (code_interpreter's createContext, runInContext, deleteContext). A
// context is a session of its own: its interpreter state persists from
// run to run until it is deleted.
type ContextHost interface {
	// CreateContext makes a context as o says and returns its id.
	CreateContext(ctx context.Context, o ContextOptions) (id string, err error)
	// ContextLanguage returns the language CreateContext was given;
	// ErrNoContext when id is unknown.
	ContextLanguage(id string) (string, error)
	// EvalInContext runs req in context id; ErrNoContext when unknown.
	EvalInContext(ctx context.Context, id string, req sandbox.Request) (*sandbox.Result, error)
	// DeleteContext closes context id and removes its folder;
	// ErrNoContext when unknown.
	DeleteContext(ctx context.Context, id string) error
}

// ContextOptions say what context CreateContext makes.
type ContextOptions struct {
	// Language is the context's language: "py", "js" or "ts".
	Language string
	// PythonBackend is the Python backend of a py context's session,
	// sandbox.PythonWasm or sandbox.PythonJupyter; "" means the face's
	// default. Another than the default needs the operator's
	// --python-backend-choice (sandbox.Options.PythonBackendChoice); a
	// refusal wraps sandbox.ErrBadPythonBackend.
	PythonBackend string
}

// MaxContexts is how many code contexts a Contexts holds at once.
const MaxContexts = 16

// Contexts is a ContextHost whose contexts are sessions made by a
// NewSession function, each in a temporary folder of its own: the library's
// and `wasmeval eval`'s. Close closes them all.
type Contexts struct {
	newSession func(ctx context.Context, root string) (Session, error)
	// Backend, when set, makes the session of a context that names its
	// Python backend (ContextOptions.PythonBackend), in a temporary
	// folder of its own that Close removes; nil refuses such a context.
	// SessionEnv sets it (FreshBackendSessions).
	Backend func(ctx context.Context, backend string) (Session, error)

	mu     sync.Mutex
	byID   map[string]*localContext
	closed bool
}

type localContext struct {
	sess     Session
	language string
}

// NewContexts returns an empty Contexts whose contexts newSession makes
// (with root "").
func NewContexts(newSession func(ctx context.Context, root string) (Session, error)) *Contexts {
	return &Contexts{newSession: newSession, byID: map[string]*localContext{}}
}

// CreateContext implements ContextHost.
func (c *Contexts) CreateContext(ctx context.Context, o ContextOptions) (string, error) {
	newSession := c.newSession
	if o.PythonBackend != "" {
		if c.Backend == nil {
			return "", fmt.Errorf("%w: this face cannot choose a context's Python backend; leave python out", sandbox.ErrBadPythonBackend)
		}
		newSession = func(ctx context.Context, _ string) (Session, error) { return c.Backend(ctx, o.PythonBackend) }
	}
	c.mu.Lock()
	n, closed := len(c.byID), c.closed
	c.mu.Unlock()
	switch {
	case closed:
		return "", sandbox.ErrClosed
	case n >= MaxContexts:
		return "", &Error{Profile: CodeInterpreter, Message: fmt.Sprintf("%d code contexts are open, the most there may be; delete one with deleteContext first", MaxContexts)}
	}
	s, err := newSession(ctx, "")
	if err != nil {
		return "", err
	}
	id := newContextID()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		s.Close(context.WithoutCancel(ctx))
		return "", sandbox.ErrClosed
	}
	c.byID[id] = &localContext{sess: s, language: o.Language}
	return id, nil
}

func (c *Contexts) get(id string) (*localContext, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	lc, ok := c.byID[id]
	if !ok {
		return nil, ErrNoContext
	}
	return lc, nil
}

// ContextLanguage implements ContextHost.
func (c *Contexts) ContextLanguage(id string) (string, error) {
	lc, err := c.get(id)
	if err != nil {
		return "", err
	}
	return lc.language, nil
}

// EvalInContext implements ContextHost.
func (c *Contexts) EvalInContext(ctx context.Context, id string, req sandbox.Request) (*sandbox.Result, error) {
	lc, err := c.get(id)
	if err != nil {
		return nil, err
	}
	res, err := lc.sess.Eval(ctx, req)
	if errors.Is(err, sandbox.ErrClosed) {
		return nil, ErrNoContext // deleted while this run waited
	}
	return res, err
}

// DeleteContext implements ContextHost.
func (c *Contexts) DeleteContext(ctx context.Context, id string) error {
	c.mu.Lock()
	lc, ok := c.byID[id]
	delete(c.byID, id)
	c.mu.Unlock()
	if !ok {
		return ErrNoContext
	}
	return lc.sess.Close(ctx)
}

// Close closes every context. Later calls fail with sandbox.ErrClosed.
func (c *Contexts) Close(ctx context.Context) error {
	c.mu.Lock()
	all := c.byID
	c.byID, c.closed = map[string]*localContext{}, true
	c.mu.Unlock()
	var errs []error
	for _, lc := range all {
		errs = append(errs, lc.sess.Close(ctx))
	}
	return errors.Join(errs...)
}

func newContextID() string {
	var b [12]byte
	rand.Read(b[:])
	return "ctx-" + hex.EncodeToString(b[:])
}

// ManagerContexts is the ContextHost of a server: the contexts are
// sessions of m owned by owner (so idle eviction, quotas and the sessions'
// turns apply to them as to any), made by create (nil means m.Create).
// Each context's language is a label of its session (ContextLanguageLabel),
// so it goes where the session goes: across calls and faces, and to the
// process that loads it from a store (a restart, a move to another node).
type ManagerContexts struct {
	Manager *sandbox.Manager
	Owner   string
	Create  func(ctx context.Context, owner string) (string, error)
	// CreateWith makes the session of a context that names its Python
	// backend (nil means m.CreateWith), so a server applies its quota to
	// those too.
	CreateWith func(ctx context.Context, owner string, o sandbox.CreateOptions) (string, error)
	// Turn, when set, waits for the context's turn before a run (as the
	// server's evals of a session wait); end ends it. nested says the run
	// goes inside a cell of the context that waits in agent() or tool(),
	// which holds the turn and an admission already.
	Turn func(ctx context.Context, id string) (end func(), nested bool, err error)
	// Admit, when set, is asked after the turn, before the run: the
	// server's cap on evals in flight. done ends the admission.
	Admit func() (done func(), err error)
}

// ContextLanguageLabel is the session label (sandbox.Session.SetLabel)
// that holds a code context's language.
const ContextLanguageLabel = "code_context.language"

// CreateContext implements ContextHost.
func (mc *ManagerContexts) CreateContext(ctx context.Context, o ContextOptions) (string, error) {
	create := mc.Create
	if create == nil {
		create = mc.Manager.Create
	}
	if o.PythonBackend != "" {
		with := mc.CreateWith
		if with == nil {
			with = mc.Manager.CreateWith
		}
		create = func(ctx context.Context, owner string) (string, error) {
			return with(ctx, owner, sandbox.CreateOptions{PythonBackend: o.PythonBackend})
		}
	}
	id, err := create(ctx, mc.Owner)
	if err != nil {
		return "", err
	}
	sess, err := mc.Manager.Session(mc.Owner, id)
	if err != nil {
		return "", err
	}
	sess.SetLabel(ContextLanguageLabel, o.Language)
	return id, nil
}

// ContextLanguage implements ContextHost.
func (mc *ManagerContexts) ContextLanguage(id string) (string, error) {
	sess, err := mc.Manager.Session(mc.Owner, id)
	if err != nil {
		if errors.Is(err, sandbox.ErrNoSession) {
			return "", ErrNoContext
		}
		return "", err
	}
	return sess.Label(ContextLanguageLabel), nil
}

// EvalInContext implements ContextHost.
func (mc *ManagerContexts) EvalInContext(ctx context.Context, id string, req sandbox.Request) (*sandbox.Result, error) {
	if _, err := mc.Manager.Session(mc.Owner, id); errors.Is(err, sandbox.ErrNoSession) {
		return nil, ErrNoContext
	}
	nested := false
	if mc.Turn != nil {
		end, n, err := mc.Turn(ctx, id)
		if err != nil {
			return nil, err
		}
		defer end()
		nested = n
	}
	if mc.Admit != nil && !nested {
		done, err := mc.Admit()
		if err != nil {
			return nil, err
		}
		defer done()
	}
	res, err := mc.Manager.Eval(ctx, mc.Owner, id, req)
	if errors.Is(err, sandbox.ErrNoSession) {
		return nil, ErrNoContext
	}
	return res, err
}

// DeleteContext implements ContextHost.
func (mc *ManagerContexts) DeleteContext(ctx context.Context, id string) error {
	err := mc.Manager.Delete(ctx, mc.Owner, id)
	if errors.Is(err, sandbox.ErrNoSession) {
		return ErrNoContext
	}
	return err
}
