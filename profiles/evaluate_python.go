package profiles

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wasmeval/wasmeval/sandbox"
)

// Limits of the evaluate_python profile, the seed tool's.
const (
	// MaxCodeChars is the longest code, in characters.
	MaxCodeChars = 2000
	// MaxStreamChars caps stdout and stderr; longer streams end in "...".
	MaxStreamChars = 4096
	// MaxWriteChars is the longest content of one write, in characters.
	MaxWriteChars = 48_000
	// MaxPathDepth is the most segments a path may have.
	MaxPathDepth = 16
	// MaxSegmentChars is the longest segment of a path.
	MaxSegmentChars = 80
	// DefaultEvaluatePythonTimeout bounds a call that sets no Timeout.
	DefaultEvaluatePythonTimeout = 5 * time.Second
	// TimedOutMessage is the stderr of a call that timed out.
	TimedOutMessage = "Execution timed out."
)

// Write modes of FileWrite.Mode.
const (
	ModeCreate    = "create"
	ModeOverwrite = "overwrite"
	ModeAppend    = "append"
)

// EvaluatePythonExample is a valid call, for messages and documentation.
const EvaluatePythonExample = `{"code":"total = sum(range(5))\ntotal","globals":{},"reads":[],"writes":[]}`

// EvalParams is an evaluate_python call: the asteval tool's parameters.
type EvalParams struct {
	// Code is a Python script of at most MaxCodeChars characters, without
	// control characters other than tab and newline. The repr of its last
	// expression, when it ends in one, is the result's ValueRepr.
	Code string `json:"code"`
	// Globals maps variable names to JSON texts, decoded into the code's
	// namespace before it runs.
	Globals map[string]string `json:"globals"`
	// Reads are files of the session root whose text is put in the
	// namespace under their path, like globals()["data/a.txt"].
	Reads []FileRead `json:"reads"`
	// Writes are files written after the code ran to its end, their
	// content templated with str.format_map over the final globals.
	Writes []FileWrite `json:"writes"`
}

// FileRead names a file to read.
type FileRead struct {
	Path string `json:"path"`
}

// FileWrite is a file to write: Mode is ModeCreate (the default; the file
// must not exist), ModeOverwrite or ModeAppend.
type FileWrite struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Mode    string `json:"mode"`
}

// EvalResult is an evaluate_python result, the asteval tool's.
type EvalResult struct {
	// ValueRepr is the repr of the last expression's value; nil when the
	// code did not end in an expression, its value was None, or it failed.
	ValueRepr *string `json:"value_repr"`
	// Stdout and Stderr are what the code printed, at most MaxStreamChars
	// characters each. Stderr holds the traceback of a failure, or
	// TimedOutMessage.
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// Globals are the final globals the code made or was given (and the
	// reads), stringified: strings as they are, JSON-able values as JSON,
	// anything else as "!repr:" and its repr.
	Globals map[string]string `json:"globals"`
	// Reads echo the call's reads, their paths normalized.
	Reads []FileRead `json:"reads"`
	// Writes are the writes applied, with their final content (the call's,
	// then write_text's); empty when the code failed or timed out.
	Writes []FileWrite `json:"writes"`

	failed bool
}

// Failed reports whether the code failed or timed out: its writes were
// then discarded. (A run can write to stderr and still succeed.)
func (r *EvalResult) Failed() bool { return r.failed }

// Evaluator runs requests in a session: *sandbox.Session does, and EvalFunc
// adapts anything else (a Manager's session, say).
type Evaluator interface {
	Eval(ctx context.Context, req sandbox.Request) (*sandbox.Result, error)
}

// EvalFunc adapts a function to Evaluator.
type EvalFunc func(ctx context.Context, req sandbox.Request) (*sandbox.Result, error)

// Eval calls f.
func (f EvalFunc) Eval(ctx context.Context, req sandbox.Request) (*sandbox.Result, error) {
	return f(ctx, req)
}

