package server

import (
	"context"
	"fmt"
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
		Tools:   s.cfg.Tools,
		// The python profile's default kernel mode.
		KernelMode: s.cfg.KernelMode,
		Host:       s.serverHost(),
		Admit: func() (func(), bool) {
			select {
			case s.inflight <- struct{}{}:
				return s.done, true
			default:
				s.evals.WithLabelValues("rejected").Inc()
				return nil, false
			}
		},
		// As the JSON API's evals: one queued on a busy session waits for
		// its turn before it takes an in-flight slot (turns.go), unless a
		// cell of the session waits in agent() or tool(): a sub-agent's
		// eval then runs inside it at once.
		Turn: func(ctx context.Context, id string) (func(), error) {
			end, _, err := s.turns.takeOrNest(ctx, id, func() (bool, <-chan struct{}) { return s.cfg.Manager.NestedReady(id) })
			if err == errTooManyWaiting {
				s.evals.WithLabelValues("rejected").Inc()
				return nil, fmt.Errorf("%d evals already wait for this session, which runs one at a time; retry when one has ended", maxWaiting)
			}
			return end, err
		},
		Create: func(ctx context.Context, owner string) (string, error) {
			return s.withQuota(owner, func() (string, error) { return s.cfg.Manager.Create(ctx, owner) })
		},
		// create_code_context's python (the backend, where sessions may
		// choose): within the quota too.
		CreateWith: s.createWith,
		// A code context another node runs is used there (contextforward.go).
		Elsewhere: s.mcpElsewhere,
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
