package profiles

import (
	"bytes"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wasmeval/wasmeval/sandbox"
)

// Limits and defaults of the code_interpreter profile.
const (
	// DefaultCodeTimeoutMs bounds a run that gives no timeoutMs.
	DefaultCodeTimeoutMs = sandbox.DefaultTimeoutSeconds * 1000
	// MaxCodeTimeoutMs is the longest timeoutMs.
	MaxCodeTimeoutMs = sandbox.MaxTimeoutSeconds * 1000
	// MaxResultJSONBytes is the longest JSON a result value may have;
	// a longer one is given as its repr.
	MaxResultJSONBytes = 1 << 20
)

// CodeLanguages are the languages code_interpreter accepts, as the seed
// names them, with wasmeval's short names after.
var CodeLanguages = []string{"python", "javascript", "typescript", "py", "js", "ts"}

// CodeRunParams is a runCode call (seed: runCode(language, code, {timeoutMs})).
type CodeRunParams struct {
	// Language is "python", "javascript" or "typescript" (or "py", "js",
	// "ts").
	Language string `json:"language"`
	// Code is the source to run.
	Code string `json:"code"`
	// TimeoutMs bounds the run, in milliseconds (1..MaxCodeTimeoutMs);
	// zero means DefaultCodeTimeoutMs.
	TimeoutMs int `json:"timeoutMs,omitempty"`
}

// CodeContextParams is a createContext call: the context's language
// (required, as the seed's createContext(language)), and optionally its
// working folder.
type CodeContextParams struct {
	// Language is the context's language, as CodeRunParams.Language.
	Language string `json:"language"`
	// Cwd, for a Python context, is its working folder: a relative path
	// inside the context's own folder, made when missing.
	Cwd string `json:"cwd,omitempty"`
	// Python, for a Python context, is its Python backend: "wasm" (the
	// CPython sandbox) or "jupyter" (a native kernel), where the operator
	// lets sessions choose (--python-backend-choice), as serve's POST
	// /v1/sessions {"python": ...}; empty means the operator's
	// --python-backend. wasmeval's addition.
	Python string `json:"python,omitempty"`
}

// CodeRunInParams is a runInContext call.
type CodeRunInParams struct {
	// ContextID is what createContext returned.
	ContextID string `json:"contextId"`
	// Code is the source to run, in the context's language.
	Code string `json:"code"`
	// TimeoutMs is as CodeRunParams.TimeoutMs.
	TimeoutMs int `json:"timeoutMs,omitempty"`
}

// CodeResult is a run's result, the seed's RunCodeResult.
type CodeResult struct {
	// Outputs are the run's outputs in order.
	Outputs []CodeOutput `json:"outputs"`
	// ExitCode is 0 when the code ran to its end, 1 otherwise.
	ExitCode int `json:"exitCode"`
	// Error says why the code failed, like "NameError: name 'x' is not
	// defined"; omitted when it did not.
	Error string `json:"error,omitempty"`
}

// Failed reports whether the run failed.
func (r *CodeResult) Failed() bool { return r.ExitCode != 0 }

// CodeOutput is one output chunk, the seed's CodeOutput: {type: "stdout"
// or "stderr", text}, {type: "display", mime, data} (data in base64, as
// the seed's run_code tool serializes it) or {type: "result", value} (the
// last expression's JSON value, or its repr as a string when JSON cannot
// hold it).
type CodeOutput struct {
	Type  string
	Text  string
	MIME  string
	Data  string
	Value json.RawMessage
}

