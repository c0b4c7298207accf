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
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aymanbagabas/go-udiff"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// Options configure a replay.
type Options struct {
	// Dir is the folder the root is rebuilt in; it must be empty or
	// missing. Empty means a temporary folder, removed afterwards. A
	// fork's root is rebuilt in Dir.forkN (N: the request after the
	// fork), which must not exist.
	Dir string
	// Blobs is a folder holding the root's files that the tape names by
	// hash (larger than its embedding cap), by SHA-256 or by path.
	Blobs string
	// Sandbox configures the sandbox the replay runs in (logger, Python
	// packages). Its Host is not used: the tape answers tool, llm and
	// agent.
	Sandbox sandbox.Options
	// MaxMemoryLimitBytes, MaxDiskQuotaBytes and MaxDiskQuotaFiles are
	// the most a tape's header (or a fork's) may ask its session's guest
	// memory cap and disk quota to be: a tape is input, often someone
	// else's, and a header claiming no disk quota or a memory cap of a
	// terabyte would lift the caps that keep its guest from harming this
	// host. A tape that asks for more is refused, saying what it asks.
	// Zero means the sandbox's defaults (256 MiB, 1 GiB, 100,000
	// entries); a negative value means no ceiling.
	MaxMemoryLimitBytes, MaxDiskQuotaBytes, MaxDiskQuotaFiles int64
}