// EvalOptions tunes RunEvaluatePython beyond the seed's contract.
type EvalOptions struct {
	// Timeout bounds the run, in whole seconds (rounded up, at most
	// sandbox.MaxTimeoutSeconds); zero means DefaultEvaluatePythonTimeout.
	Timeout time.Duration
	// OnEvent, when set, sees the run's output events as they happen, as
	// does the EventFunc of ctx (sandbox.WithEventFunc), if any.
	OnEvent func(sandbox.Event)
}

var evalFields = []string{"code", "globals", "reads", "writes"}

var epd = decoder{profile: EvaluatePython}

// DecodeEvaluatePython parses one evaluate_python call and validates it.
// Every error is an *Error naming the field.
func DecodeEvaluatePython(data []byte) (EvalParams, error) {
	m, err := epd.top(data, EvaluatePythonExample)
	if err != nil {
		return EvalParams{}, err
	}
	return decodeEvaluatePython(m)
}

func decodeEvaluatePython(m map[string]json.RawMessage) (EvalParams, error) {
	if err := epd.fields(m, "", evalFields); err != nil {
		return EvalParams{}, err
	}
	var p EvalParams
	code, ok, err := epd.str(m, "", "code", "give the Python code to run as a string")
	if err != nil {
		return EvalParams{}, err
	}
	if !ok {
		return EvalParams{}, epd.errf("code", "missing; give the Python code to run, like %s", EvaluatePythonExample)
	}
	p.Code = code
	if v, there := m["globals"]; there && kind(v) != "null" {
		g, err := epd.object(v, "globals", `give an object of names to JSON texts, like {"n": "3", "name": "\"Ada\""}`)
		if err != nil {
			return EvalParams{}, err
		}
		p.Globals = map[string]string{}
		for k, raw := range g {
			if kind(raw) != "string" {
				return EvalParams{}, epd.errf("globals."+k, "must be a string holding JSON, not %s; write %s as %s", describe(raw), clip(string(raw), 40), strconv.Quote(clip(string(raw), 40)))
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return EvalParams{}, epd.errf("globals."+k, "not a valid JSON string: %s", jsonErrText(err))
			}
			p.Globals[k] = s
		}
	}
	reads, err := epd.array(m, "", "reads", `give a list like [{"path": "data/a.txt"}]`)
	if err != nil {
		return EvalParams{}, err
	}
	for i, raw := range reads {
		path := fmt.Sprintf("reads[%d]", i)
		r, err := epd.object(raw, path, `each read is an object like {"path": "data/a.txt"}`)
		if err != nil {
			return EvalParams{}, err
		}
		if err := epd.fields(r, path, []string{"path"}); err != nil {
			return EvalParams{}, err
		}
		s, _, err := epd.str(r, path, "path", "give the file's path relative to the session root")
		if err != nil {
			return EvalParams{}, err
		}
		p.Reads = append(p.Reads, FileRead{Path: s})
	}
	writes, err := epd.array(m, "", "writes", `give a list like [{"path": "out.txt", "content": "...", "mode": "create"}]`)
	if err != nil {
		return EvalParams{}, err
	}
	for i, raw := range writes {
		path := fmt.Sprintf("writes[%d]", i)
		w, err := epd.object(raw, path, `each write is an object like {"path": "out.txt", "content": "...", "mode": "create"}`)
		if err != nil {
			return EvalParams{}, err
		}
		if err := epd.fields(w, path, []string{"path", "content", "mode"}); err != nil {
			return EvalParams{}, err
		}
		var fw FileWrite
		if fw.Path, _, err = epd.str(w, path, "path", "give the file's path relative to the session root"); err != nil {
			return EvalParams{}, err
		}
		var hasContent bool
		if fw.Content, hasContent, err = epd.str(w, path, "content", "give the text to write"); err != nil {
			return EvalParams{}, err
		}
		if !hasContent {
			return EvalParams{}, epd.errf(path+".content", `missing; give the text to write (it may hold {name} templates over the final globals)`)
		}
		if fw.Mode, _, err = epd.str(w, path, "mode", `use "create", "overwrite" or "append"`); err != nil {
			return EvalParams{}, err
		}
		p.Writes = append(p.Writes, fw)
	}
	if err := p.Validate(); err != nil {
		return EvalParams{}, err
	}
	return p, nil
}