// MarshalJSON writes the fields of the chunk's type only (with <, > and &
// as they are: the text is code's output).
func (o CodeOutput) MarshalJSON() ([]byte, error) {
	var v any
	switch o.Type {
	case "display":
		v = struct {
			Type string `json:"type"`
			MIME string `json:"mime"`
			Data string `json:"data"`
		}{o.Type, o.MIME, o.Data}
	case "result":
		val := o.Value
		if len(val) == 0 {
			val = json.RawMessage("null")
		}
		v = struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		}{o.Type, val}
	default:
		v = struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{o.Type, o.Text}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (o *CodeOutput) UnmarshalJSON(b []byte) error {
	var raw struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		MIME  string          `json:"mime"`
		Data  string          `json:"data"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*o = CodeOutput{Type: raw.Type, Text: raw.Text, MIME: raw.MIME, Data: raw.Data, Value: raw.Value}
	return nil
}

// CodeContextCreated is createContext's result.
type CodeContextCreated struct {
	ContextID string `json:"contextId"`
}

// CodeContextDeleted is deleteContext's result.
type CodeContextDeleted struct {
	OK bool `json:"ok"`
}

var cid = decoder{profile: CodeInterpreter}

const (
	runCodeExample   = `{"language":"python","code":"print(6 * 7)","timeoutMs":5000}`
	createExample    = `{"language":"python"}`
	runInExample     = `{"contextId":"ctx-...","code":"x + 1","timeoutMs":5000}`
	deleteExample    = `{"contextId":"ctx-..."}`
	languageUse      = `use "python" (or "py"), "javascript" (or "js") or "typescript" (or "ts")`
	contextIDUse     = `give the contextId that createContext returned`
	timeoutMsUseText = "give a whole number of milliseconds from 1 to 600000 (default 30000)"
)

// codeLanguage maps a seed language name to the cell language.
func codeLanguage(path, lang string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(lang)) {
	case "python", "py", "python3":
		return "py", nil
	case "javascript", "js", "node":
		return "js", nil
	case "typescript", "ts":
		return "ts", nil
	case "":
		return "", cid.errf(path, "empty; %s", languageUse)
	}
	msg := fmt.Sprintf("%s is not a language here; %s", quote(lang), languageUse)
	if best := sandbox.ClosestName(strings.ToLower(lang), CodeLanguages); best != "" {
		msg = fmt.Sprintf("%s is not a language here (did you mean %q?); %s", quote(lang), best, languageUse)
	}
	return "", cid.errf(path, "%s", msg)
}

// timeoutMs reads timeoutMs. The seed's runs have no other timeout:
// refusedFields has already refused the seconds of older shapes.
func (d decoder) timeoutMs(m map[string]json.RawMessage) (int, error) {
	ms, hasMs := m["timeoutMs"]
	if !hasMs || kind(ms) == "null" {
		return 0, nil
	}
	var n float64
	if kind(ms) != "number" || json.Unmarshal(ms, &n) != nil {
		return 0, d.errf("timeoutMs", "must be a number, not %s; %s", describe(ms), timeoutMsUseText)
	}
	if n != math.Trunc(n) || n < 1 || n > MaxCodeTimeoutMs {
		return 0, d.errf("timeoutMs", "%s is out of range; %s", strconv.FormatFloat(n, 'f', -1, 64), timeoutMsUseText)
	}
	return int(n), nil
}

// oldFields are fields of wasmeval's earlier code-context shapes that the
// CodeInterpreter interface does not have, with what to give instead.
var oldFields = map[string]string{
	"timeout": `the CodeInterpreter interface times runs in milliseconds: give timeoutMs, a whole number of milliseconds from 1 to 600000 (default 30000), like "timeoutMs": 5000`,
	"id":      `the CodeInterpreter interface names a context contextId: give "contextId" with the id createContext returned`,
}

// refusedFields refuses the fields of m outside known: an older shape's
// field with what the interface has instead, any other as unknown.
func (d decoder) refusedFields(m map[string]json.RawMessage, known []string) *Error {
	for _, k := range []string{"id", "timeout"} {
		if _, ok := m[k]; ok && !contains(known, k) {
			return d.errf(k, "not a field here: %s; the fields are %s", oldFields[k], strings.Join(known, ", "))
		}
	}
	return d.fields(m, "", known)
}

func (d decoder) code(m map[string]json.RawMessage, example string) (string, error) {
	code, ok, err := d.str(m, "", "code", "give the code to run as a string")
	if err != nil {
		return "", err
	}
	if !ok {
		return "", d.errf("code", "missing; give the code to run, like %s", example)
	}
	if strings.TrimSpace(code) == "" {
		return "", d.errf("code", "empty; give the code to run")
	}
	return code, nil
}

func (d decoder) contextID(m map[string]json.RawMessage, example string) (string, error) {
	if _, ok := m["contextId"]; !ok {
		return "", d.errf("contextId", "missing; %s, like %s", contextIDUse, example)
	}
	id, _, err := d.str(m, "", "contextId", contextIDUse)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(id) == "" {
		return "", d.errf("contextId", "empty; %s", contextIDUse)
	}
	return id, nil
}

// DecodeRunCode parses a runCode call. Errors are *Error.
func DecodeRunCode(data []byte) (CodeRunParams, error) {
	m, perr := cid.top(data, runCodeExample)
	if perr != nil {
		return CodeRunParams{}, perr
	}
	var err error
	if err := cid.refusedFields(m, []string{"language", "code", "timeoutMs"}); err != nil {
		return CodeRunParams{}, err
	}
	var p CodeRunParams
	lang, ok, serr := cid.str(m, "", "language", languageUse)
	if serr != nil {
		return p, serr
	}
	if !ok {
		return p, cid.errf("language", "missing; %s, like %s", languageUse, runCodeExample)
	}
	if _, err := codeLanguage("language", lang); err != nil {
		return p, err
	}
	p.Language = lang
	if p.Code, err = cid.code(m, runCodeExample); err != nil {
		return p, err
	}
	p.TimeoutMs, err = cid.timeoutMs(m)
	return p, err
}

// DecodeCreateContext parses a createContext call. Errors are *Error.
func DecodeCreateContext(data []byte) (CodeContextParams, error) {
	m, perr := cid.top(data, createExample)
	if perr != nil {
		return CodeContextParams{}, perr
	}
	if err := cid.refusedFields(m, createFields); err != nil {
		return CodeContextParams{}, err
	}
	var p CodeContextParams
	lang, ok, serr := cid.str(m, "", "language", languageUse)
	if serr != nil {
		return p, serr
	}
	if !ok {
		return p, cid.errf("language", "missing; a context runs one language, named when it is created: %s, like %s", languageUse, createExample)
	}
	l, err := codeLanguage("language", lang)
	if err != nil {
		return p, err
	}
	p.Language = lang
	if p.Cwd, _, serr = cid.str(m, "", "cwd", `give a folder inside the context's folder, like "work"`); serr != nil {
		return p, serr
	}
	if p.Cwd != "" {
		if l != "py" {
			return p, cid.errf("cwd", "a %s context has no working folder to set (JavaScript here cannot change directory); leave cwd out, or make a python context", lang)
		}
		n, err := normalizePath(p.Cwd, "cwd")
		if err != nil {
			var pe *Error
			if errors.As(err, &pe) {
				pe.Profile = CodeInterpreter
			}
			return p, err
		}
		p.Cwd = n
	}
	if p.Python, _, serr = cid.str(m, "", "python", pythonUse); serr != nil {
		return p, serr
	}
	return p, checkContextPython(p.Python, l, lang)
}

