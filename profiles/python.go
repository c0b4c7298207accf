package profiles

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wasmeval/wasmeval/sandbox"
)

// Limits and defaults of the python profile, the seed tool's.
const (
	// DefaultPythonTimeout is a call's timeout, in seconds, when it gives
	// none.
	DefaultPythonTimeout = 30
	// MinPythonTimeout and MaxPythonTimeout bound a call's timeout: a
	// value outside is clamped to them.
	MinPythonTimeout = 1
	MaxPythonTimeout = 600
)

// The kernel modes of the python profile (the seed's python.kernelMode).
const (
	// KernelSession runs every call in the session's interpreter: state
	// persists from call to call. The default.
	KernelSession = "session"
	// KernelPerCall runs each call in a fresh interpreter on the session's
	// files, dropped after the call: no state persists between calls.
	KernelPerCall = "per-call"
)

// PythonExample is a valid python call, for messages and documentation.
const PythonExample = `{"cells":[{"code":"x = 6 * 7\nprint(x)","title":"compute"}],"timeout":30}`

// PythonParams is a python call: the Jupyter-backed tool's parameters.
type PythonParams struct {
	// Cells run in order in one interpreter; the first that fails stops
	// the rest.
	Cells []PythonCell `json:"cells"`
	// Timeout bounds the whole call, in seconds: clamped to
	// MinPythonTimeout..MaxPythonTimeout; nil means DefaultPythonTimeout.
	Timeout *float64 `json:"timeout,omitempty"`
	// Cwd is the working directory of the call: a folder inside the
	// session root that must exist, relative to the root (or absolute, as
	// the guest sees it). Empty means the root.
	Cwd string `json:"cwd,omitempty"`
	// Reset discards the interpreter's state before the first cell (only).
	Reset bool `json:"reset,omitempty"`
	// KernelMode is KernelSession or KernelPerCall; empty means the face's
	// default (--kernel-mode, else KernelSession). wasmeval's addition.
	KernelMode string `json:"kernelMode,omitempty"`
}

// PythonCell is one cell of a python call: code, and an optional title.
type PythonCell struct {
	Code  string `json:"code"`
	Title string `json:"title,omitempty"`
}

// PythonResult is a python call's result: the text an agent reads and
// the per-cell details, as the seed tool returns them.
type PythonResult struct {
	// Content is one text item joining the cells' outputs (under "[i/n]
	// title" headers when there are several, with a last line naming the
	// cell that failed), then one image item per image displayed.
	Content []sandbox.Content `json:"content"`
	// Details is the structured record.
	Details PythonDetails `json:"details"`
}

// PythonDetails is the structured part of a PythonResult.
type PythonDetails struct {
	// Cells has one entry per cell of the call, including those that never
	// ran (status "pending").
	Cells []PythonCellResult `json:"cells"`
	// JSONOutputs are the application/json displays, parsed, in order.
	JSONOutputs []json.RawMessage `json:"jsonOutputs"`
	// Images are the images displayed, in order.
	Images []sandbox.Image `json:"images"`
	// StatusEvents are the cells' status events, in order.
	StatusEvents []sandbox.StatusEvent `json:"statusEvents"`
	// IsError is true when a cell failed, the call timed out, or the code
	// asked for stdin.
	IsError bool `json:"isError"`
	// Cancelled is true when the call was stopped: by its timeout (the
	// output then ends "Command timed out after N seconds") or by its
	// caller.
	Cancelled bool `json:"cancelled"`
	// StdinRequested is true when the code called input() or read stdin,
	// which is not supported: that cell failed.
	StdinRequested bool `json:"stdinRequested"`
	// KernelMode is the kernel mode the call ran in.
	KernelMode string `json:"kernelMode"`
	// Meta says what was cut to keep the result bounded.
	Meta sandbox.Meta `json:"meta"`
}

// PythonCellResult is the record of one cell of a python call.
type PythonCellResult struct {
	// Index is the cell's position in the call, from 0.
	Index int `json:"index"`
	// Title is the call's title for the cell; omitted when it gave none.
	Title string `json:"title,omitempty"`
	// Code is the cell's code.
	Code string `json:"code"`
	// Output is the cell's stdout and stderr interleaved, with the text of
	// its displays and last expression.
	Output string `json:"output"`
	// Status is "pending" (never ran), "complete" or "error".
	Status sandbox.CellStatus `json:"status"`
	// DurationMs is the cell's run time.
	DurationMs int64 `json:"durationMs"`
	// ExitCode is 0 for a complete cell, 1 for a failed one, null for one
	// that never ran.
	ExitCode *int `json:"exitCode"`
	// StatusEvents are the cell's status events.
	StatusEvents []sandbox.StatusEvent `json:"statusEvents"`
}

