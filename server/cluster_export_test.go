package server

import (
	"net/http"

	"github.com/wasmeval/wasmeval/sandbox"
)

// AnswerNoSession answers r as a handler does when the manager does not
// hold its session (sessionError with sandbox.ErrNoSession), for
// TestMovedSession.
func (s *Server) AnswerNoSession(w http.ResponseWriter, r *http.Request) {
	s.sessionError(w, r, sandbox.ErrNoSession)
}