// createFields are createContext's fields: the seed's language, and
// wasmeval's cwd and python.
var createFields = []string{"language", "cwd", "python"}

const pythonUse = `use "wasm" or "jupyter" (a python context's backend, where the operator lets sessions choose: --python-backend-choice), or leave python out for the operator's default`

// checkContextPython checks createContext's python for a context of
// language l (named lang in the call).
func checkContextPython(python, l, lang string) error {
	switch {
	case python == "":
		return nil
	case !slices.Contains(sandbox.PythonBackends(), python):
		return cid.errf("python", "%s is not a Python backend; %s", quote(python), pythonUse)
	case l != "py":
		return cid.errf("python", "a %s context runs no Python, so it has no Python backend to choose; leave python out, or make a python context", lang)
	}
	return nil
}

// DecodeRunInContext parses a runInContext call. Errors are *Error.
func DecodeRunInContext(data []byte) (CodeRunInParams, error) {
	m, perr := cid.top(data, runInExample)
	if perr != nil {
		return CodeRunInParams{}, perr
	}
	var err error
	if _, ok := m["language"]; ok {
		return CodeRunInParams{}, cid.errf("language", "not a field here: a context runs the language it was created with (createContext's language); leave language out, or create a context of the other language")
	}
	if err := cid.refusedFields(m, []string{"contextId", "code", "timeoutMs"}); err != nil {
		return CodeRunInParams{}, err
	}
	var p CodeRunInParams
	if p.ContextID, err = cid.contextID(m, runInExample); err != nil {
		return p, err
	}
	if p.Code, err = cid.code(m, runInExample); err != nil {
		return p, err
	}
	p.TimeoutMs, err = cid.timeoutMs(m)
	return p, err
}