// Failed reports whether the call failed: IsError.
func (r *PythonResult) Failed() bool { return r.Details.IsError }

var pyd = decoder{profile: Python}

var pythonFields = []string{"cells", "timeout", "cwd", "reset", "kernelMode"}

// DecodePython parses one python call and validates it. Every error is an
// *Error naming the field.
func DecodePython(data []byte) (PythonParams, error) {
	m, err := pyd.top(data, PythonExample)
	if err != nil {
		return PythonParams{}, err
	}
	if err := pyd.fields(m, "", pythonFields); err != nil {
		return PythonParams{}, err
	}
	var p PythonParams
	v, there := m["cells"]
	if !there || kind(v) == "null" {
		return p, pyd.errf("cells", "missing; give the cells to run, like %s", PythonExample)
	}
	cells, err := pyd.array(m, "", "cells", `give a list of cells like [{"code": "print(1)"}]`)
	if err != nil {
		return p, err
	}
	for i, raw := range cells {
		path := fmt.Sprintf("cells[%d]", i)
		c, err := pyd.object(raw, path, `each cell is an object like {"code": "print(1)", "title": "..."}`)
		if err != nil {
			return p, err
		}
		if _, ok := c["language"]; ok {
			return p, pyd.errf(path, `unknown field "language": the python tool's cells are always Python and have no language; the fields are code, title (the eval profile's cells name a language)`)
		}
		for k := range c {
			// A misspelt "language" means an eval call whose cells lost
			// their language (a line is a python call only because none
			// has one): say so rather than list the python tool's fields.
			if k != "code" && k != "title" && sandbox.ClosestName(k, []string{"language"}) != "" {
				return p, pyd.errf(path, `unknown field %q (did you mean "language"? cells with a language are the eval tool's; the python tool's cells have the fields code, title)`, k)
			}
		}
		if err := pyd.fields(c, path, []string{"code", "title"}); err != nil {
			return p, err
		}
		var pc PythonCell
		var ok bool
		if pc.Code, ok, err = pyd.str(c, path, "code", "give the Python code as a string"); err != nil {
			return p, err
		} else if !ok {
			return p, pyd.errf(path+".code", "missing; give the Python code to run")
		}
		if pc.Title, _, err = pyd.str(c, path, "title", "give a short name for the cell"); err != nil {
			return p, err
		}
		p.Cells = append(p.Cells, pc)
	}
	if v, there := m["timeout"]; there && kind(v) != "null" {
		if kind(v) != "number" {
			return p, pyd.errf("timeout", "must be a number of seconds, not %s; give %d to %d (default %d)", describe(v), MinPythonTimeout, MaxPythonTimeout, DefaultPythonTimeout)
		}
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			return p, pyd.errf("timeout", "not a valid number: %s; give %d to %d seconds", jsonErrText(err), MinPythonTimeout, MaxPythonTimeout)
		}
		p.Timeout = &f
	}
	if p.Cwd, _, err = pyd.str(m, "", "cwd", "give a folder inside the session root, like \"data\""); err != nil {
		return p, err
	}
	if v, there := m["reset"]; there && kind(v) != "null" {
		if kind(v) != "boolean" {
			return p, pyd.errf("reset", "must be true or false, not %s", describe(v))
		}
		p.Reset = string(v) == "true"
	}
	if p.KernelMode, _, err = pyd.str(m, "", "kernelMode", `use "session" or "per-call"`); err != nil {
		return p, err
	}
	return p, p.Validate()
}

// Validate checks p as DecodePython checks JSON. Its errors are *Error.
func (p PythonParams) Validate() error {
	if len(p.Cells) == 0 {
		return pyd.errf("cells", "empty; give at least one cell, like %s", PythonExample)
	}
	for i, c := range p.Cells {
		if strings.TrimSpace(c.Code) == "" {
			return pyd.errf(fmt.Sprintf("cells[%d].code", i), "empty; give the Python code to run")
		}
	}
	if p.Timeout != nil && (math.IsNaN(*p.Timeout) || math.IsInf(*p.Timeout, 0)) {
		return pyd.errf("timeout", "must be a finite number of seconds; give %d to %d", MinPythonTimeout, MaxPythonTimeout)
	}
	switch p.KernelMode {
	case "", KernelSession, KernelPerCall:
	default:
		return pyd.errf("kernelMode", `%s is not a kernel mode; use "session" (the session's interpreter, state kept) or "per-call" (a fresh interpreter for the call)`, quote(p.KernelMode))
	}
	return nil
}

