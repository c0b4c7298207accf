// Package replay replays a recorded session (a tape, see package tape)
// and compares every result with the recorded one, byte for byte.
//
// The root is rebuilt from the tape in a folder of its own; each request
// runs again in a new session whose clocks, randomness and outward host
// calls (tool, llm, agent) are fed from the tape, so no network, tool
// server or model is needed. The file and output helpers run again, on
// the rebuilt root, and their answers are checked against the tape.
//
// The guest sees its root at its real path; the recorded root's path is
// replaced by the replay's in what is compared (results, host calls,
// the environment).
package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// Options configure a replay.
type Options struct {
	// Dir is the folder the root is rebuilt in; it must be empty or
	// missing. Empty means a temporary folder, removed afterwards.
	Dir string
	// Blobs is a folder holding the root's files that the tape names by
	// hash (larger than its embedding cap), by SHA-256 or by path.
	Blobs string
	// Sandbox configures the sandbox the replay runs in (logger, Python
	// packages). Its Host is not used: the tape answers tool, llm and
	// agent.
	Sandbox sandbox.Options
}

// Divergence is a place where the replay did not do what the tape says.
type Divergence struct {
	// Request is the request's number on the tape, from 1.
	Request int `json:"request"`
	// Cell is the index of the cell whose result differs, or -1 when the
	// divergence is not a cell's (a host call, a clock read).
	Cell int `json:"cell"`
	// What is "result", "host call", "clock" or "random".
	What string `json:"what"`
	// Message says what differed.
	Message string `json:"message"`
	// Expected and Got are the recorded and the replayed value, where
	// there is one.
	Expected string `json:"expected,omitempty"`
	Got      string `json:"got,omitempty"`
	// Diff is a unified diff of Expected and Got.
	Diff string `json:"diff,omitempty"`
}

// String is the divergence as a report prints it.
func (d Divergence) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "request %d", d.Request)
	if d.Cell >= 0 {
		fmt.Fprintf(&b, ", cell %d", d.Cell)
	}
	fmt.Fprintf(&b, ": %s: %s\n", d.What, d.Message)
	switch {
	case d.Diff != "":
		b.WriteString(d.Diff)
	case d.Expected != "" || d.Got != "":
		if d.Expected != "" {
			fmt.Fprintf(&b, "expected: %s\n", d.Expected)
		}
		if d.Got != "" {
			fmt.Fprintf(&b, "got:      %s\n", d.Got)
		}
	}
	return b.String()
}

// Report is what a replay found.
type Report struct {
	// Requests is how many requests were replayed.
	Requests int `json:"requests"`
	// Identical is true when every result matched and the guest read and
	// called exactly what the tape recorded.
	Identical bool `json:"identical"`
	// Divergences are all the divergences, in order; the first is where
	// the replay first went another way.
	Divergences []Divergence `json:"divergences"`
	// Header is the tape's header.
	Header tape.Header `json:"header"`
}

// File replays the tape at path.
func File(ctx context.Context, path string, opts Options) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	t, err := tape.Read(f)
	if err != nil {
		return nil, fmt.Errorf("replay: %s: %w", path, err)
	}
	return Run(ctx, t, opts)
}

