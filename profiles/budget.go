package profiles

import (
	"context"

	"github.com/wasmeval/wasmeval/sandbox"
)

// Budgeted returns newSession with every session it makes running its
// evals under m's memory budget (sandbox.Manager.EvalOutside), as the
// manager's own sessions do: serve's and MCP's temporary sessions (run_code,
// the stateless tools, the python profile's per-call kernel) are sessions
// the manager does not hold, and each may grow to its memory limit, so
// without this they ran past the budget and held no room against others.
// A nil m returns newSession as it is.
func Budgeted(m *sandbox.Manager, newSession func(ctx context.Context, root string) (Session, error)) func(ctx context.Context, root string) (Session, error) {
	if m == nil || newSession == nil {
		return newSession
	}
	return func(ctx context.Context, root string) (Session, error) {
		s, err := newSession(ctx, root)
		if err != nil {
			return nil, err
		}
		return &budgeted{Session: s, m: m, sess: sandboxSession(s)}, nil
	}
}

// budgeted is a session whose evals reserve room in a manager's budget.
type budgeted struct {
	Session
	m    *sandbox.Manager
	sess *sandbox.Session // nil when s is not made of one: then only Eval
}

func (b *budgeted) Eval(ctx context.Context, req sandbox.Request) (*sandbox.Result, error) {
	if b.sess == nil {
		return b.Session.Eval(ctx, req)
	}
	return b.m.EvalOutside(ctx, b.sess, req)
}

// sandboxSession is the sandbox session s is made of (SandboxSessions and
// FreshSessions make them), or nil.
func sandboxSession(s Session) *sandbox.Session {
	switch v := s.(type) {
	case *sandbox.Session:
		return v
	case *ownedDir:
		return sandboxSession(v.Session)
	}
	return nil
}