// CheckKernelMode checks a --kernel-mode value.
func CheckKernelMode(mode string) error {
	switch mode {
	case "", KernelSession, KernelPerCall:
		return nil
	}
	return fmt.Errorf("--kernel-mode: %q is not a kernel mode; use session (the session's interpreter, state kept between calls) or per-call (a fresh interpreter for each call)", mode)
}

// TimeoutSeconds is the call's timeout, clamped as the seed tool clamps it.
func (p PythonParams) TimeoutSeconds() float64 {
	if p.Timeout == nil {
		return DefaultPythonTimeout
	}
	return min(max(*p.Timeout, MinPythonTimeout), MaxPythonTimeout)
}

// TimedOutText is the line a timed-out call's output ends with.
func TimedOutText(seconds float64) string {
	return "Command timed out after " + strconv.FormatFloat(seconds, 'f', -1, 64) + " seconds"
}

//go:embed python_setup.py
var pythonSetupSource string

const (
	setupMIME = "application/vnd.wasmeval.python-setup+json"
	stdinMIME = "application/vnd.wasmeval.stdin-requested"
)

// stdinText explains a stdin request in the output of a cell that went on
// after it.
const stdinText = "stdin is not supported: input() and reads of sys.stdin fail here; pass the data in the code or in a file"

// setupTimeoutSeconds bounds a call's setup, which starts a new
// interpreter.
const setupTimeoutSeconds = 60

// errCallTimeout is the cause of a python call's deadline.
var errCallTimeout = errors.New("profiles: python: the call's timeout")

