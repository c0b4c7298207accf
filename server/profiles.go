package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/sandbox"
)

// The endpoints of the tool profiles other than eval (profiles package):
// each decodes, validates and runs its call with the profile's one
// implementation, in a session of the JSON API.

// EvaluatePythonResult is the answer of POST
// /v1/sessions/{id}/profiles/evaluate_python: the asteval tool's result.
type EvaluatePythonResult = profiles.EvalResult

// PythonResult is the answer of POST /v1/sessions/{id}/profiles/python:
// the Jupyter-backed python tool's result.
type PythonResult = profiles.PythonResult

// CodeResult is the answer of run_code and run_in_code_context: the
// CodeInterpreter's RunCodeResult.
type CodeResult = profiles.CodeResult

// routeProfiles adds the endpoints of this file to the mux: a tool's
// call in a session, and without one (the stateless endpoint, as /v1/run
// is to eval: evaluate_python and python in a temporary session, run_code,
// and the code contexts, which are sessions of their own).
func (s *Server) routeProfiles() {
	s.mux.Handle("POST /v1/sessions/{id}/profiles/{tool}", s.auth(func(w http.ResponseWriter, r *http.Request, owner string) {
		s.runTool(w, r, owner, r.PathValue("id"))
	}))
	s.mux.Handle("POST /v1/profiles/{tool}", s.auth(func(w http.ResponseWriter, r *http.Request, owner string) {
		s.runTool(w, r, owner, "")
	}))
}

// toolEnv is the Env of a call of owner in session id ("" for none).
// settle is told of each code context whose turn the call takes (not
// nested), to settle once the answer is out.
func (s *Server) toolEnv(owner, id string, sess *sandbox.Session, settle func(*sandbox.Session)) *profiles.Env {
	env := &profiles.Env{
		NewSession: profiles.Budgeted(s.cfg.Manager, profiles.SandboxSessions(s.cfg.Sandbox, s.cfg.TempDir)),
		KernelMode: s.cfg.KernelMode,
		Contexts: &profiles.ManagerContexts{
			Manager: s.cfg.Manager, Owner: owner,
			Create: func(ctx context.Context, owner string) (string, error) {
				return s.withQuota(owner, func() (string, error) { return s.cfg.Manager.Create(ctx, owner) })
			},
			CreateWith: s.createWith,
			Turn: func(ctx context.Context, cid string) (func(), bool, error) {
				end, nested, err := s.turns.takeOrNest(ctx, cid, func() (bool, <-chan struct{}) { return s.cfg.Manager.NestedReady(cid) })
				if err == errTooManyWaiting {
					s.evals.WithLabelValues("rejected").Inc()
					return nil, false, fmt.Errorf("%d evals already wait for this code context, which runs one at a time; retry when one has ended", maxWaiting)
				}
				if err == nil && !nested {
					if cs, err := s.cfg.Manager.Session(owner, cid); err == nil {
						settle(cs)
					}
				}
				return end, nested, err
			},
			Admit: s.admitTool,
		},
		Admit: s.admitTool,
	}
	if sess != nil {
		env.Session = profiles.EvalFunc(func(ctx context.Context, req sandbox.Request) (*sandbox.Result, error) {
			return s.cfg.Manager.Eval(ctx, owner, id, req)
		})
		env.Root = sess.Root()
		fresh := profiles.Budgeted(s.cfg.Manager, profiles.FreshSessions(sess))
		temp := env.NewSession
		env.NewSession = func(ctx context.Context, root string) (profiles.Session, error) {
			if root != "" {
				return fresh(ctx, root) // the python profile's per-call kernel
			}
			return temp(ctx, root)
		}
	}
	return env
}

// createWith makes a session of owner as o says (a code context that
// names its Python backend), within owner's quota.
func (s *Server) createWith(ctx context.Context, owner string, o sandbox.CreateOptions) (string, error) {
	return s.withQuota(owner, func() (string, error) { return s.cfg.Manager.CreateWith(ctx, owner, o) })
}

