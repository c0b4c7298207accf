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
// at once and the connection is closed (rec says "Connection: close" on an
// answer that starts before the body is in: a past read deadline left on a
// connection that net/http goes on using fails its background read, which
// cancels the connection's context and every later request's on it).
func (s *Server) guardBody(w http.ResponseWriter, rec *statusRecorder, r *http.Request) (done func()) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return func() {}
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout)) != nil {
		return func() {} // a connection without deadlines (not HTTP/1)
	}
	b := &deadlineBody{ReadCloser: r.Body, rc: rc, want: r.ContentLength}
	r.Body = b
	rec.body = b
	return func() {
		if !b.complete() {
			rc.SetReadDeadline(time.Now())
		}
	}
}

// deadlineBody lifts the connection's read deadline when the body has
// been read to its end: to EOF, or to its declared length (a handler that
// reads exactly that many bytes need not see the EOF).
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	want int64 // the declared length, -1 when unknown (chunked)
	read int64
	eof  bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	if (err == io.EOF || b.want >= 0 && b.read >= b.want) && !b.eof {
		b.eof = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// complete reports whether the body has been read to its end.
func (b *deadlineBody) complete() bool { return b == nil || b.eof }
