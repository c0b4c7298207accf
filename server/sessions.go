package server

import (
	"errors"
	"io/fs"
	"net/http"
	"strings"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/sandbox"
)

// The session endpoints Jupyter Server and E2B users reach for: listing,
// info, interrupt, and the files of a session's root.

// routeSessions adds the endpoints of this file to the mux.
func (s *Server) routeSessions() {
	s.mux.Handle("GET /v1/sessions", s.auth(s.listSessions))
	s.mux.Handle("GET /v1/sessions/{id}", s.auth(s.sessionInfo))
	s.mux.Handle("POST /v1/sessions/{id}/interrupt", s.auth(s.interrupt))
	s.mux.Handle("GET /v1/sessions/{id}/files", s.auth(s.getFile))
	s.mux.Handle("GET /v1/sessions/{id}/files/{path...}", s.auth(s.getFile))
	s.mux.Handle("PUT /v1/sessions/{id}/files/{path...}", s.auth(s.putFile))
	s.mux.Handle("DELETE /v1/sessions/{id}/files/{path...}", s.auth(s.deleteFile))
}

// SessionList is the answer of GET /v1/sessions.
type SessionList struct {
	Sessions []sandbox.SessionInfo `json:"sessions"`
}

// listSessions lists the caller's sessions: with a store, every one it
// holds for the caller, on any node, loaded or not (Manager.ListStored).
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request, owner string) {
	infos, err := s.cfg.Manager.ListStored(r.Context(), owner)
	if err != nil {
		s.sessionError(w, r, err)
		return
	}
	answer(w, http.StatusOK, SessionList{Sessions: infos})
}

func (s *Server) sessionInfo(w http.ResponseWriter, r *http.Request, owner string) {
	info, err := s.cfg.Manager.Info(r.Context(), owner, r.PathValue("id"))
	if err != nil {
		s.sessionError(w, r, err)
		return
	}
	answer(w, http.StatusOK, info)
}

// Interrupted is the answer of POST /v1/sessions/{id}/interrupt.
type Interrupted struct {
	// Interrupted reports whether a cell was running and was stopped.
	Interrupted bool `json:"interrupted"`
}

func (s *Server) interrupt(w http.ResponseWriter, r *http.Request, owner string) {
	err := s.cfg.Manager.Interrupt(owner, r.PathValue("id"))
	switch {
	case err == nil:
		answer(w, http.StatusOK, Interrupted{true})
	case errors.Is(err, sandbox.ErrNotRunning):
		answer(w, http.StatusOK, Interrupted{false})
	default:
		s.sessionError(w, r, err)
	}
}

// Listing is the answer of GET /v1/sessions/{id}/files/{path} for a
// folder.
type Listing struct {
	Path    string            `json:"path"`
	Entries []hostcalls.Entry `json:"entries"`
	// Truncated is set when the folder holds more than the listing shows
	// (hostcalls.MaxListEntries).
	Truncated bool `json:"truncated,omitempty"`
}

// filePath is the path of a files request, "." for the root.
func filePath(r *http.Request) string {
	p := strings.TrimSuffix(r.PathValue("path"), "/")
	if p == "" {
		return "."
	}
	return p
}

func (s *Server) getFile(w http.ResponseWriter, r *http.Request, owner string) {
	sess, err := s.cfg.Manager.Session(owner, r.PathValue("id"))
	if err != nil {
		s.sessionError(w, r, err)
		return
	}
	files, p := sess.Files(), filePath(r)
	fi, err := files.Stat(p)
	if err != nil {
		s.fileError(w, err)
		return
	}
	if fi.IsDir() {
		entries, more, err := files.List(p)
		if err != nil {
			s.fileError(w, err)
			return
		}
		if entries == nil {
			entries = []hostcalls.Entry{}
		}
		answer(w, http.StatusOK, Listing{Path: p, Entries: entries, Truncated: more})
		return
	}
	f, fi, err := files.Open(p)
	if err != nil {
		s.fileError(w, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// ServeContent streams the file (with Range and If-Modified-Since):
	// a large file costs no memory.
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

// Written is the answer of PUT /v1/sessions/{id}/files/{path}.
type Written struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

func (s *Server) putFile(w http.ResponseWriter, r *http.Request, owner string) {
	sess, err := s.cfg.Manager.Session(owner, r.PathValue("id"))
	if err != nil {
		s.sessionError(w, r, err)
		return
	}
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	files, p := sess.Files(), filePath(r)
	_, statErr := files.Stat(p)
	if _, err := files.Write(p, string(body)); err != nil {
		s.fileError(w, err)
		return
	}
	status := http.StatusOK
	if errors.Is(statErr, fs.ErrNotExist) {
		status = http.StatusCreated
	}
	answer(w, status, Written{Path: p, Size: int64(len(body))})
}

func (s *Server) deleteFile(w http.ResponseWriter, r *http.Request, owner string) {
	sess, err := s.cfg.Manager.Session(owner, r.PathValue("id"))
	if err != nil {
		s.sessionError(w, r, err)
		return
	}
	if err := sess.Files().Remove(filePath(r)); err != nil {
		s.fileError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// fileError answers a refused file operation: 404 for what is not there,
// 413 past the disk quota, 409 for a folder that is not empty, 400 for the
// rest (a path that leads out, a folder where a file was meant).
func (s *Server) fileError(w http.ResponseWriter, err error) {
	msg := err.Error()
	var fe *hostcalls.FSError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		writeError(w, http.StatusNotFound, "not_found", msg)
	case errors.Is(err, hostcalls.ErrDiskQuota):
		writeError(w, http.StatusRequestEntityTooLarge, "disk_quota_exceeded", msg)
	case errors.As(err, &fe) && strings.Contains(fe.Reason, "not empty"):
		writeError(w, http.StatusConflict, "not_empty", msg)
	case errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, "invalid_path", msg)
	default:
		s.log.Error("host failure", "err", err)
		writeError(w, http.StatusInternalServerError, "host_error", msg)
	}
}
