package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/wasmeval/wasmeval/sandbox"
)

// maxRunOutputBytes bounds the text a /v1/run answer carries in outputs.
const maxRunOutputBytes = 1 << 20

// RunResult is the answer of POST /v1/run, in the CodeInterpreter shape.
type RunResult struct {
	// Outputs are the cell's outputs in order; adjacent text of one stream
	// is joined.
	Outputs []RunOutput `json:"outputs"`
	// ExitCode is 0 when the code ran to the end, 1 otherwise.
	ExitCode int `json:"exitCode"`
	// Error describes why the code failed; nil when it did not.
	Error *RunError `json:"error"`
	// DurationMs is the wall-clock run time.
	DurationMs int64 `json:"durationMs"`
	// Truncated is set when outputs were left out past 1 MiB of text.
	Truncated bool `json:"truncated,omitempty"`
}

// RunOutput is one output: stdout or stderr text, or a display or result
// MIME bundle.
type RunOutput struct {
	Type string            `json:"type"`
	Text string            `json:"text,omitempty"`
	Data map[string]string `json:"data,omitempty"`
}

// RunError is a failed run's error: Name like "NameError", Value its
// message, Traceback the error output.
type RunError struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	Traceback string `json:"traceback"`
}

// runCollector gathers a cell's events as CodeInterpreter outputs.
type runCollector struct {
	mu        sync.Mutex
	outputs   []RunOutput
	stderr    strings.Builder
	size      int
	truncated bool
}

func (c *runCollector) add(ev sandbox.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev.Kind == sandbox.EventStatus {
		return
	}
	if ev.Kind == sandbox.EventStderr && c.stderr.Len() < maxRunOutputBytes {
		c.stderr.WriteString(ev.Text)
	}
	n := len(ev.Text)
	for _, v := range ev.Bundle {
		n += len(v)
	}
	if c.size+n > maxRunOutputBytes {
		c.truncated = true
		return
	}
	c.size += n
	if k := len(c.outputs) - 1; k >= 0 && ev.Bundle == nil && c.outputs[k].Type == string(ev.Kind) {
		c.outputs[k].Text += ev.Text
		return
	}
	c.outputs = append(c.outputs, RunOutput{Type: string(ev.Kind), Text: ev.Text, Data: ev.Bundle})
}

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
	defer s.done()
	s.logCells(r.Context(), "run", owner, "", req)
	dir, err := s.tempSessionDir()
	if err != nil {
		s.sessionError(w, r, err)
		return
	}
	defer os.RemoveAll(dir)
	sess, err := s.cfg.Sandbox.NewSession(r.Context(), sandbox.SessionOptions{Root: dir})
	if err != nil {
		s.sessionError(w, r, err)
		return
	}
	defer sess.Close(context.WithoutCancel(r.Context()))

	col := &runCollector{}
	var sse *sseWriter
	if wantsSSE(r) {
		sse = newSSE(w)
	}
	ctx := sandbox.WithEventFunc(r.Context(), func(ev sandbox.Event) {
		col.add(ev)
		if sse != nil && ev.Kind != sandbox.EventStatus {
			sse.send(string(ev.Kind), ev)
		}
	})
	start := time.Now()
	res, err := sess.Eval(ctx, req)
	s.observe(res, err, start)
	if err != nil {
		if sse != nil {
			sse.send("error", errorBody(errorCode(err), err.Error()))
			return
		}
		s.sessionError(w, r, err)
		return
	}
	out := col.result(res)
	if sse != nil {
		sse.send("result", out)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (c *runCollector) result(res *sandbox.Result) *RunResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	cell := res.Details.Cells[0]
	out := &RunResult{Outputs: c.outputs, DurationMs: cell.DurationMs, Truncated: c.truncated}
	if out.Outputs == nil {
		out.Outputs = []RunOutput{}
	}
	if cell.Status == sandbox.StatusComplete {
		return out
	}
	out.ExitCode = 1
	out.Error = runError(cell, c.stderr.String())
	return out
}

// runError names a failure from its error text's last line, like
// "NameError: name 'x' is not defined".
func runError(cell sandbox.CellResult, stderr string) *RunError {
	e := &RunError{Name: "Error", Traceback: stderr}
	switch cell.Status {
	case sandbox.StatusCancelled:
		e.Name, e.Value = "Cancelled", "the run was cancelled"
		return e
	}
	if strings.Contains(cell.Output, "timed out after") {
		e.Name, e.Value = "TimeoutError", "timed out after "+strings.TrimSpace(strings.SplitN(cell.Output[strings.LastIndex(cell.Output, "timed out after")+len("timed out after"):], "\n", 2)[0])
		return e
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	// Python's traceback ends with "Name: message"; JavaScript's error
	// starts with it and a stack follows. The last such line wins.
	for i := len(lines) - 1; i >= 0; i-- {
		if m := errLine.FindStringSubmatch(strings.TrimSpace(lines[i])); m != nil {
			e.Name, e.Value = m[1], m[2]
			return e
		}
	}
	e.Value = strings.TrimSpace(lines[len(lines)-1])
	return e
}

var errLine = regexp.MustCompile(`^(?:Uncaught )?([A-Za-z_][\w.]*): (.*)$`)

// decodeRun reads a /v1/run body, one cell: {"language","code","timeout"?}.
func decodeRun(body []byte) (sandbox.Request, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return sandbox.Request{}, &sandbox.RequestError{Message: `send one JSON object like {"language":"py","code":"print(1)"}`}
	}
	wrapped, _ := json.Marshal(map[string]json.RawMessage{"cells": json.RawMessage("[" + string(trimmed) + "]")})
	req, err := sandbox.DecodeRequest(wrapped)
	if re, ok := err.(*sandbox.RequestError); ok {
		re.Path = strings.TrimPrefix(strings.TrimPrefix(re.Path, "cells[0]"), ".")
		return req, re
	}
	return req, err
}