// DecodeDeleteContext parses a deleteContext call and returns its
// contextId. Errors are *Error.
func DecodeDeleteContext(data []byte) (string, error) {
	m, perr := cid.top(data, deleteExample)
	if perr != nil {
		return "", perr
	}
	if err := cid.refusedFields(m, []string{"contextId"}); err != nil {
		return "", err
	}
	return cid.contextID(m, deleteExample)
}

// RunCode runs p statelessly: in a fresh interpreter in a temporary folder
// (env.NewSession), dropped after. A failure or timeout of the code is
// data in the result.
func RunCode(ctx context.Context, env *Env, p CodeRunParams) (*CodeResult, error) {
	lang, err := codeLanguage("language", p.Language)
	if err != nil {
		return nil, err
	}
	if p.TimeoutMs < 0 || p.TimeoutMs > MaxCodeTimeoutMs {
		return nil, cid.errf("timeoutMs", "%d is out of range; %s", p.TimeoutMs, timeoutMsUseText)
	}
	if env == nil || env.NewSession == nil {
		return nil, fmt.Errorf("profiles: code_interpreter: runCode: this face cannot start a fresh interpreter")
	}
	if env.Admit != nil {
		done, err := env.Admit()
		if err != nil {
			return nil, err
		}
		defer done()
	}
	s, err := env.NewSession(ctx, "")
	if err != nil {
		return nil, err
	}
	defer s.Close(context.WithoutCancel(ctx))
	if err := warm(ctx, s.Eval, lang); err != nil {
		return nil, err
	}
	return runCodeIn(ctx, s.Eval, lang, p.Code, p.TimeoutMs)
}