// Run replays t. An error means the replay could not run (a bad tape, a
// root that cannot be rebuilt, a runtime that does not start); a replay
// that differs is a Report with Divergences.
func Run(ctx context.Context, t *tape.Tape, opts Options) (*Report, error) {
	reqs, results, ins, err := split(t.Events)
	if err != nil {
		return nil, err
	}
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "wasmeval-replay-"); err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		defer os.RemoveAll(dir)
	} else {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		if ents, err := os.ReadDir(dir); err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		} else if len(ents) > 0 {
			return nil, fmt.Errorf("replay: %s is not empty; give an empty or missing folder to rebuild the root in", dir)
		}
	}
	if err := tape.RestoreRoot(dir, t.Root, opts.Blobs); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	f := &feed{oldRoot: t.Header.Root, newRoot: abs} // as the guest sees its root
	sbo := opts.Sandbox
	sbo.Host = nil
	sb, err := sandbox.New(ctx, sbo)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer sb.Close(context.WithoutCancel(ctx))
	h := t.Header
	env := make(map[string]string, len(h.Env))
	for k, v := range h.Env {
		env[k] = string(f.local([]byte(v)))
	}
	so := sandbox.SessionOptions{
		Root: dir, Env: env, Replay: f,
		Deterministic:    h.Options.Deterministic,
		MemoryLimitBytes: h.Options.MemoryLimitBytes,
		Checkpoints:      h.Options.Checkpoints,
		FuelBudget:       h.Options.FuelBudget,
		AgentDepth:       h.Options.AgentDepth,
		DiskQuotaBytes:   h.Options.DiskQuotaBytes,
		DiskQuotaFiles:   h.Options.DiskQuotaFiles,
		Languages:        h.Options.Languages,
	}
	sess, err := sb.NewSession(ctx, so)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer sess.Close(context.WithoutCancel(ctx))
	rep := &Report{Header: h}
	for _, rq := range reqs {
		req, err := sandbox.DecodeRequest(f.local(rq.Request))
		if err != nil {
			return nil, fmt.Errorf("replay: request %d on the tape: %w", rq.N, err)
		}
		f.begin(rq.N, ins[rq.N])
		res, evalErr := sess.Eval(ctx, req)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		divs := f.end()
		rep.Requests++
		if want, ok := results[rq.N]; ok {
			divs = append(compareResult(rq.N, f, want, res, evalErr), divs...)
		} else {
			divs = append(divs, Divergence{Request: rq.N, Cell: -1, What: "result", Message: "the tape ends before this request's result (was the recording cut short?)"})
		}
		rep.Divergences = append(rep.Divergences, divs...)
	}
	rep.Identical = len(rep.Divergences) == 0
	return rep, nil
}

// compareResult compares a replayed result with the recorded one.
func compareResult(n int, f *feed, want tape.Record, res *sandbox.Result, evalErr error) []Divergence {
	if want.Error != "" || evalErr != nil {
		got := ""
		if evalErr != nil {
			got = evalErr.Error()
		}
		exp := string(f.local([]byte(want.Error)))
		if exp == got {
			return nil
		}
		return []Divergence{{Request: n, Cell: -1, What: "result", Message: "the request's host error differs", Expected: exp, Got: got}}
	}
	gotJSON, err := sandbox.MarshalResult(res)
	if err != nil {
		return []Divergence{{Request: n, Cell: -1, What: "result", Message: fmt.Sprintf("the result could not be encoded: %v", err)}}
	}
	wantJSON := f.local(want.Result)
	if bytes.Equal(gotJSON, wantJSON) {
		return nil
	}
	var wr sandbox.Result
	if err := json.Unmarshal(wantJSON, &wr); err == nil {
		for i := range min(len(wr.Details.Cells), len(res.Details.Cells)) {
			wc, gc := wr.Details.Cells[i], res.Details.Cells[i]
			gc.DurationMs = 0
			if wc.Output != gc.Output {
				return []Divergence{{Request: n, Cell: i, What: "result", Message: "the cell's output differs",
					Diff: udiff.Unified("recorded", "replayed", wc.Output, gc.Output)}}
			}
			a, _ := json.MarshalIndent(wc, "", "  ")
			b, _ := json.MarshalIndent(gc, "", "  ")
			if !bytes.Equal(a, b) {
				return []Divergence{{Request: n, Cell: i, What: "result", Message: "the cell's record differs",
					Diff: udiff.Unified("recorded", "replayed", string(a)+"\n", string(b)+"\n")}}
			}
		}
	}
	var a, b bytes.Buffer
	json.Indent(&a, wantJSON, "", "  ")
	json.Indent(&b, gotJSON, "", "  ")
	return []Divergence{{Request: n, Cell: -1, What: "result", Message: "the result differs",
		Diff: udiff.Unified("recorded", "replayed", a.String()+"\n", b.String()+"\n")}}
}
