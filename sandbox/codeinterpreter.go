package sandbox

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// MaxExecutionOutputBytes bounds the text an Execution's Outputs carry;
// past it outputs are left out and Execution.Truncated is set. OnOutput
// still sees every chunk.
const MaxExecutionOutputBytes = 1 << 20

// OutputType names what an OutputChunk carries, in the CodeInterpreter
// vocabulary.
type OutputType string

// The types of OutputChunk.
const (
	OutputStdout  OutputType = "stdout"
	OutputStderr  OutputType = "stderr"
	OutputDisplay OutputType = "display"
	OutputResult  OutputType = "result"
)

// OutputChunk is one piece of a run's output: stdout or stderr text, or a
// display() or last-expression MIME bundle.
type OutputChunk struct {
	Type OutputType `json:"type"`
	// Text is the text of stdout and stderr chunks.
	Text string `json:"text,omitempty"`
	// Data is the MIME bundle of display and result chunks, like
	// {"text/plain": "3"}.
	Data map[string]string `json:"data,omitempty"`
}

// RunCodeRequest is one piece of code to run, for RunCode and
// RunInContext.
type RunCodeRequest struct {
	// Language is "py", "js" or "ts", as Cell.Language.
	Language string
	// Code is the source; it must not be empty.
	Code string
	// Timeout bounds the run, rounded up to whole seconds, at most
	// MaxTimeoutSeconds; zero means DefaultTimeoutSeconds. Like a cell's
	// timeout, it restarts on each status event (log, phase).
	Timeout time.Duration
	// Fuel, when positive, is a deterministic budget, as Cell.Fuel
	// (Python only).
	Fuel int64
	// OnOutput, when set, receives each chunk of output as it is produced,
	// from the goroutine that runs the code; it must not block for long.
	OnOutput func(OutputChunk)
	// TempDir is where RunCode makes its temporary session's folder; empty
	// means os.TempDir(). RunInContext ignores it.
	TempDir string
}

// Execution is the outcome of RunCode or RunInContext, in the
// CodeInterpreter shape.
type Execution struct {
	// Outputs are the outputs in order; adjacent text of one stream is
	// joined.
	Outputs []OutputChunk `json:"outputs"`
	// ExitCode is 0 when the code ran to the end, 1 otherwise.
	ExitCode int `json:"exitCode"`
	// Error says why the code failed; nil when it did not.
	Error *ExecutionError `json:"error"`
	// DurationMs is the wall-clock run time.
	DurationMs int64 `json:"durationMs"`
	// Truncated is set when outputs were left out past
	// MaxExecutionOutputBytes of text.
	Truncated bool `json:"truncated,omitempty"`
}

// ExecutionError is a failed run's error: Name like "NameError" (or
// "TimeoutError", "Cancelled"), Value its message, Traceback the error
// output.
type ExecutionError struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	Traceback string `json:"traceback"`
}

// ContextID names a context of a Manager. It is a session id: the
// context is a session, and Manager's session methods accept it.
type ContextID string

// Request returns the one-cell Request that r asks for.
func (r RunCodeRequest) Request() (Request, error) {
	if r.Timeout < 0 {
		return Request{}, &RequestError{Path: "timeout", Message: fmt.Sprintf("%s is negative; give 1s to %ds, or zero for the default", r.Timeout, MaxTimeoutSeconds)}
	}
	secs := int(math.Ceil(r.Timeout.Seconds()))
	req := Request{Cells: []Cell{{Language: r.Language, Code: r.Code, TimeoutSeconds: secs, Fuel: r.Fuel}}}
	if err := req.Validate(); err != nil {
		if re, ok := err.(*RequestError); ok {
			re.Path = strings.TrimPrefix(strings.TrimPrefix(re.Path, "cells[0]"), ".")
		}
		return Request{}, err
	}
	return req, nil
}

// RunCode runs req statelessly, in a temporary session whose folder is
// removed afterwards. Guest failures are data in the Execution (ExitCode
// 1 and Error); an error means an invalid request (a *RequestError) or
// that the host could not run the code.
func (sb *Sandbox) RunCode(ctx context.Context, req RunCodeRequest) (*Execution, error) {
	r, err := req.Request()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(req.TempDir, "wasmeval-run-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: run code: %w", err)
	}
	defer os.RemoveAll(dir)
	sess, err := sb.NewSession(ctx, SessionOptions{Root: dir})
	if err != nil {
		return nil, err
	}
	defer sess.Close(context.WithoutCancel(ctx))
	return execute(ctx, r, req.OnOutput, func(ctx context.Context) (*Result, error) { return sess.Eval(ctx, r) })
}

// CreateContext makes a context owned by owner: a session whose state
// persists across RunInContext calls until DeleteContext (or eviction, as
// for any session of the Manager).
func (m *Manager) CreateContext(ctx context.Context, owner string) (ContextID, error) {
	id, err := m.Create(ctx, owner)
	return ContextID(id), err
}

// RunInContext runs req in the context id of owner; variables and files
// persist from earlier runs. req.TempDir is ignored. ErrNoSession when
// owner holds no context id.
func (m *Manager) RunInContext(ctx context.Context, owner string, id ContextID, req RunCodeRequest) (*Execution, error) {
	r, err := req.Request()
	if err != nil {
		return nil, err
	}
	return execute(ctx, r, req.OnOutput, func(ctx context.Context) (*Result, error) { return m.Eval(ctx, owner, string(id), r) })
}

