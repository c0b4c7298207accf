package server

import (
	"context"
	"net/http"
	"time"
)

// readyTimeout bounds /readyz's check of the store.
const readyTimeout = 2 * time.Second

// readyz answers whether this node should get traffic: 503 while it
// drains or while its store cannot be reached (a load balancer's health
// check), 200 otherwise. /healthz only says the process is alive.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	node := ""
	if s.cfg.Node != nil {
		node = s.cfg.Node.ID()
	}
	if s.draining.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining", "node": node,
			"error": "this node is shutting down: it takes no new requests"})
		return
	}
	if s.cfg.Node != nil {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := s.cfg.Node.Ping(ctx); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "node": node,
				"error": "the session store cannot be reached: " + err.Error()})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready", "node": node})
}

// Drain marks the server as draining: /readyz answers 503 from now on, so
// that a load balancer stops sending it requests, while the requests it
// has go on. Serve's shutdown does the rest.
func (s *Server) Drain() { s.draining.Store(true) }