// CreateContext makes a code context in env.Contexts and returns its id.
func CreateContext(ctx context.Context, env *Env, p CodeContextParams) (*CodeContextCreated, error) {
	if strings.TrimSpace(p.Language) == "" {
		return nil, cid.errf("language", "missing; a context runs one language, named when it is created: %s, like %s", languageUse, createExample)
	}
	lang, err := codeLanguage("language", p.Language)
	if err != nil {
		return nil, err
	}
	if p.Cwd != "" && lang != "py" {
		return nil, cid.errf("cwd", "a %s context has no working folder to set (JavaScript here cannot change directory); leave cwd out, or make a python context", p.Language)
	}
	if err := checkContextPython(p.Python, lang, p.Language); err != nil {
		return nil, err
	}
	if env == nil || env.Contexts == nil {
		return nil, cid.errf("", "this face keeps no code contexts; use runCode")
	}
	id, err := env.Contexts.CreateContext(ctx, ContextOptions{Language: lang, PythonBackend: p.Python})
	if errors.Is(err, sandbox.ErrBadPythonBackend) {
		// As serve's POST /v1/sessions says it.
		return nil, cid.errf("python", "%s", strings.TrimPrefix(err.Error(), sandbox.ErrBadPythonBackend.Error()+": "))
	}
	if err != nil {
		return nil, err
	}
	if err := warm(ctx, func(ctx context.Context, req sandbox.Request) (*sandbox.Result, error) {
		return env.Contexts.EvalInContext(ctx, id, req)
	}, lang); err != nil {
		env.Contexts.DeleteContext(context.WithoutCancel(ctx), id)
		return nil, err
	}
	if p.Cwd != "" {
		// The context's folder starts empty: make the folder and move there.
		code := fmt.Sprintf("__import__('os').makedirs(%s, exist_ok=True); __import__('os').chdir(%s)", strconv.Quote(p.Cwd), strconv.Quote(p.Cwd))
		res, err := env.Contexts.EvalInContext(ctx, id, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: code, Title: "context cwd"}}})
		if err == nil && res.Details.Cells[0].Status != sandbox.StatusComplete {
			err = cid.errf("cwd", "%s cannot be the context's folder: %s", quote(p.Cwd), strings.TrimSpace(lastLine(res.Details.Cells[0].Output)))
		}
		if err != nil {
			env.Contexts.DeleteContext(context.WithoutCancel(ctx), id)
			return nil, err
		}
	}
	return &CodeContextCreated{ContextID: id}, nil
}

// RunInContext runs p in its context: the state of earlier runs is there.
func RunInContext(ctx context.Context, env *Env, p CodeRunInParams) (*CodeResult, error) {
	if env == nil || env.Contexts == nil {
		return nil, cid.errf("", "this face keeps no code contexts; use runCode")
	}
	if p.TimeoutMs < 0 || p.TimeoutMs > MaxCodeTimeoutMs {
		return nil, cid.errf("timeoutMs", "%d is out of range; %s", p.TimeoutMs, timeoutMsUseText)
	}
	lang, err := env.Contexts.ContextLanguage(p.ContextID)
	if err != nil {
		return nil, contextError(err, p.ContextID)
	}
	if lang == "" {
		// A context made through ContextHost directly, without a language.
		return nil, cid.errf("contextId", "%s was made without a language, so it cannot run code; create one with createContext({language})", quote(p.ContextID))
	}
	res, err := runCodeIn(ctx, func(ctx context.Context, req sandbox.Request) (*sandbox.Result, error) {
		return env.Contexts.EvalInContext(ctx, p.ContextID, req)
	}, lang, p.Code, p.TimeoutMs)
	if err != nil {
		return nil, contextError(err, p.ContextID)
	}
	return res, nil
}

// DeleteContext deletes context id.
func DeleteContext(ctx context.Context, env *Env, id string) (*CodeContextDeleted, error) {
	if env == nil || env.Contexts == nil {
		return nil, cid.errf("", "this face keeps no code contexts")
	}
	if err := env.Contexts.DeleteContext(ctx, id); err != nil {
		return nil, contextError(err, id)
	}
	return &CodeContextDeleted{OK: true}, nil
}

// warm starts the interpreter of lang with a cell that does nothing, so
// that a run's timeoutMs counts the code's time, not the interpreter's
// start. Its failure (a language disabled here, say) is the run's to
// report, not this one's.
func warm(ctx context.Context, eval func(context.Context, sandbox.Request) (*sandbox.Result, error), lang string) error {
	// Python's gives its cell number back, so the code's first cell is
	// <cell-1> in tracebacks.
	code := `__import__("sys").modules["_wasmeval_prelude"]._cell_count -= 1`
	if lang != "py" {
		code = ";"
	}
	_, err := eval(sandbox.WithEventFunc(ctx, func(sandbox.Event) {}), sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: code, Title: "start"}}})
	return err
}

// contextError says that a context is unknown as an *Error.
func contextError(err error, id string) error {
	if errors.Is(err, ErrNoContext) {
		return cid.errf("contextId", "no such code context %s (never created, deleted, evicted after being idle, or not yours); create one with createContext (create_code_context)", quote(id))
	}
	return err
}