// RunPython runs the python call p in env: in env's session (kernel mode
// session) or in a fresh interpreter on its files dropped after the call
// (per-call). A failure or timeout of the code is data in the result; an
// error is an *Error for an invalid call (a cwd that is not a folder of
// the root, say), or a failure of the host.
func RunPython(ctx context.Context, env *Env, p PythonParams) (*PythonResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if env == nil {
		env = &Env{}
	}
	mode := p.KernelMode
	if mode == "" {
		mode = env.KernelMode
	}
	if mode == "" {
		mode = KernelSession
	}
	cwd, err := resolveCwd(env.Root, p.Cwd)
	if err != nil {
		return nil, err
	}
	var sess Evaluator
	switch {
	case mode == KernelPerCall:
		if env.NewSession == nil {
			return nil, pyd.errf("kernelMode", "per-call is not available here (this face cannot start a fresh interpreter); use \"session\"")
		}
		s, err := env.NewSession(ctx, env.Root)
		if err != nil {
			return nil, err
		}
		defer s.Close(context.WithoutCancel(ctx))
		sess = s
	default:
		s, done, err := env.session(ctx, Python)
		if err != nil {
			return nil, err
		}
		defer done()
		sess = s
	}
	secs := p.TimeoutSeconds()
	var (
		mu       sync.Mutex
		setupOut string
		stdinAt  = map[int]bool{}
	)
	outer := sandbox.EventFuncFrom(ctx)
	// The setup starts the interpreter when it is new; the call's timeout
	// runs from the first cell, as the seed's counts from execution.
	setupCtx := sandbox.WithEventFunc(ctx, func(ev sandbox.Event) {
		if ev.Kind == sandbox.EventDisplay {
			if s, ok := ev.Bundle[setupMIME]; ok {
				mu.Lock()
				setupOut = s
				mu.Unlock()
			}
		}
	})
	var nonce [12]byte
	rand.Read(nonce[:])
	args, _ := json.Marshal(map[string]string{"cwd": cwd, "nonce": hex.EncodeToString(nonce[:])})
	// Compiled under the prelude's folder, so that tracebacks through the
	// input() it installs leave its frame out, as they do the prelude's.
	setup := fmt.Sprintf(`__import__("builtins").exec(__import__("builtins").compile(__import__("base64").b64decode(%q).decode("utf-8"), "/usr/local/lib/wasmeval/_wasmeval_python_setup.py", "exec"), {"__name__": "_wasmeval_python_setup", "_ARGS": %q, "_MIME": %q, "_STDIN_MIME": %q})`,
		base64.StdEncoding.EncodeToString([]byte(pythonSetupSource)), base64.StdEncoding.EncodeToString(args), setupMIME, stdinMIME)
	sres, err := sess.Eval(setupCtx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: setup, Title: "python setup", Reset: p.Reset, TimeoutSeconds: setupTimeoutSeconds}}})
	if err != nil {
		return nil, err
	}
	if err == nil && sres.Details.Cells[0].Status == sandbox.StatusComplete {
		var g struct {
			Nonce string  `json:"nonce"`
			Error *string `json:"error"`
		}
		mu.Lock()
		out := setupOut
		mu.Unlock()
		if json.Unmarshal([]byte(out), &g) != nil || g.Nonce != hex.EncodeToString(nonce[:]) {
			return nil, fmt.Errorf("profiles: python: the call's setup gave no result")
		}
		if g.Error != nil {
			return nil, pyd.errf("cwd", "%s; give a folder that exists inside the session root", *g.Error)
		}
	} else {
		c := sres.Details.Cells[0]
		if c.Status == sandbox.StatusCancelled && ctx.Err() != nil {
			return nil, fmt.Errorf("profiles: python: %w", ctx.Err())
		}
		return nil, fmt.Errorf("profiles: python: the call's setup failed: %s", strings.TrimSpace(c.Output))
	}

	callCtx, cancel := context.WithTimeoutCause(ctx, time.Duration(secs*float64(time.Second)), errCallTimeout)
	defer cancel()
	timedOut := func() bool { return ctx.Err() == nil && errors.Is(context.Cause(callCtx), errCallTimeout) }
	cells := make([]sandbox.Cell, len(p.Cells))
	for i, c := range p.Cells {
		// The call's deadline stops the cells; their own timeout (the
		// same, rounded up) is the sandbox's backstop.
		cells[i] = sandbox.Cell{Language: "py", Code: c.Code, Title: c.Title, TimeoutSeconds: max(1, int(math.Ceil(secs)))}
	}
	var res *sandbox.Result
	{
		runCtx := sandbox.WithEventFunc(callCtx, func(ev sandbox.Event) {
			if ev.Kind == sandbox.EventDisplay && ev.Bundle[stdinMIME] != "" {
				mu.Lock()
				stdinAt[ev.Cell] = true
				mu.Unlock()
				return
			}
			if ev.Kind == sandbox.EventStatus && ev.Status == "stdin" {
				// The jupyter backend's: ipykernel puts its own input() in
				// place at each cell, and the runtime answers it and says so.
				mu.Lock()
				stdinAt[ev.Cell] = true
				mu.Unlock()
			}
			if outer != nil {
				outer(ev)
			}
		})
		// A cell that asked for stdin fails, also when its code caught the
		// error and went on, and the cells after it do not run: the seed's
		// executor treats the execution as a failure.
		runCtx = sandbox.WithCellVerdict(runCtx, func(i int) string {
			mu.Lock()
			defer mu.Unlock()
			if stdinAt[i] {
				return stdinText
			}
			return ""
		})
		res, err = sess.Eval(runCtx, sandbox.Request{Cells: cells})
		if err != nil && !timedOut() {
			return nil, err
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return pythonResult(p, cells, res, stdinAt, timedOut(), secs, mode), nil
}

// resolveCwd checks cwd against the session root on the host (when it is
// known) and returns the absolute folder the guest moves to; "" means the
// root.
func resolveCwd(root, cwd string) (string, error) {
	cwd = strings.TrimSpace(cwd)
	if cwd == "" {
		return "", nil
	}
	if root == "" {
		// The guest checks it (os.chdir) and the setup reports a failure.
		return cwd, nil
	}
	p := cwd
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	p = filepath.Clean(p)
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", pyd.errf("cwd", "%s is outside the session root; give a folder inside it, like \"data\" (relative to the root)", quote(cwd))
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", pyd.errf("cwd", "%s does not exist in the session root; give an existing folder (create it first, like os.makedirs(%s))", quote(cwd), strconv.Quote(rel))
		}
		return "", pyd.errf("cwd", "%s: %v; give an existing folder inside the session root", quote(cwd), err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err == nil {
		if r, err := filepath.Rel(realRoot, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", pyd.errf("cwd", "%s leads outside the session root (through a link); give a folder inside it", quote(cwd))
		}
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", pyd.errf("cwd", "%s: %v; give an existing folder inside the session root", quote(cwd), err)
	}
	if !fi.IsDir() {
		return "", pyd.errf("cwd", "%s is a file, not a folder; give a folder inside the session root", quote(cwd))
	}
	return p, nil
}

