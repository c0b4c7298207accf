package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/wasmeval/wasmeval/sandbox"
)

// settleSession has a session do its work between cells (for Python, the
// trim and the checkpoint the cell left: sandbox.Session.Settle); a
// variable for tests.
var settleSession = (*sandbox.Session).Settle

// settleLater has sess do its work between cells once its answer is out,
// on a goroutine of its own (issue 15): otherwise the session's next eval
// does it first, on its client's path. Not on the handler's goroutine:
// the connection's next request, which may be another session's, waits
// for the handler to return. It holds nothing but the session's own turn
// to run (an eval of the session that comes meanwhile waits for it), and
// does nothing for a session deleted or closed meanwhile, or one whose
// eval has started again.
func settleLater(sess *sandbox.Session) {
	go settleSession(sess)
}

// answerNow is answer for an answer that is followed by work of the
// server's (settleLater): the answer goes out whole, Content-Length and
// all, before the handler returns, so the client has all of it while that
// work starts.
func answerNow(w http.ResponseWriter, status int, v any) {
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		writeError(w, http.StatusInternalServerError, "host_error", "encoding the answer: "+err.Error())
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	w.Write(b.Bytes())
	rc.Flush()
}