// runTool runs a call of a profile's tool (profiles.Tools) in session id
// of owner, or, when id is "", without one.
func (s *Server) runTool(w http.ResponseWriter, r *http.Request, owner, id string) {
	tool, ok := profiles.LookupTool(r.PathValue("tool"))
	switch {
	case !ok:
		if !s.drainBody(w, r) {
			return
		}
		msg := fmt.Sprintf("no profile tool %q; the tools here are %s", r.PathValue("tool"), strings.Join(profiles.ToolNames(), ", "))
		if r.PathValue("tool") == profiles.Eval {
			msg += " (the eval profile is POST /v1/sessions/{id}/eval, and POST /v1/run without a session)"
		}
		writeError(w, http.StatusNotFound, "not_found", msg)
		return
	case !s.cfg.Tools.Has(tool.Profile):
		if !s.drainBody(w, r) {
			return
		}
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("the %s profile is off on this server; it serves --tools %s", tool.Profile, s.cfg.Tools))
		return
	}
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	if err := tool.Check(body); err != nil {
		s.evals.WithLabelValues("invalid").Inc()
		writeError(w, http.StatusBadRequest, "invalid_request", profiles.Detail(err))
		return
	}
	if id == "" && s.toolElsewhere(w, r, body) { // contextforward.go
		return
	}
	var sess *sandbox.Session
	endTurn, nested := func() {}, false
	if id != "" {
		var err error
		if sess, err = s.cfg.Manager.Session(owner, id); err != nil {
			s.sessionError(w, r, err)
			return
		}
		if tool.Session {
			if endTurn, nested, ok = s.waitTurn(w, r, id, sess.NestedReady); !ok {
				return
			}
		}
	}
	defer endTurn()
	// The session's tools take an admission here; the others where they
	// run code (Env.Admit, ManagerContexts.Admit), after a context's turn.
	admitted := tool.Session && !nested
	if admitted && !s.admit(w) {
		return
	}
	release := sync.OnceFunc(s.done)
	if !admitted {
		release = func() {}
	}
	defer release()
	// Once the answer is out, the sessions the call ran cells in do their
	// work between cells, as after an eval (settle.go): the session's own
	// (not when nested) and the code contexts'. Temporary sessions are
	// closed by then. Deferred before closeSSE: after the stream's end too.
	var settleMu sync.Mutex
	var toSettle []*sandbox.Session
	if sess != nil && tool.Session && !nested {
		toSettle = append(toSettle, sess)
	}
	settle := false
	defer func() {
		if !settle {
			return
		}
		settleMu.Lock()
		defer settleMu.Unlock()
		for _, cs := range toSettle {
			settleLater(cs)
		}
	}()
	note := func(cs *sandbox.Session) {
		settleMu.Lock()
		defer settleMu.Unlock()
		for _, p := range toSettle {
			if p == cs {
				return
			}
		}
		toSettle = append(toSettle, cs)
	}
	s.log.Info("profile tool", "tool", tool.Name, "owner", owner, "session", id, "args", cut(string(body), maxLoggedCode))
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	ctx = sandbox.WithHost(ctx, s.serverHost())
	var sse *sseWriter
	if wantsSSE(r) {
		// As an eval's stream: the code's events, then done (the result)
		// or error (also for what only the run finds invalid: a missing
		// read, a create write whose file exists).
		sse = newSSE(w, func() { cancel(errStreamEnded) })
		defer s.closeSSE(sse, owner, id)
		ctx = sandbox.WithEventFunc(ctx, sse.event)
		if id != "" {
			ctx = sandbox.WithHost(ctx, &clientHost{s: s, owner: owner, session: id, sse: sse})
		}
	}
	start := time.Now()
	res, failed, err := tool.Run(ctx, s.toolEnv(owner, id, sess, note), body)
	release()
	endTurn()
	var pe *profiles.Error
	switch {
	case errors.As(err, &pe):
		s.evals.WithLabelValues("invalid").Inc()
		if sse != nil {
			sse.send("error", errorBody("invalid_request", pe.Detail()))
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_request", pe.Detail())
		return
	case errors.Is(err, errBusy):
		w.Header().Set("Retry-After", "1")
		if sse != nil {
			sse.send("error", errorBody("too_busy", err.Error()))
			return
		}
		writeError(w, http.StatusTooManyRequests, "too_busy", err.Error())
		return
	case err != nil:
		s.evals.WithLabelValues("failed").Inc()
		if sse != nil {
			sse.send("error", errorBody(errorCode(err), err.Error()))
			return
		}
		s.sessionError(w, r, err)
		return
	}
	status := "complete"
	if failed {
		status = "error"
	}
	s.evals.WithLabelValues(status).Inc()
	s.duration.Observe(time.Since(start).Seconds())
	settle = true
	if sse != nil {
		sse.send("done", res)
		return
	}
	answerNow(w, http.StatusOK, res)
}

// errBusy is a call refused because the server runs as many evals as it
// allows.
var errBusy = errors.New("the server is running as many evals as it allows; retry in a second")

// admitTool takes an in-flight slot for a tool's run, or fails with
// errBusy.
func (s *Server) admitTool() (func(), error) {
	select {
	case s.inflight <- struct{}{}:
		return s.done, nil
	default:
		s.evals.WithLabelValues("rejected").Inc()
		return nil, errBusy
	}
}
