package profiles

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/wasmeval/wasmeval/sandbox"
)

// Session is a session a tool runs requests in and closes when it made it.
type Session interface {
	Evaluator
	Close(ctx context.Context) error
}

// Env is what a face gives a tool call: the session the call runs in, and
// the means to make others. Faces build one per call.
type Env struct {
	// Session runs the call's requests in the face's session (a `wasmeval
	// eval` session, serve's session {id}, an MCP connection's eval
	// session). Nil on a stateless face (serve's POST /v1/profiles/{tool}):
	// a tool that needs one then runs in a temporary session.
	Session Evaluator
	// Root is Session's root folder on the host, where the python
	// profile's cwd is looked up; "" when unknown.
	Root string
	// NewSession starts a session with fresh interpreters: on root's files
	// (the python profile's per-call kernel), or, when root is "", in a
	// temporary folder of its own that Close removes (run_code, code
	// contexts, and the tools of a stateless face). Nil means the face
	// cannot, and the tools that need it say so.
	NewSession func(ctx context.Context, root string) (Session, error)
	// Contexts holds the face's code contexts (code_interpreter); nil
	// means the face has none and createContext says so.
	Contexts ContextHost
	// KernelMode is the python profile's kernel mode when a call names
	// none (--kernel-mode): KernelSession ("" too) or KernelPerCall.
	KernelMode string
	// Admit, when set, is asked before runCode runs (the server's cap on
	// evals in flight; the session's tools are admitted by the face, and
	// context runs by their ContextHost). done ends the admission.
	Admit func() (done func(), err error)
}

// SessionEnv is the Env of a library caller's session: sess is the call's
// session, fresh sessions are made from it (sandbox.Session.FreshIn, with
// its options), and code contexts are sessions of the returned Contexts,
// which the caller closes.
func SessionEnv(sess *sandbox.Session) (*Env, *Contexts) {
	newSession := FreshSessions(sess)
	cs := NewContexts(newSession)
	cs.Backend = FreshBackendSessions(sess)
	return &Env{Session: sess, Root: sess.Root(), NewSession: newSession, Contexts: cs}, cs
}

// FreshSessions returns an Env.NewSession that makes sessions with
// sess's options: on a root, or in a temporary folder removed at Close.
func FreshSessions(sess *sandbox.Session) func(ctx context.Context, root string) (Session, error) {
	return func(ctx context.Context, root string) (Session, error) {
		if root != "" {
			return sess.FreshIn(ctx, root)
		}
		return tempSession(ctx, func(ctx context.Context, dir string) (Session, error) { return sess.FreshIn(ctx, dir) }, "")
	}
}

// FreshBackendSessions returns a Contexts.Backend that makes sessions
// with sess's options but the given Python backend
// (sandbox.Session.FreshInBackend), each in a temporary folder removed at
// Close.
func FreshBackendSessions(sess *sandbox.Session) func(ctx context.Context, backend string) (Session, error) {
	return func(ctx context.Context, backend string) (Session, error) {
		return tempSession(ctx, func(ctx context.Context, dir string) (Session, error) { return sess.FreshInBackend(ctx, dir, backend) }, "")
	}
}

// SandboxSessions returns an Env.NewSession that makes sessions of sb with
// default options (as sandbox.Sandbox.RunCode does); temporary folders
// are made in tempDir ("" means os.TempDir()).
func SandboxSessions(sb *sandbox.Sandbox, tempDir string) func(ctx context.Context, root string) (Session, error) {
	return func(ctx context.Context, root string) (Session, error) {
		open := func(ctx context.Context, dir string) (Session, error) {
			return sb.NewSession(ctx, sandbox.SessionOptions{Root: dir})
		}
		if root != "" {
			return open(ctx, root)
		}
		return tempSession(ctx, open, tempDir)
	}
}

// tempSession opens a session in a new temporary folder that its Close
// removes.
func tempSession(ctx context.Context, open func(ctx context.Context, dir string) (Session, error), tempDir string) (Session, error) {
	dir, err := os.MkdirTemp(tempDir, "wasmeval-profile-")
	if err != nil {
		return nil, fmt.Errorf("profiles: a temporary session folder: %w", err)
	}
	s, err := open(ctx, dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &ownedDir{Session: s, dir: dir}, nil
}

// ownedDir is a session whose folder goes with it.
type ownedDir struct {
	Session
	dir string
}

func (s *ownedDir) Close(ctx context.Context) error {
	return errors.Join(s.Session.Close(ctx), os.RemoveAll(s.dir))
}

// session returns the session a call runs in: env's, or a temporary one
// that done closes.
func (env *Env) session(ctx context.Context, profile string) (Evaluator, func(), error) {
	if env != nil && env.Session != nil {
		return env.Session, func() {}, nil
	}
	if env == nil || env.NewSession == nil {
		return nil, nil, fmt.Errorf("profiles: %s: the face gave no session to run in", profile)
	}
	s, err := env.NewSession(ctx, "")
	if err != nil {
		return nil, nil, err
	}
	return s, func() { s.Close(context.WithoutCancel(ctx)) }, nil
}

// EnvOf is the Env of a face that has only an Evaluator, like the
// EvalFunc of a Manager's session.
func EnvOf(sess Evaluator) *Env { return &Env{Session: sess} }
