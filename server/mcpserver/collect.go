package mcpserver

import (
	"regexp"
	"strings"
	"sync"

	"github.com/wasmeval/wasmeval/sandbox"
)

// maxRunOutputBytes bounds the text of a run's outputs.
const maxRunOutputBytes = 1 << 20

// RunResult is the structured result of run_code and run_in_code_context,
// in the CodeInterpreter shape of the JSON API's POST /v1/run.
type RunResult struct {
	// Outputs are the outputs in order; adjacent text of one stream is
	// joined.
	Outputs []RunOutput `json:"outputs"`
	// ExitCode is 0 when the code ran to the end, 1 otherwise.
	ExitCode int `json:"exitCode"`
	// Error says why the code failed; nil when it did not.
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

// collector gathers a cell's events as CodeInterpreter outputs.
type collector struct {
	mu        sync.Mutex
	outputs   []RunOutput
	stderr    strings.Builder
	size      int
	truncated bool
}

func (c *collector) add(ev sandbox.Event) {
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

func (c *collector) result(res *sandbox.Result) *RunResult {
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

// runError names a failure from the last "Name: message" line of its
// error text (Python's traceback ends with it, JavaScript's starts with it).
func runError(cell sandbox.CellResult, stderr string) *RunError {
	e := &RunError{Name: "Error", Traceback: stderr}
	if cell.Status == sandbox.StatusCancelled {
		e.Name, e.Value = "Cancelled", "the run was cancelled"
		return e
	}
	if i := strings.LastIndex(cell.Output, "timed out after"); i >= 0 {
		e.Name, e.Value = "TimeoutError", strings.TrimSpace(strings.SplitN(cell.Output[i:], "\n", 2)[0])
		return e
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
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