// pythonResult builds the seed tool's result from the cells' result (nil
// when the call timed out before they started).
func pythonResult(p PythonParams, cells []sandbox.Cell, res *sandbox.Result, stdinAt map[int]bool, timedOut bool, secs float64, mode string) *PythonResult {
	out := &PythonResult{Details: PythonDetails{
		Cells: make([]PythonCellResult, len(cells)), JSONOutputs: []json.RawMessage{}, Images: []sandbox.Image{},
		StatusEvents: []sandbox.StatusEvent{}, KernelMode: mode,
	}}
	d := &out.Details
	for i, c := range cells {
		d.Cells[i] = PythonCellResult{Index: i, Title: p.Cells[i].Title, Code: c.Code, Status: sandbox.StatusPending, StatusEvents: []sandbox.StatusEvent{}}
	}
	if res != nil {
		d.JSONOutputs = nonNil(res.Details.JSONOutputs)
		d.Images = nonNil(res.Details.Images)
		d.StatusEvents = nonNil(res.Details.StatusEvents)
		d.Meta = res.Details.Meta
		for i, c := range res.Details.Cells {
			if i >= len(d.Cells) {
				break
			}
			pc := &d.Cells[i]
			pc.Output, pc.Status, pc.DurationMs, pc.ExitCode = c.Output, c.Status, c.DurationMs, c.ExitCode
			pc.StatusEvents = nonNil(c.StatusEvents)
		}
	}
	timedOutAt := -1
	for i := range d.Cells {
		pc := &d.Cells[i]
		switch {
		case pc.Status == sandbox.StatusCancelled:
			d.Cancelled = true
			pc.Status, pc.ExitCode = sandbox.StatusError, intPtr(1)
			if timedOut {
				timedOutAt = i
			}
		case pc.Status == sandbox.StatusError && strings.Contains(pc.Output, "timed out after"):
			// The cell's own timeout (the call's, rounded up) came first.
			d.Cancelled, timedOutAt = true, i
		}
		if stdinAt[i] {
			// The cell failed (WithCellVerdict in RunPython), and no cell
			// after it ran.
			d.StdinRequested = true
		}
	}
	if timedOut && timedOutAt < 0 {
		// The deadline passed before the cells started (the setup, or the
		// wait for the session's turn, took it all).
		d.Cancelled, timedOutAt = true, 0
		d.Cells[0].Status, d.Cells[0].ExitCode = sandbox.StatusError, intPtr(1)
	}
	if timedOutAt >= 0 {
		pc := &d.Cells[timedOutAt]
		// The call's timeout stands in for the sandbox's note of the stop.
		out := strings.TrimRight(pc.Output, "\n")
		if i := strings.LastIndex(out, "\n"); strings.TrimSpace(out[i+1:]) == "cancelled" {
			out = out[:i+1]
		}
		pc.Output = strings.TrimLeft(strings.TrimRight(out, "\n")+"\n"+TimedOutText(secs)+"\n", "\n")
	}
	for _, c := range d.Cells {
		if c.Status != sandbox.StatusComplete {
			d.IsError = true
		}
	}
	d.IsError = d.IsError || d.StdinRequested || d.Cancelled
	out.Content = pythonContent(d.Cells, d.Images)
	return out
}

// pythonContent is the text an agent reads: each cell's output (under an
// "[i/n] title" header when there are several), then a line naming the
// cell that failed; then the images.
func pythonContent(cells []PythonCellResult, images []sandbox.Image) []sandbox.Content {
	var b strings.Builder
	n := len(cells)
	name := func(i int) string {
		if t := strings.TrimSpace(cells[i].Title); t != "" {
			return fmt.Sprintf("Cell %d (%s)", i+1, strings.Join(strings.Fields(t), " "))
		}
		return fmt.Sprintf("Cell %d", i+1)
	}
	for i, c := range cells {
		if n > 1 {
			if i > 0 {
				b.WriteString("\n\n")
			}
			fmt.Fprintf(&b, "[%d/%d]", i+1, n)
			if t := strings.TrimSpace(c.Title); t != "" {
				b.WriteString(" " + strings.Join(strings.Fields(t), " "))
			}
			b.WriteString("\n")
		}
		switch text := strings.TrimRight(c.Output, "\n"); {
		case c.Status == sandbox.StatusPending:
			b.WriteString("(not run)")
		case strings.TrimSpace(text) != "":
			b.WriteString(text)
		default:
			b.WriteString("(no output)")
		}
	}
	for i, c := range cells {
		if c.Status == sandbox.StatusError {
			b.WriteString("\n\n" + name(i) + " failed")
			break
		}
	}
	content := []sandbox.Content{{Type: "text", Text: b.String()}}
	for _, im := range images {
		content = append(content, sandbox.Content{Type: "image", Data: im.Data, MIMEType: im.MIMEType})
	}
	return content
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func intPtr(i int) *int { return &i }
