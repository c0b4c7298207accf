package server

import (
	"io"
	"net/http"
	"time"
)

// guardBody bounds how long any request's body may take to arrive
// (Config.BodyTimeout), for every endpoint: also those that answer
// without reading it (401, 404, 405, an unknown session) and /mcp, whose
// body the MCP SDK reads. Without it, a client that declares a body and
// sends it a byte at a time holds its connection for ever: net/http reads
// (discards) an unread body of up to 256 KiB before it writes the answer,
// with no deadline (the server has no ReadTimeout, which would also end
// long evals). The deadline is lifted once the body is in, so a long eval
// or MCP tool call after it is not cut. done, called when the handler
// returns, gives up on a body the handler left unread: the answer goes out
// at once and the connection is closed.
func (s *Server) guardBody(w http.ResponseWriter, r *http.Request) (done func()) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return func() {}
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout)) != nil {
		return func() {} // a connection without deadlines (not HTTP/1)
	}
	b := &deadlineBody{ReadCloser: r.Body, rc: rc}
	r.Body = b
	return func() {
		if !b.eof {
			rc.SetReadDeadline(time.Now())
		}
	}
}

// deadlineBody lifts the connection's read deadline when the body has
// been read to its end.
type deadlineBody struct {
	io.ReadCloser
	rc  *http.ResponseController
	eof bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.eof {
		b.eof = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
