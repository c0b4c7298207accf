package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
	s.mux.Handle("POST /v1/sessions/{id}/profiles/evaluate_python", s.auth(s.evaluatePython))
}

// evaluatePython runs an evaluate_python call in session id: a fresh
// namespace of its Python, its files.
func (s *Server) evaluatePython(w http.ResponseWriter, r *http.Request, owner string) {
	if !s.cfg.Tools.Has(profiles.EvaluatePython) {
		if !s.drainBody(w, r) {
			return
		}
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("the evaluate_python profile is off on this server; it serves --tools %s", s.cfg.Tools))
		return
	}
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	p, err := profiles.DecodeEvaluatePython(body)
	if err != nil {
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
	s.log.Info("evaluate_python", "owner", owner, "session", id, "code", cut(p.Code, maxLoggedCode))
	ctx := sandbox.WithHost(r.Context(), s.serverHost())
	start := time.Now()
	res, err := profiles.RunEvaluatePython(ctx, profiles.EvalFunc(func(ctx context.Context, req sandbox.Request) (*sandbox.Result, error) {
		return s.cfg.Manager.Eval(ctx, owner, id, req)
	}), p, profiles.EvalOptions{})
	release()
	endTurn()
	var pe *profiles.Error
	switch {
	case errors.As(err, &pe):
		s.evals.WithLabelValues("invalid").Inc()
		writeError(w, http.StatusBadRequest, "invalid_request", pe.Detail())
		return
	case err != nil:
		s.evals.WithLabelValues("failed").Inc()
		s.sessionError(w, r, err)
		return
	}
	status := "complete"
	if res.Stderr != "" && res.ValueRepr == nil {
		status = "error"
	}
	s.evals.WithLabelValues(status).Inc()
	s.duration.Observe(time.Since(start).Seconds())
	answer(w, http.StatusOK, res)
}
