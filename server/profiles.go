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

// routeProfiles adds the endpoints of this file to the mux.
func (s *Server) routeProfiles() {
	s.mux.Handle("POST /v1/sessions/{id}/profiles/{tool}", s.auth(s.runTool))
}

// runTool runs a call of a profile's tool (profiles.Tools) in session id:
// for evaluate_python, a fresh namespace of its Python and its files.
func (s *Server) runTool(w http.ResponseWriter, r *http.Request, owner string) {
	tool, ok := profiles.LookupTool(r.PathValue("tool"))
	switch {
	case !ok:
		if !s.drainBody(w, r) {
			return
		}
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no profile tool %q; the tools here are %s", r.PathValue("tool"), strings.Join(profiles.ToolNames(), ", ")))
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
	id := r.PathValue("id")
	sess, err := s.cfg.Manager.Session(owner, id)
	if err != nil {
		s.sessionError(w, r, err)
		return
	}
	endTurn, nested, ok := s.waitTurn(w, r, id, sess.NestedReady)
	if !ok {
		return
	}
	defer endTurn()
	if !nested && !s.admit(w) {
		return
	}
	release := sync.OnceFunc(s.done)
	if nested {
		release = func() {}
	}
	defer release()
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
		ctx = sandbox.WithHost(ctx, &clientHost{s: s, owner: owner, session: id, sse: sse})
	}
	start := time.Now()
	res, failed, err := tool.Run(ctx, profiles.EvalFunc(func(ctx context.Context, req sandbox.Request) (*sandbox.Result, error) {
		return s.cfg.Manager.Eval(ctx, owner, id, req)
	}), body)
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
	if sse != nil {
		sse.send("done", res)
		return
	}
	answer(w, http.StatusOK, res)
}