// Validate checks p as DecodeEvaluatePython checks JSON; an empty Mode
// means ModeCreate. Its errors are *Error.
func (p EvalParams) Validate() error {
	_, err := p.normalized()
	return err
}

// normalized returns p with paths normalized and modes defaulted.
func (p EvalParams) normalized() (EvalParams, error) {
	if n := utf8.RuneCountInString(p.Code); n > MaxCodeChars {
		return p, epd.errf("code", "%d characters is too long; send at most %d (put long programs in a file and read it)", n, MaxCodeChars)
	}
	for i, r := range p.Code {
		if r < 32 && r != '\t' && r != '\n' {
			return p, epd.errf("code", "holds the control character %U at byte %d; only tab and newline are allowed (write \\r\\n line ends as \\n)", r, i)
		}
	}
	if !utf8.ValidString(p.Code) {
		return p, epd.errf("code", "is not valid UTF-8; send text")
	}
	out := EvalParams{Code: p.Code, Globals: map[string]string{}}
	for name, text := range p.Globals {
		id := strings.TrimSpace(name)
		if !isIdentifier(id) {
			return p, epd.errf("globals."+name, "%s is not a Python identifier; use letters, digits and underscores, not starting with a digit", quote(name))
		}
		if !json.Valid([]byte(text)) {
			return p, epd.errf("globals."+name, "%s is not valid JSON; give a JSON text, like \"3\", \"[1, 2]\" or \"\\\"text\\\"\" for a string", quote(text))
		}
		out.Globals[id] = text
	}
	seen := map[string]bool{}
	for i, r := range p.Reads {
		path := fmt.Sprintf("reads[%d].path", i)
		n, err := normalizePath(r.Path, path)
		if err != nil {
			return p, err
		}
		if seen[n] {
			return p, epd.errf(path, "%s is read twice; read each path once", quote(n))
		}
		seen[n] = true
		out.Reads = append(out.Reads, FileRead{Path: n})
	}
	written := map[string]bool{}
	for i, w := range p.Writes {
		path := fmt.Sprintf("writes[%d]", i)
		n, err := normalizePath(w.Path, path+".path")
		if err != nil {
			return p, err
		}
		if seen[n] {
			return p, epd.errf(path+".path", "%s is also in reads; a call may not read and write one path (read it with read_text in the code instead)", quote(n))
		}
		if written[n] {
			return p, epd.errf(path+".path", "%s is written twice; write each path once", quote(n))
		}
		written[n] = true
		if c := utf8.RuneCountInString(w.Content); c > MaxWriteChars {
			return p, epd.errf(path+".content", "%d characters is too long; write at most %d", c, MaxWriteChars)
		}
		if !utf8.ValidString(w.Content) {
			return p, epd.errf(path+".content", "is not valid UTF-8; writes take text")
		}
		mode := w.Mode
		switch mode {
		case "":
			mode = ModeCreate
		case ModeCreate, ModeOverwrite, ModeAppend:
		default:
			return p, epd.errf(path+".mode", `%s is not a write mode; use "create" (the default: the file must not exist), "overwrite" or "append"`, quote(mode))
		}
		out.Writes = append(out.Writes, FileWrite{Path: n, Content: w.Content, Mode: mode})
	}
	return out, nil
}

