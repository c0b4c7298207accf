package server

import (
	"context"
	"net/http"
	"time"

	"github.com/wasmeval/wasmeval/server/mcpserver"
)

// mcpSessionTimeout closes MCP sessions idle for this long.
const mcpSessionTimeout = 30 * time.Minute

// mountMCP serves MCP's streamable HTTP transport at /mcp, behind the same
// bearer tokens, in-flight limit, quota and body cap as the JSON API.
func (s *Server) mountMCP() error {
	m, err := mcpserver.New(mcpserver.Config{
		Sandbox: s.cfg.Sandbox,
		Manager: s.cfg.Manager,
		Logger:  s.log,
		TempDir: s.cfg.TempDir,
		Host:    s.serverHost(),
		Admit: func() (func(), bool) {
			select {
			case s.inflight <- struct{}{}:
				return s.done, true
			default:
				s.evals.WithLabelValues("rejected").Inc()
				return nil, false
			}
		},
		Create: func(ctx context.Context, owner string) (string, error) {
			return s.withQuota(owner, func() (string, error) { return s.cfg.Manager.Create(ctx, owner) })
		},
	})
	if err != nil {
		return err
	}
	h := m.HTTPHandler(mcpSessionTimeout, s.cfg.MaxBodyBytes)
	s.mux.Handle("/mcp", s.auth(func(w http.ResponseWriter, r *http.Request, owner string) {
		h.ServeHTTP(w, r.WithContext(mcpserver.WithOwner(r.Context(), owner)))
	}))
	return nil
}