//go:embed code_value.py
var codeValueSource string

const valueMIME = "application/vnd.wasmeval.code-value+json"

// errCodeTimeout is the cause of a run's timeoutMs deadline.
var errCodeTimeout = errors.New("profiles: code_interpreter: timeoutMs")

// runCodeIn runs code as one cell through eval, with a deadline of
// timeoutMs, and collects its events as a CodeResult.
func runCodeIn(ctx context.Context, eval func(context.Context, sandbox.Request) (*sandbox.Result, error), lang, code string, timeoutMs int) (*CodeResult, error) {
	if timeoutMs == 0 {
		timeoutMs = DefaultCodeTimeoutMs
	}
	runCtx, cancel := context.WithTimeoutCause(ctx, time.Duration(timeoutMs)*time.Millisecond, errCodeTimeout)
	defer cancel()
	var (
		mu      sync.Mutex
		outs    []CodeOutput
		stderr  strings.Builder
		result  = -1 // index of the result chunk in outs
		resText string
		size    int
	)
	add := func(o CodeOutput) {
		n := len(o.Text) + len(o.Data) + len(o.Value)
		if size+n > sandbox.MaxExecutionOutputBytes {
			return
		}
		size += n
		if k := len(outs) - 1; k >= 0 && (o.Type == "stdout" || o.Type == "stderr") && outs[k].Type == o.Type {
			outs[k].Text += o.Text
			return
		}
		outs = append(outs, o)
	}
	outer := sandbox.EventFuncFrom(ctx)
	runCtx = sandbox.WithEventFunc(runCtx, func(ev sandbox.Event) {
		if outer != nil {
			outer(ev)
		}
		mu.Lock()
		defer mu.Unlock()
		switch ev.Kind {
		case sandbox.EventStdout, sandbox.EventStderr:
			if ev.Kind == sandbox.EventStderr && stderr.Len() < 1<<20 {
				stderr.WriteString(ev.Text)
			}
			add(CodeOutput{Type: string(ev.Kind), Text: ev.Text})
		case sandbox.EventDisplay:
			for _, mime := range sortedMIMEs(ev.Bundle) {
				add(CodeOutput{Type: "display", MIME: mime, Data: mimeData(mime, ev.Bundle[mime])})
			}
		case sandbox.EventResult:
			for _, mime := range sortedMIMEs(ev.Bundle) {
				if mime != "text/plain" {
					add(CodeOutput{Type: "display", MIME: mime, Data: mimeData(mime, ev.Bundle[mime])})
				}
			}
			resText = ev.Bundle["text/plain"]
			add(CodeOutput{Type: "result"})
			result = len(outs) - 1
			if outs[result].Type != "result" {
				result = -1 // over the output cap
			}
		}
	})
	secs := max(1, (timeoutMs+999)/1000)
	captured := false
	if lang == "js" {
		code, captured = captureJSValue(code) // jsvalue.go
	}
	res, err := eval(runCtx, sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: code, TimeoutSeconds: secs}}})
	timedOut := ctx.Err() == nil && errors.Is(context.Cause(runCtx), errCodeTimeout)
	if err != nil && !(timedOut && errors.Is(err, context.DeadlineExceeded)) {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	out := &CodeResult{Outputs: outs}
	if out.Outputs == nil {
		out.Outputs = []CodeOutput{}
	}
	var cell sandbox.CellResult
	if res != nil {
		cell = res.Details.Cells[0]
	} else {
		cell.Status = sandbox.StatusCancelled
	}
	switch {
	case cell.Status == sandbox.StatusComplete:
	case timedOut:
		out.ExitCode, out.Error = 1, fmt.Sprintf("timed out after %d ms (timeoutMs)", timeoutMs)
	case cell.Status == sandbox.StatusCancelled:
		out.ExitCode, out.Error = 1, "the run was cancelled"
	default:
		out.ExitCode, out.Error = 1, errorText(cell, stderr.String())
	}
	if result >= 0 {
		v := json.RawMessage(nil)
		if cell.Status == sandbox.StatusComplete {
			switch {
			case lang == "py":
				mu.Unlock()
				v = pythonValue(ctx, eval)
				mu.Lock()
			case captured:
				mu.Unlock()
				real, ok := jsRealValue(ctx, eval)
				mu.Lock()
				if ok {
					v = real // nil: JSON cannot hold it as it is; its repr
					break
				}
				v = jsValue(resText)
			default:
				// TypeScript, and code this package does not parse (the
				// runtime lowers it first): read back from the text.
				v = jsValue(resText)
			}
		}
		if v == nil {
			v, _ = json.Marshal(resText)
		}
		out.Outputs[result].Value = v
	}
	return out, nil
}

