package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/wasmeval/wasmeval/sandbox"
)

// RunResult is the answer of POST /v1/run, in the CodeInterpreter shape:
// the library's sandbox.Execution.
type RunResult = sandbox.Execution

// RunOutput is one output of a RunResult.
type RunOutput = sandbox.OutputChunk

// RunError is a failed run's error.
type RunError = sandbox.ExecutionError

func (s *Server) run(w http.ResponseWriter, r *http.Request, owner string) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	req, err := decodeRun(body)
	if err != nil {
		s.badRequest(w, err)
		return
	}
	if !s.admit(w) {
		return
	}
	release := sync.OnceFunc(s.done)
	defer release()
	s.logCells(r.Context(), "run", owner, "", req)
	cell := req.Cells[0]
	rc := sandbox.RunCodeRequest{
		Language: cell.Language, Code: cell.Code, Fuel: cell.Fuel,
		Timeout: time.Duration(cell.TimeoutSeconds) * time.Second, TempDir: s.cfg.TempDir,
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	var sse *sseWriter
	if wantsSSE(r) {
		sse = newSSE(w, func() { cancel(errStreamEnded) })
		defer s.closeSSE(sse, owner, "")
		// All events, as for eval: cell_start, outputs, status, cell_end.
		ctx = sandbox.WithEventFunc(ctx, sse.event)
	}
	start := time.Now()
	// One-shot runs have no session to answer host calls through; they get
	// the server's backends, or the message saying there are none.
	ctx = sandbox.WithHost(ctx, s.serverHost())
	out, err := s.cfg.Manager.RunCode(ctx, rc) // under the memory budget, as session evals
	release()
	s.observeRun(out, err, start)
	if err != nil {
		if sse != nil {
			sse.send("error", errorBody(errorCode(err), err.Error()))
			return
		}
		s.sessionError(w, r, err)
		return
	}
	if sse != nil {
		sse.send("done", out)
		return
	}
	answer(w, http.StatusOK, out)
}

func (s *Server) observeRun(out *sandbox.Execution, err error, start time.Time) {
	status := "failed"
	switch {
	case err != nil:
	case out.Error == nil:
		status = "complete"
	case out.Error.Name == "Cancelled":
		status = "cancelled"
	default:
		status = "error"
	}
	s.evals.WithLabelValues(status).Inc()
	if err == nil {
		s.duration.Observe(time.Since(start).Seconds())
	}
}

// decodeRun reads a /v1/run body, one cell: {"language","code","timeout"?}.
func decodeRun(body []byte) (sandbox.Request, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return sandbox.Request{}, &sandbox.RequestError{Message: `send one JSON object like {"language":"py","code":"print(1)"}`}
	}
	// The body goes into an eval request below as it is, so it must be
	// JSON first: wrapped invalid, it would be judged as the eval request.
	var v json.RawMessage
	if err := json.Unmarshal(trimmed, &v); err != nil {
		return sandbox.Request{}, &sandbox.RequestError{Message: fmt.Sprintf(`not valid JSON: %v; send one JSON object like {"language":"py","code":"print(1)"}`, err)}
	}
	wrapped := append(append([]byte(`{"cells":[`), trimmed...), "]}"...)
	req, err := sandbox.DecodeRequest(wrapped)
	if re, ok := err.(*sandbox.RequestError); ok {
		re.Path = strings.TrimPrefix(strings.TrimPrefix(re.Path, "cells[0]"), ".")
		return req, re
	}
	return req, err
}