// Divergence is a place where the replay did not do what the tape says.
type Divergence struct {
	// Request is the request's number on the tape, from 1.
	Request int `json:"request"`
	// Cell is the index of the cell whose result differs, or -1 when the
	// divergence is not a cell's (a host call, a clock read).
	Cell int `json:"cell"`
	// What is "result", "host call", "clock", "random", "stop", "nested
	// request" or "wake" (a JavaScript cell's event loop woke otherwise
	// than recorded).
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
	// NotExact names the cells that cannot be replayed exactly (a
	// JavaScript cell stopped by its timeout: JavaScript meters no fuel,
	// so the replay stops it by the clock).
	NotExact []string `json:"notExact,omitempty"`
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
	p, err := Start(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	for p.More() {
		if _, err := p.Step(ctx); err != nil {
			return nil, err
		}
	}
	return p.Report(), nil
}

// Player replays a tape one request at a time (Run replays all of it).
type Player struct {
	t       *tape.Tape
	opts    Options
	reqs    []tape.Record
	results map[int]tape.Record
	ins     map[int]*inputs
	forks   map[int]tape.Record // fork records, by the request after them
	f       *feed
	sb      *sandbox.Sandbox
	sess    *sandbox.Session
	cleanup func()
	next    int // index into reqs
	rep     *Report
	got     map[int]tape.Record // the replayed results, for Update
}

// Start rebuilds the root and opens the session a replay runs in.
func Start(ctx context.Context, t *tape.Tape, opts Options) (_ *Player, err error) {
	reqs, results, ins, forks, err := split(t.Events)
	if err != nil {
		return nil, err
	}
	p := &Player{t: t, opts: opts, reqs: reqs, results: results, ins: ins, forks: forks, rep: &Report{Header: t.Header}, got: map[int]tape.Record{}, cleanup: func() {}}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	dir, err := p.rootDir(opts.Dir, "wasmeval-replay-", t.Header.Root)
	if err != nil {
		return nil, err
	}
	if err := tape.RestoreRoot(dir, t.Root, opts.Blobs); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	if m := t.Header.RootMTime; m != 0 {
		if err := os.Chtimes(dir, time.Unix(0, m), time.Unix(0, m)); err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	p.f = &feed{byOutput: t.Header.Format >= 2, format: t.Header.Format, start: t.Header.Start,
		wakes: t.Header.Format >= 6 && !t.Header.Options.Deterministic}
	p.f.setRoots(t.Header.Root, abs) // as the guest sees its root
	sbo := opts.Sandbox
	sbo.Host = nil
	if err := checkLayer(t.Header, sbo); err != nil {
		return nil, err
	}
	if p.sb, err = sandbox.New(ctx, sbo); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	if err := checkLimits(t.Header, opts, "tape"); err != nil {
		return nil, err
	}
	so := p.sessionOptions(t.Header, dir)
	if p.sess, err = p.sb.NewSession(ctx, so); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	p.f.run = p.sess.Eval
	return p, nil
}

// rootDir is the folder a root is rebuilt in: dir, which must be empty or
// missing, or a temporary folder removed by Close, whose path is as long
// as the recorded root's (recorded) where it can be.
//
// Why the length: the guest sees its root at its real path, and the
// strings that hold it (the working folder, HOME, sys.path) take memory
// by their length, so another length lays the guest's heap out otherwise
// and its allocations cost a little more or less fuel. A Python cell's
// fuel checks then fall at slightly other points of its work, and a
// recorded interrupt, delivered at the same check, can land one loop
// step off. A path of the same length gives the same layout.
func (p *Player) rootDir(dir, pattern, recorded string) (string, error) {
	if dir == "" {
		base, err := os.MkdirTemp("", pattern)
		if err != nil {
			return "", fmt.Errorf("replay: %w", err)
		}
		prev := p.cleanup
		p.cleanup = func() { prev(); os.RemoveAll(base) }
		if base, err = filepath.Abs(base); err != nil {
			return "", fmt.Errorf("replay: %w", err)
		}
		dir, err := sameLength(base, len(recorded))
		if err != nil {
			return "", fmt.Errorf("replay: %w", err)
		}
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("replay: %w", err)
	}
	if ents, err := os.ReadDir(dir); err != nil {
		return "", fmt.Errorf("replay: %w", err)
	} else if len(ents) > 0 {
		return "", fmt.Errorf("replay: %s is not empty; give an empty or missing folder to rebuild the root in", dir)
	}
	return dir, nil
}

// sameLength makes and returns a folder in base whose path is n bytes
// long, or base itself when it is n bytes long or longer (a recorded
// root shorter than the temporary folder: its length cannot be had).
func sameLength(base string, n int) (string, error) {
	dir := base
	for left := n - len(dir) - 1; left > 0; left = n - len(dir) - 1 {
		// Names of at most 200 bytes, and none of 1 byte before the last:
		// every step takes at least 2 bytes (a slash and a letter).
		name := min(left, 200)
		if rest := left - name; rest == 1 {
			name--
		}
		dir = filepath.Join(dir, strings.Repeat("r", name))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return dir, nil
}

// sessionOptions are the options of the session (or fork) h describes,
// rooted at dir and fed by the tape.
func (p *Player) sessionOptions(h tape.Header, dir string) sandbox.SessionOptions {
	env := make(map[string]string, len(h.Env))
	for k, v := range h.Env {
		env[k] = string(p.f.local([]byte(v)))
	}
	return sandbox.SessionOptions{
		Root: dir, Env: env, Replay: p.f,
		Deterministic:    h.Options.Deterministic,
		MemoryLimitBytes: h.Options.MemoryLimitBytes,
		Checkpoints:      h.Options.Checkpoints,
		FuelBudget:       h.Options.FuelBudget,
		AgentDepth:       h.Options.AgentDepth,
		DiskQuotaBytes:   h.Options.DiskQuotaBytes,
		DiskQuotaFiles:   h.Options.DiskQuotaFiles,
		Languages:        h.Options.Languages,
	}
}

// fork replays a fork recorded before request n: the session is forked
// into a folder of its own, and the replay goes on in the fork.
func (p *Player) fork(ctx context.Context, n int, rec tape.Record) error {
	if err := checkLimits(*rec.Header, p.opts, fmt.Sprintf("fork before request %d", n)); err != nil {
		return err
	}
	dir := ""
	if p.opts.Dir != "" {
		dir = fmt.Sprintf("%s.fork%d", strings.TrimRight(p.opts.Dir, "/"), n)
		// Made here, and only here: the tape decides how many forks there
		// are, and a folder (or a link) already at that path beside Dir,
		// in a shared /tmp anyone's, would receive the fork's files.
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("replay: the fork before request %d is rebuilt beside --cwd, in %s, which must not exist: %w", n, dir, err)
		}
	}
	dir, err := p.rootDir(dir, "wasmeval-replay-fork-", rec.Header.Root)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	p.f.mu.Lock()
	p.f.setRoots(append(slices.Clone(p.f.roots), rec.Header.Root, abs)...)
	p.f.start = rec.Header.Start
	p.f.mu.Unlock()
	cp, err := p.sess.Fork(ctx, p.sessionOptions(*rec.Header, abs))
	if err != nil {
		return fmt.Errorf("replay: the fork before request %d: %w", n, err)
	}
	p.sess.Close(ctx)
	p.sess = cp
	p.f.run = cp.Eval
	return nil
}

// More says whether requests are left to replay.
func (p *Player) More() bool { return p.next < len(p.reqs) }

// Requests is how many requests the tape holds.
func (p *Player) Requests() int { return len(p.reqs) }

// Step replays the next request and returns its divergences (none when
// it replayed identically).
func (p *Player) Step(ctx context.Context) ([]Divergence, error) {
	if !p.More() {
		return nil, fmt.Errorf("replay: all %d requests were replayed", len(p.reqs))
	}
	rq := p.reqs[p.next]
	p.next++

	req, err := sandbox.DecodeRequest(p.f.local(rq.Request))
	if err != nil {
		return nil, fmt.Errorf("replay: request %d on the tape: %w", rq.N, err)
	}
	langs := make([]string, len(req.Cells))
	for i, c := range req.Cells {
		langs[i] = c.Language
	}
	p.f.begin(rq.N, p.ins[rq.N], langs)
	if fk, ok := p.forks[rq.N]; ok {
		// What the fork read (a fresh seed for its copy of Python's
		// random) was recorded with the next request's inputs.
		if err := p.fork(ctx, rq.N, fk); err != nil {
			return nil, err
		}
	}
	res, evalErr := p.sess.Eval(ctx, req)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	divs := p.f.end()
	p.rep.Requests++
	got := tape.Record{Type: tape.TypeResult, N: rq.N}
	if evalErr != nil {
		got.Error = evalErr.Error()
	} else if b, err := sandbox.MarshalResult(res); err == nil {
		got.Result = b
	} else {
		got.Error = err.Error()
	}
	p.got[rq.N] = got
	if want, ok := p.results[rq.N]; ok {
		divs = append(compareResult(rq.N, p.f, want, res, evalErr), divs...)
	} else {
		divs = append(divs, Divergence{Request: rq.N, Cell: -1, What: "result", Message: "the tape ends before this request's result (was the recording cut short?)"})
	}
	p.rep.Divergences = append(p.rep.Divergences, divs...)
	return divs, nil
}

// Report is what the replay found so far.
func (p *Player) Report() *Report {
	r := *p.rep
	r.Identical = len(r.Divergences) == 0
	p.f.mu.Lock()
	r.NotExact = append([]string(nil), p.f.inexact...)
	p.f.mu.Unlock()
	return &r
}

// WriteUpdated writes the tape with each replayed request's result in
// place of the recorded one (with the replay's root path back to the
// recorded one): what `wasmeval replay --update` and replaytest -update
// keep. Inputs (clocks, randomness, host calls) stay as recorded.
func (p *Player) WriteUpdated(w *tape.Writer) error {
	h := p.t.Header
	if err := w.Write(tape.Record{Type: tape.TypeHeader, Header: &h}); err != nil {
		return err
	}
	for _, r := range p.t.Root {
		if err := w.Write(r); err != nil {
			return err
		}
	}
	back := p.f.reversed()
	for _, r := range p.t.Events {
		if g, ok := p.got[r.N]; ok && r.Type == tape.TypeResult && !r.Nested {
			r = g
			r.Result = back(r.Result)
			r.Error = string(back([]byte(r.Error)))
		}
		if err := w.Write(r); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the session and removes a temporary root.
func (p *Player) Close() {
	ctx := context.Background()
	if p.sess != nil {
		p.sess.Close(ctx)
	}
	if p.sb != nil {
		p.sb.Close(ctx)
	}
	p.cleanup()
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

// checkLayer refuses a replay whose sandbox has another Python package
// layer than the tape was recorded with: the guest would import other
// code. A tape does not hold the layer (it is usually large), so the
// replay must be given the same one.
func checkLayer(h tape.Header, o sandbox.Options) error {
	if h.Format < 2 {
		return nil // the tape does not say
	}
	var got *tape.Layer
	if o.Packages != "" {
		var err error
		if got, err = tape.LayerDigest(o.Packages, o.Preload); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
	}
	want := h.Packages
	switch {
	case want == nil && got == nil:
		return nil
	case want != nil && got != nil && want.SHA256 == got.SHA256 && slices.Equal(want.Preload, got.Preload):
		return nil
	case want == nil:
		return fmt.Errorf("replay: the tape was recorded without a package layer, and this replay has %s (--packages %s); replay it without --packages", got.Describe(), o.Packages)
	case got == nil:
		return fmt.Errorf("replay: the tape was recorded with %s, which it does not hold; give the same layer with --packages DIR (and --preload) to replay it", want.Describe())
	}
	return fmt.Errorf("replay: the tape was recorded with %s; this replay's (--packages %s) is %s: give the layer the session was recorded with", want.Describe(), o.Packages, got.Describe())
}

// checkLimits refuses a header (the tape's, or a fork's: what) that asks
// for a guest memory cap or a disk quota past the replay's ceilings, or
// for none at all.
func checkLimits(h tape.Header, o Options, what string) error {
	for _, l := range []struct {
		asked, ceiling, def int64
		name, flag, unit    string
	}{
		{h.Options.MemoryLimitBytes, o.MaxMemoryLimitBytes, hostcalls.DefaultMemoryLimitBytes, "a guest memory cap", "--memory-limit", " bytes"},
		{h.Options.DiskQuotaBytes, o.MaxDiskQuotaBytes, hostcalls.DefaultDiskQuotaBytes, "a disk quota", "--disk-quota", " bytes"},
		{h.Options.DiskQuotaFiles, o.MaxDiskQuotaFiles, hostcalls.DefaultDiskQuotaFiles, "a disk quota", "--disk-quota-files", " entries"},
	} {
		ceiling := cmp.Or(l.ceiling, l.def)
		switch {
		case ceiling < 0 || l.asked == 0 || l.asked > 0 && l.asked <= ceiling:
			continue
		case l.asked < 0 && l.flag == "--memory-limit":
			continue // not valid at all: the sandbox says so
		case l.asked < 0:
			return fmt.Errorf("replay: the %s asks for no cap (%s none); a replay allows at most %d%s unless given %s none (replay a tape without a cap only if you trust it)",
				what, l.flag, ceiling, l.unit, l.flag)
		}
		return fmt.Errorf("replay: the %s asks for %s of %d%s, more than this replay allows (%d%s); give %s %d to replay it if you trust it",
			what, l.name, l.asked, l.unit, ceiling, l.unit, l.flag, l.asked)
	}
	return nil
}