// pythonValue asks the interpreter for the JSON of the last value (in
// builtins._); nil when it has none.
func pythonValue(ctx context.Context, eval func(context.Context, sandbox.Request) (*sandbox.Result, error)) json.RawMessage {
	var nonce [12]byte
	rand.Read(nonce[:])
	n := hex.EncodeToString(nonce[:])
	code := fmt.Sprintf(`__import__("builtins").exec(__import__("base64").b64decode(%q).decode("utf-8"), {"__name__": "_wasmeval_code_value", "_MIME": %q, "_NONCE": %q, "_MAX": %d})`,
		base64.StdEncoding.EncodeToString([]byte(codeValueSource)), valueMIME, n, MaxResultJSONBytes)
	var mu sync.Mutex
	var payload string
	vctx := sandbox.WithEventFunc(context.WithoutCancel(ctx), func(ev sandbox.Event) {
		if s, ok := ev.Bundle[valueMIME]; ok && ev.Kind == sandbox.EventDisplay {
			mu.Lock()
			payload = s
			mu.Unlock()
		}
	})
	vctx, cancel := context.WithTimeout(vctx, 10*time.Second)
	defer cancel()
	if _, err := eval(vctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: code, Title: "result value", TimeoutSeconds: 10}}}); err != nil {
		return nil
	}
	mu.Lock()
	defer mu.Unlock()
	var g struct {
		Nonce string  `json:"nonce"`
		JSON  *string `json:"json"`
	}
	if json.Unmarshal([]byte(payload), &g) != nil || g.Nonce != n || g.JSON == nil || !json.Valid([]byte(*g.JSON)) {
		return nil
	}
	return json.RawMessage(*g.JSON)
}

// jsValue reads the JSON value of a JavaScript result back from its
// inspected text (for TypeScript, and code captureJSValue cannot rewrite), when that text is plain data JSON holds (numbers,
// strings, booleans, null, and arrays and plain objects of them, as
// inspect writes them: `{ a: [ 1, 'x' ] }`); nil otherwise (an instance,
// a function, a value inspect cut short), and the result is its text.
func jsValue(text string) json.RawMessage {
	p := &jsParser{s: strings.TrimSpace(text)}
	if !p.value(0) || p.i != len(p.s) {
		return nil
	}
	out := json.RawMessage(p.out.String())
	if !json.Valid(out) {
		return nil
	}
	return out
}

// jsParser reads inspected JavaScript data, writing its JSON to out.
type jsParser struct {
	s   string
	i   int
	out strings.Builder
}

