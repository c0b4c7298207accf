package mcpserver

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/sandbox"
)

// The work between cells after an answer (issue 15). A session that ran a
// call's cells does the work its last cell left (for Python, the trim and
// the checkpoint: sandbox.Session.Settle) once the call's answer is
// written, on a goroutine of its own, rather than first thing in its next
// eval, on the client's path. Only on connections whose writes the server
// sees: HTTP (HTTPHandler) and a LineTransport served by Server.Run; on
// others the next eval does it, as before.
//
// The answer of a call is known by the connection it goes out on, not by
// the call: a connection that wrote an answer settles every session noted
// on it. With two calls in flight on one connection, the session of the
// second may then start to settle just before that call's answer is out;
// it holds nothing the answer needs.

// settleSession has a session do its work between cells; a variable for
// tests.
var settleSession = (*sandbox.Session).Settle

// settleAfterAnswer notes that sess, whose cells a call of ss ran, is to
// settle once an answer is written on ss's connection.
func (s *Server) settleAfterAnswer(ss *mcp.ServerSession, sess *sandbox.Session) {
	if sess == nil || ss == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.conns[ss]
	if !ok || !c.seen {
		return
	}
	for _, p := range c.settle {
		if p == sess {
			return
		}
	}
	c.settle = append(c.settle, sess)
}

// answered is told that c's connection wrote an answer: the sessions
// noted settle.
func (s *Server) answered(c *conn) {
	s.mu.Lock()
	todo := c.settle
	c.settle = nil
	s.mu.Unlock()
	for _, sess := range todo {
		go settleSession(sess)
	}
}

// answeredHTTP wraps the streamable HTTP handler: a POST's handler returns
// once the answers of its messages are written (and flushed).
func (s *Server) answeredHTTP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		id := r.Header.Get("Mcp-Session-Id")
		if r.Method != http.MethodPost || id == "" {
			return
		}
		s.mu.Lock()
		c := s.byID[id]
		s.mu.Unlock()
		if c != nil {
			s.answered(c)
		}
	})
}

// Run serves one client over t until the client or ctx ends the session,
// as MCP().Run does. Over a *LineTransport (`wasmeval mcp`'s stdio), the
// sessions of the client's calls also do their work between cells once
// each answer is written.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	var seen atomic.Pointer[conn]
	lt, _ := t.(*LineTransport)
	if lt != nil {
		lt.answered = func() {
			if c := seen.Load(); c != nil {
				s.answered(c)
			}
		}
	}
	ss, err := s.srv.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	if lt != nil {
		c := s.conn(ss)
		s.mu.Lock()
		c.seen = true
		s.mu.Unlock()
		seen.Store(c)
	}
	closed := make(chan error, 1)
	go func() { closed <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-closed
		return ctx.Err()
	case err := <-closed:
		return err
	}
}