// normalizePath applies the seed's path rules: relative, printable ASCII,
// no "." or ".." segments, at most MaxPathDepth segments of at most
// MaxSegmentChars; empty segments are dropped. evaluate_python.py repeats
// them for write_text and read_text.
func normalizePath(path, field string) (string, error) {
	s := strings.TrimSpace(path)
	if s == "" {
		return "", epd.errf(field, "empty; give a path relative to the session root, like \"data/notes.txt\"")
	}
	if strings.HasPrefix(s, "/") {
		return "", epd.errf(field, "%s is absolute; give a path relative to the session root, like \"data/notes.txt\"", quote(path))
	}
	var segs []string
	for _, seg := range strings.Split(s, "/") {
		switch {
		case seg == "":
			continue
		case seg == "." || seg == "..":
			return "", epd.errf(field, "%s has a %q segment; give a path inside the session root without . or ..", quote(path), seg)
		case len(seg) > MaxSegmentChars:
			return "", epd.errf(field, "%s has a segment of %d characters; use at most %d", quote(path), len(seg), MaxSegmentChars)
		}
		for _, r := range seg {
			if r < 0x20 || r > 0x7e {
				return "", epd.errf(field, "%s is not printable ASCII; use ASCII letters, digits and punctuation", quote(path))
			}
		}
		segs = append(segs, seg)
	}
	if len(segs) > MaxPathDepth {
		return "", epd.errf(field, "%s is %d segments deep; use at most %d", quote(path), len(segs), MaxPathDepth)
	}
	if len(segs) == 0 {
		return "", epd.errf(field, "%s names no file; give a path relative to the session root, like \"data/notes.txt\"", quote(path))
	}
	return strings.Join(segs, "/"), nil
}

// isIdentifier approximates Python's str.isidentifier.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || unicode.IsLetter(r) || (i > 0 && (unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r))) {
			continue
		}
		return false
	}
	return true
}

//go:embed evaluate_python.py
var evaluatePythonSource string

// resultMIME is the display type the guest side returns its result in;
// it has no text rendering, so it adds nothing to a cell's output.
const resultMIME = "application/vnd.wasmeval.evaluate-python+json"

// guestResult is what evaluate_python.py displays.
type guestResult struct {
	Nonce     string            `json:"nonce"`
	OK        bool              `json:"ok"`
	ValueRepr *string           `json:"value_repr"`
	Globals   map[string]string `json:"globals"`
	Writes    []FileWrite       `json:"writes"`
	Invalid   *struct {
		Path    string `json:"path"`
		Message string `json:"message"`
	} `json:"invalid"`
}