func (p *jsParser) ws() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *jsParser) value(depth int) bool {
	if depth > 64 {
		return false
	}
	p.ws()
	if p.i >= len(p.s) {
		return false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.composite('{', '}', depth, true)
	case c == '[':
		return p.composite('[', ']', depth, false)
	case c == '\'' || c == '"':
		s, ok := p.str()
		if !ok {
			return false
		}
		b, _ := json.Marshal(s)
		p.out.Write(b)
		return true
	}
	for _, lit := range []string{"true", "false", "null"} {
		if strings.HasPrefix(p.s[p.i:], lit) {
			p.i += len(lit)
			p.out.WriteString(lit)
			return true
		}
	}
	if m := jsNumberPrefix.FindString(p.s[p.i:]); m != "" {
		p.i += len(m)
		if p.i < len(p.s) && (p.s[p.i] == 'n' || isIdentByte(p.s[p.i])) {
			return false // a BigInt, or not a number
		}
		p.out.WriteString(m)
		return true
	}
	return false
}

// composite reads an array or a plain object.
func (p *jsParser) composite(open, close byte, depth int, object bool) bool {
	p.i++
	p.out.WriteByte(open)
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == close {
		p.i++
		p.out.WriteByte(close)
		return true
	}
	for n := 0; ; n++ {
		if n > 0 {
			p.out.WriteByte(',')
		}
		if object {
			p.ws()
			var key string
			switch {
			case p.i < len(p.s) && (p.s[p.i] == '\'' || p.s[p.i] == '"'):
				k, ok := p.str()
				if !ok {
					return false
				}
				key = k
			default:
				start := p.i
				for p.i < len(p.s) && isIdentByte(p.s[p.i]) {
					p.i++
				}
				if p.i == start || p.s[start] >= '0' && p.s[start] <= '9' {
					return false
				}
				key = p.s[start:p.i]
			}
			p.ws()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return false
			}
			p.i++
			b, _ := json.Marshal(key)
			p.out.Write(b)
			p.out.WriteByte(':')
		}
		if !p.value(depth + 1) {
			return false
		}
		p.ws()
		if p.i >= len(p.s) {
			return false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case close:
			p.i++
			p.out.WriteByte(close)
			return true
		default:
			return false
		}
	}
}

// str reads a quoted string.
func (p *jsParser) str() (string, bool) {
	q := p.s[p.i]
	for j := p.i + 1; j < len(p.s); j++ {
		switch p.s[j] {
		case '\\':
			j++
		case q:
			s, ok := unquoteJS(p.s[p.i+1 : j])
			p.i = j + 1
			return s, ok
		}
	}
	return "", false
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

var jsNumberPrefix = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`)

// unquoteJS undoes the escapes of an inspected JavaScript string.
func unquoteJS(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			return "", false
		}
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '0':
			b.WriteByte(0)
		case '\\', '\'', '"', '`':
			b.WriteByte(s[i])
		case 'x':
			if i+3 > len(s) {
				return "", false
			}
			n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", false
			}
			b.WriteRune(rune(n))
			i += 2
		case 'u':
			if i+5 > len(s) {
				return "", false
			}
			n, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", false
			}
			b.WriteRune(rune(n))
			i += 4
		default:
			return "", false
		}
	}
	return b.String(), true
}

func sortedMIMEs(bundle map[string]string) []string {
	var out []string
	for k := range bundle {
		if strings.HasPrefix(k, "application/vnd.wasmeval.") {
			continue // the profiles' own bundles
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// mimeData is a display's data as the seed's run_code tool serializes
// it: base64 of its bytes. Images other than SVG are base64 already.
func mimeData(mime, data string) string {
	if strings.HasPrefix(mime, "image/") && mime != "image/svg+xml" {
		return data
	}
	return base64.StdEncoding.EncodeToString([]byte(data))
}

var errLine = regexp.MustCompile(`^(?:Uncaught )?((?:[A-Za-z_]\w*\.)*[A-Z]\w*): (.*)$`)

// errorText names a failure from its error output's last "Name: message"
// line, like "NameError: name 'x' is not defined".
func errorText(cell sandbox.CellResult, stderr string) string {
	text := stderr
	if strings.TrimSpace(text) == "" {
		text = cell.Output
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if m := errLine.FindStringSubmatch(strings.TrimSpace(lines[i])); m != nil {
			return m[1] + ": " + m[2]
		}
	}
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return "the code failed"
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