// DeleteContext removes the context id of owner and its folder.
func (m *Manager) DeleteContext(ctx context.Context, owner string, id ContextID) error {
	return m.Delete(ctx, owner, string(id))
}

// execute runs a one-cell request through eval, collecting its events as
// an Execution. An EventFunc already in ctx still sees every event.
func execute(ctx context.Context, r Request, onOutput func(OutputChunk), eval func(context.Context) (*Result, error)) (*Execution, error) {
	col := &collector{}
	outer, _ := ctx.Value(eventKey{}).(EventFunc)
	ctx = WithEventFunc(ctx, func(ev Event) {
		if outer != nil {
			outer(ev)
		}
		switch ev.Kind {
		case EventStatus, EventCellStart, EventCellEnd: // not outputs
			return
		}
		chunk := OutputChunk{Type: OutputType(ev.Kind), Text: ev.Text, Data: ev.Bundle}
		col.add(chunk)
		if onOutput != nil {
			onOutput(chunk)
		}
	})
	res, err := eval(ctx)
	if err != nil {
		return nil, err
	}
	return col.execution(res), nil
}

// collector gathers a run's chunks as an Execution's outputs.
type collector struct {
	mu        sync.Mutex
	outputs   []OutputChunk
	stderr    strings.Builder
	size      int
	truncated bool
}

func (c *collector) add(ch OutputChunk) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch.Type == OutputStderr && c.stderr.Len() < MaxExecutionOutputBytes {
		c.stderr.WriteString(ch.Text)
	}
	n := len(ch.Text)
	for _, v := range ch.Data {
		n += len(v)
	}
	if c.size+n > MaxExecutionOutputBytes {
		c.truncated = true
		return
	}
	c.size += n
	if k := len(c.outputs) - 1; k >= 0 && ch.Data == nil && c.outputs[k].Data == nil && c.outputs[k].Type == ch.Type {
		c.outputs[k].Text += ch.Text
		return
	}
	c.outputs = append(c.outputs, ch)
}

func (c *collector) execution(res *Result) *Execution {
	c.mu.Lock()
	defer c.mu.Unlock()
	cell := res.Details.Cells[0]
	out := &Execution{Outputs: c.outputs, DurationMs: cell.DurationMs, Truncated: c.truncated}
	if out.Outputs == nil {
		out.Outputs = []OutputChunk{}
	}
	if cell.Status == StatusComplete {
		return out
	}
	out.ExitCode = 1
	out.Error = executionError(cell, c.stderr.String())
	return out
}

// executionError names a failure from its error text's last line, like
// "NameError: name 'x' is not defined".
func executionError(cell CellResult, stderr string) *ExecutionError {
	e := &ExecutionError{Name: "Error", Traceback: stderr}
	if cell.Status == StatusCancelled {
		e.Name, e.Value = "Cancelled", "the run was cancelled"
		return e
	}
	const timedOut = "timed out after"
	if i := strings.LastIndex(cell.Output, timedOut); i >= 0 {
		e.Name, e.Value = "TimeoutError", timedOut+" "+strings.TrimSpace(strings.SplitN(cell.Output[i+len(timedOut):], "\n", 2)[0])
		return e
	}
	text := stderr
	if strings.TrimSpace(text) == "" {
		// A failure the sandbox noted itself, with no error output of the
		// guest's: a disabled language, say.
		text = cell.Output
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
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

// FreshIn starts a session with s's options (limits, environment, package
// layer, languages) but fresh interpreters, rooted at root: s's own root
// shares its files, another folder gives it files of its own. Nothing of
// s's interpreter state is carried over, and the new session records no
// tape. The python profile's per-call kernel mode and the code contexts
// use it: an interpreter made for a call and dropped after.
func (s *Session) FreshIn(ctx context.Context, root string) (*Session, error) {
	return s.FreshInBackend(ctx, root, "")
}

// FreshInBackend is FreshIn with the Python backend backend (PythonWasm
// or PythonJupyter; "" keeps s's), as a code context that names its
// backend asks. A backend the sandbox does not let sessions choose
// (Options.PythonBackendChoice) is refused with an error that wraps
// ErrBadPythonBackend and says why.
func (s *Session) FreshInBackend(ctx context.Context, root, backend string) (*Session, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("sandbox: session root %q: %w", root, err)
	}
	o := s.opts
	o.Root = abs
	o.Record, o.Replay, o.ownRecord = nil, nil, false
	if backend != "" && backend != o.PythonBackend {
		o.PythonBackend = backend
		if err := s.sb.checkSessionPython(&o); err != nil {
			return nil, fmt.Errorf("%w: %s", ErrBadPythonBackend, strings.TrimPrefix(err.Error(), "sandbox: "))
		}
	}
	// The resolved environment names s's root; elsewhere, name the new one.
	o.Env = maps.Clone(o.Env)
	for _, k := range []string{"HOME", "PWD"} {
		if v, ok := o.Env[k]; ok && v == s.opts.Root {
			o.Env[k] = abs
		}
	}
	return s.sb.NewSession(ctx, o)
}
