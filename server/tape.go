package server

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/wasmeval/wasmeval/sandbox"
)

// tape answers GET /v1/sessions/{id}/tape: the session's recording so
// far (serve --record-dir), every finished request, as a tape that
// `wasmeval replay` replays.
func (s *Server) tape(w http.ResponseWriter, r *http.Request, owner string) {
	rc, n, err := s.cfg.Manager.OpenTape(owner, r.PathValue("id"))
	if errors.Is(err, sandbox.ErrNotRecorded) {
		writeError(w, http.StatusNotFound, "not_recorded", "this server does not record sessions; start wasmeval serve with --record-dir DIR")
		return
	}
	if err != nil {
		s.sessionError(w, r, err)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/zstd")
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	w.Header().Set("Content-Disposition", `attachment; filename="`+r.PathValue("id")+`.wtape"`)
	w.WriteHeader(http.StatusOK)
	io.Copy(w, rc) // streamed: a tape may be long
}