// RunEvaluatePython runs the call p in sess's Python, in a namespace of
// its own: a call sees the globals it is given and the reads, never the
// variables of earlier calls or of the session's py cells (asteval makes a
// fresh interpreter per call too); files are shared with the session.
// Writes (and write_text's) are applied only when the code ran to its end.
// A failure or timeout of the code is data in the result; an error is an
// *Error for an invalid call, or a failure of the host.
func RunEvaluatePython(ctx context.Context, sess Evaluator, p EvalParams, o EvalOptions) (*EvalResult, error) {
	np, err := p.normalized()
	if err != nil {
		return nil, err
	}
	var nonce [12]byte
	rand.Read(nonce[:])
	args := map[string]any{"code": np.Code, "globals": np.Globals, "reads": np.Reads, "writes": np.Writes, "nonce": hex.EncodeToString(nonce[:])}
	if np.Reads == nil {
		args["reads"] = []FileRead{}
	}
	if np.Writes == nil {
		args["writes"] = []FileWrite{}
	}
	argsJSON, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("profiles: evaluate_python: %w", err)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultEvaluatePythonTimeout
	}
	secs := min(int((timeout+time.Second-1)/time.Second), sandbox.MaxTimeoutSeconds)
	// exec() in a namespace of its own, so that the wrapper's names never
	// land in the session's __main__.
	code := fmt.Sprintf(`__import__("builtins").exec(__import__("base64").b64decode(%q).decode("utf-8"), {"__name__": "_wasmeval_evaluate_python", "_ARGS": %q, "_MIME": %q})`,
		base64.StdEncoding.EncodeToString([]byte(evaluatePythonSource)), base64.StdEncoding.EncodeToString(argsJSON), resultMIME)
	req := sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: code, Title: EvaluatePython, TimeoutSeconds: secs}}}

	var (
		mu             sync.Mutex
		stdout, stderr capped
		payload        string
	)
	outer := sandbox.EventFuncFrom(ctx)
	ctx = sandbox.WithEventFunc(ctx, func(ev sandbox.Event) {
		mu.Lock()
		switch ev.Kind {
		case sandbox.EventStdout:
			stdout.add(ev.Text)
		case sandbox.EventStderr:
			stderr.add(ev.Text)
		case sandbox.EventDisplay:
			if s, ok := ev.Bundle[resultMIME]; ok {
				payload = s
			}
		}
		mu.Unlock()
		if ev.Kind == sandbox.EventDisplay && ev.Bundle[resultMIME] != "" {
			return // the wrapper's result, not the code's output
		}
		if outer != nil {
			outer(ev)
		}
		if o.OnEvent != nil {
			o.OnEvent(ev)
		}
	})
	res, err := sess.Eval(ctx, req)
	if err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	out := &EvalResult{Stdout: stdout.text(), Stderr: stderr.text(), Globals: map[string]string{}, Reads: np.Reads, Writes: []FileWrite{}}
	if out.Reads == nil {
		out.Reads = []FileRead{}
	}
	var g guestResult
	if payload != "" {
		if err := json.Unmarshal([]byte(payload), &g); err != nil || g.Nonce != args["nonce"] {
			payload = "" // not ours
		}
	}
	if payload == "" {
		// The wrapper never got to its end: a timeout, a stop, or a
		// failure of the interpreter itself.
		cell := res.Details.Cells[0]
		switch {
		case cell.Status == sandbox.StatusCancelled:
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("profiles: evaluate_python: %w", err)
			}
			out.Stderr = capText(strings.TrimSpace(cell.Output))
		case strings.Contains(cell.Output, "timed out after"):
			out.Stderr = TimedOutMessage
		case out.Stderr == "":
			out.Stderr = capText(strings.TrimSpace(cell.Output))
		}
		if out.Stderr == "" {
			out.Stderr = "the evaluation ended without a result"
		}
		out.failed = true
		return out, nil
	}
	if g.Invalid != nil {
		return nil, epd.errf(g.Invalid.Path, "%s", g.Invalid.Message)
	}
	out.ValueRepr = g.ValueRepr
	if g.Globals != nil {
		out.Globals = g.Globals
	}
	if g.OK && g.Writes != nil {
		out.Writes = g.Writes
	}
	if !g.OK {
		out.failed = true
		out.ValueRepr = nil
		if len(g.Writes) > 0 {
			out.Writes = g.Writes
		}
		if out.Stderr == "" {
			out.Stderr = "the evaluation failed"
		}
	}
	return out, nil
}

// capped collects a stream up to a bound, remembering that there was more.
type capped struct {
	b    strings.Builder
	more bool
}

func (c *capped) add(s string) {
	const keep = MaxStreamChars * 4 // bytes: enough for MaxStreamChars runes
	if room := keep - c.b.Len(); len(s) > room {
		s, c.more = s[:max(room, 0)], true
	}
	c.b.WriteString(s)
}

func (c *capped) text() string {
	if !c.more {
		return capText(c.b.String())
	}
	r := []rune(strings.ToValidUTF8(c.b.String(), "\uFFFD"))
	return string(r[:min(len(r), MaxStreamChars-3)]) + "..."
}

// capText cuts s to MaxStreamChars characters, the last three "...", as
// the seed does.
func capText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= MaxStreamChars {
		return s
	}
	r := []rune(s)
	return string(r[:MaxStreamChars-3]) + "..."
}
