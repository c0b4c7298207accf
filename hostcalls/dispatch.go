package hostcalls

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wasmeval/wasmeval/internal/redact"
)

// Default caps of a Dispatcher; DispatcherOptions overrides them. The
// caps of write and read are also bounded by the session's memory limit
// (see the package documentation, # Memory).
const (
	DefaultMaxWriteBytes   = 64 << 20 // content of one write or append
	DefaultMaxReadBytes    = 16 << 20 // text one read returns
	DefaultMaxToolArgBytes = 1 << 20  // a tool's JSON arguments
	DefaultMaxPromptBytes  = 4 << 20  // prompt + system + context + schema of llm or agent
)

// DispatcherOptions configure a Dispatcher. The zero value gives the
// default caps and disk quota, no agent nesting yet (depth 0) and "the
// Host" as the name of a missing Host in error messages.
type DispatcherOptions struct {
	// MemoryLimitBytes is the session's memory limit (its guest's cap);
	// host calls hold at most half of it while served and runtimes at most
	// half for calls in flight (CallBudget), and the default caps of read
	// and write shrink with it. Zero means DefaultMemoryLimitBytes.
	MemoryLimitBytes int64
	// MaxWriteBytes caps the content of one write or append. Zero means
	// DefaultMaxWriteBytes or an eighth of MemoryLimitBytes, whichever is
	// less.
	MaxWriteBytes int
	// MaxReadBytes caps the text one read returns. Zero means
	// DefaultMaxReadBytes or a sixteenth of MemoryLimitBytes, whichever is
	// less.
	MaxReadBytes int
	// DiskQuotaBytes and DiskQuotaFiles cap what the session root holds
	// (see DiskQuota): zero means DefaultDiskQuotaBytes and
	// DefaultDiskQuotaFiles, a negative value no cap.
	DiskQuotaBytes, DiskQuotaFiles int64
	// MaxToolArgBytes caps the JSON arguments of one tool call.
	MaxToolArgBytes int
	// MaxPromptBytes caps the text of one llm or agent call.
	MaxPromptBytes int
	// AgentDepth is the depth of the agent whose cells this dispatcher
	// serves: 0 for a top-level session. See AgentRequest.Depth.
	AgentDepth int
	// HostSetting names where a Host would be configured, for the error
	// when there is none (for example "sandbox.Options.Host").
	HostSetting string
	// Outputs returns the full text of a cut output by its id (the
	// session's store), for the output op; nil makes output fail. Its error
	// is shown to the guest after "output('ID'): ", so it should say why
	// the id is unknown.
	Outputs func(id string) (string, error)
}

// Dispatcher answers one session's host calls (the Call of a runtime
// instance): it decodes a request, checks it against its caps and serves
// it from the confined filesystem or the Host. It is safe for concurrent
// use.
type Dispatcher struct {
	fs   *FS
	host Host
	opts DispatcherOptions

	work        *pool       // what calls hold while served
	budget      *CallBudget // what the runtime holds for calls in flight
	agents      agentOutputs
	maxRequest  int64
	maxResponse int64
}

// NewDispatcher returns a Dispatcher for the session root dir (an absolute
// path to a directory). host may be nil: tool, llm and agent then fail with
// a message that says so.
func NewDispatcher(dir string, host Host, opts DispatcherOptions) (*Dispatcher, error) {
	if opts.MemoryLimitBytes < 0 {
		return nil, fmt.Errorf("hostcalls: DispatcherOptions.MemoryLimitBytes is %d; give a positive number of bytes, or zero for the default", opts.MemoryLimitBytes)
	}
	if opts.MemoryLimitBytes == 0 {
		opts.MemoryLimitBytes = DefaultMemoryLimitBytes
	}
	// Half the limit for calls being served, half for calls in flight in
	// the runtime; never less than a few MiB, so that small limits still
	// let ordinary calls through.
	share := max(opts.MemoryLimitBytes/2, 4<<20)
	if opts.MaxWriteBytes <= 0 {
		opts.MaxWriteBytes = int(min(DefaultMaxWriteBytes, share/4))
	}
	if opts.MaxReadBytes <= 0 {
		opts.MaxReadBytes = int(min(DefaultMaxReadBytes, share/8))
	}
	if opts.MaxToolArgBytes <= 0 {
		opts.MaxToolArgBytes = DefaultMaxToolArgBytes
	}
	if opts.MaxPromptBytes <= 0 {
		opts.MaxPromptBytes = DefaultMaxPromptBytes
	}
	if opts.AgentDepth < 0 || opts.AgentDepth > MaxAgentDepth {
		return nil, fmt.Errorf("hostcalls: DispatcherOptions.AgentDepth is %d; give 0..%d", opts.AgentDepth, MaxAgentDepth)
	}
	if opts.HostSetting == "" {
		opts.HostSetting = "no Host was given"
	}
	quota, err := NewDiskQuota(dir, opts.DiskQuotaBytes, opts.DiskQuotaFiles)
	if err != nil {
		return nil, err
	}
	f, err := OpenFS(dir)
	if err != nil {
		return nil, err
	}
	f.maxRead = int64(opts.MaxReadBytes)
	f.quota = quota
	d := &Dispatcher{fs: f, host: host, opts: opts, work: &pool{size: share}}
	// A request is held twice while served (its bytes and the decoded
	// strings): at most half the pool. A write's content may grow by up to
	// 6x as JSON (\u0000), hence the margin over MaxWriteBytes.
	d.maxRequest = min(6*int64(opts.MaxWriteBytes)+1<<20, share/2-callOverhead)
	// An answer's text may grow by escapes as JSON; past twice the read
	// cap it is refused (read less at once).
	d.maxResponse = 2*int64(opts.MaxReadBytes) + callOverhead
	d.budget = NewCallBudget(share, d.maxResponse)
	return d, nil
}

// FS returns the dispatcher's confined filesystem.
func (d *Dispatcher) FS() *FS { return d.fs }

// DiskQuota returns the session's disk quota, which the dispatcher's file
// helpers keep; give it to the runtime whose guest writes files directly
// (runtimes.InstanceOptions.DiskQuota), so that both count against it.
func (d *Dispatcher) DiskQuota() *DiskQuota { return d.fs.quota }

// CallBudget returns the budget for the host calls a runtime holds in
// flight (runtimes.InstanceOptions.CallBudget).
func (d *Dispatcher) CallBudget() *CallBudget { return d.budget }

// Close closes the session root.
func (d *Dispatcher) Close() error { return d.fs.Close() }

// request is every field of every op; each op reads its own.
type request struct {
	Op string `json:"op"`

	Path       string `json:"path"`
	Offset     *int   `json:"offset"`
	Limit      *int   `json:"limit"`
	Content    string `json:"content"`
	MaxDepth   *int   `json:"max_depth"`
	ShowHidden bool   `json:"show_hidden"`

	A     string `json:"a"`
	B     string `json:"b"`
	AName string `json:"a_name"`
	BName string `json:"b_name"`
	Files bool   `json:"files"` // diff: a and b are file paths, not texts

	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`

	Prompt    string          `json:"prompt"`
	Model     string          `json:"model"`
	System    string          `json:"system"`
	Schema    json.RawMessage `json:"schema"`
	AgentType string          `json:"agent_type"`
	Context   string          `json:"context"`
	Label     string          `json:"label"`

	IDs    []string `json:"ids"`
	Format string   `json:"format"`
	Query  string   `json:"query"`
}

// Response is the JSON shape of every answer: Result on success, Error
// otherwise.
type Response struct {
	Result any            `json:"result,omitempty"`
	Error  *ResponseError `json:"error,omitempty"`
}

// ResponseError is a failed call's error.
type ResponseError struct {
	Message string `json:"message"`
}

func errResp(format string, args ...any) []byte {
	b, _ := json.Marshal(Response{Error: &ResponseError{Message: fmt.Sprintf(format, args...)}})
	return b
}

// Call answers one request; see the package documentation for the ABI. It
// never panics and always returns a JSON response.
//
// The host memory a call holds while served (the request, its decoded
// fields, the file text or diff it works on, the response) is taken from
// the session's pool first; a call waits while other calls of the session
// hold it, and one that would need more than the pool fails.
func (d *Dispatcher) Call(ctx context.Context, raw []byte) (resp []byte) {
	defer func() {
		if p := recover(); p != nil {
			resp = errResp("internal error: %v", p)
		}
	}()
	if int64(len(raw)) > d.maxRequest {
		return errResp("the request is %s, more than the %s a host call of this session may carry; send less at once (write large content in parts with append)",
			sizeText(int64(len(raw))), sizeText(d.maxRequest))
	}
	m := &meter{p: d.work}
	defer m.close()
	if err := m.grow(ctx, 2*int64(len(raw))+callOverhead); err != nil {
		return errResp("the call was not served: %v", err)
	}
	var req request
	if err := json.Unmarshal(raw, &req); err != nil {
		return errResp("the request is not a JSON object of the host-call ABI: %v", err)
	}
	result, err := d.serve(ctx, m, &req)
	if err != nil {
		b, _ := json.Marshal(Response{Error: &ResponseError{Message: err.Error()}})
		return b
	}
	b, err := d.encode(ctx, m, result)
	if err != nil {
		helper := req.Op
		if req.Path != "" {
			helper += "(" + quote(req.Path) + ")"
		}
		return errResp("%s: %v", helper, err)
	}
	return b
}

// encode writes {"result": result}, within the call's memory and the
// response cap. A string, the common answer, is measured before it is
// written and written once, into a buffer of its exact size.
func (d *Dispatcher) encode(ctx context.Context, m *meter, result any) ([]byte, error) {
	const head, tail = `{"result":`, `}`
	if s, ok := result.(string); ok {
		n := int64(len(head)+len(tail)) + jsonStringLen(s)
		if n > d.maxResponse {
			return nil, fmt.Errorf("the answer is %s as JSON (escapes included), more than the %s one host call of this session may return; ask for less at once (read: offset and limit)",
				sizeText(n), sizeText(d.maxResponse))
		}
		if err := m.grow(ctx, n); err != nil {
			return nil, err
		}
		b := make([]byte, 0, n)
		b = append(b, head...)
		b = appendJSONString(b, s)
		return append(b, tail...), nil
	}
	var v any = struct {
		Result any `json:"result"`
	}{result}
	if a, ok := result.(agentAnswer); ok {
		v = a // with its output id
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("the answer is not valid JSON: %v", err)
	}
	if int64(len(b)) > d.maxResponse {
		return nil, fmt.Errorf("the answer is %s as JSON, more than the %s one host call of this session may return",
			sizeText(int64(len(b))), sizeText(d.maxResponse))
	}
	return b, nil
}

var ops = "read, write, append, tree, diff, output, tool, llm, agent, budget"

func (d *Dispatcher) serve(ctx context.Context, m *meter, r *request) (any, error) {
	switch r.Op {
	case "read":
		offset, limit := 1, 0
		if r.Offset != nil {
			offset = *r.Offset
		}
		if r.Limit != nil {
			if *r.Limit < 1 {
				return nil, fmt.Errorf("read(%s): limit is %d; give 1 or more, or none for the whole file", quote(r.Path), *r.Limit)
			}
			limit = *r.Limit
		}
		charge := func(n int64) error { return m.grow(ctx, n) }
		text, err := d.fs.read(r.Path, offset, limit, charge)
		return text, err
	case "write", "append":
		if len(r.Content) > d.opts.MaxWriteBytes {
			return nil, fmt.Errorf("%s(%s): the content is %d bytes, more than the %d MiB one %s may carry; write it in parts with append",
				r.Op, quote(r.Path), len(r.Content), d.opts.MaxWriteBytes>>20, r.Op)
		}
		if r.Op == "write" {
			return d.fs.Write(r.Path, r.Content)
		}
		return d.fs.Append(r.Path, r.Content)
	case "tree":
		depth := 3
		if r.MaxDepth != nil {
			depth = *r.MaxDepth
		}
		p := r.Path
		if p == "" {
			p = "."
		}
		return d.fs.Tree(p, depth, r.ShowHidden)
	case "diff":
		if r.Files {
			return d.diffFiles(r.A, r.B, func(n int64) error { return m.grow(ctx, n) })
		}
		an, bn := r.AName, r.BName
		if an == "" {
			an = "a"
		}
		if bn == "" {
			bn = "b"
		}
		s, err := diff(r.A, r.B, an, bn, func(n int64) error { return m.grow(ctx, n) })
		if err != nil {
			return nil, fmt.Errorf("diff: %w", err)
		}
		return s, nil
	case "output":
		return d.output(ctx, m, r)
	case "tool":
		return d.tool(ctx, r)
	case "llm":
		return d.llm(ctx, r)
	case "agent":
		return d.agent(ctx, r)
	case "budget":
		return d.budgetOf(ctx), nil
	case "":
		return nil, fmt.Errorf("the request has no op; give one of %s", ops)
	}
	return nil, fmt.Errorf("unknown op %q; give one of %s", r.Op, ops)
}

func (d *Dispatcher) noHost(what, helper string) error {
	return fmt.Errorf("%s: no %s is configured for this sandbox (%s)", helper, what, d.opts.HostSetting)
}

func validName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func (d *Dispatcher) tool(ctx context.Context, r *request) (any, error) {
	if !validName(r.Name) {
		return nil, fmt.Errorf("tool: %q is not a tool name; names are 1 to 128 letters, digits, '_', '-' or '.'", r.Name)
	}
	if len(r.Args) > d.opts.MaxToolArgBytes {
		return nil, fmt.Errorf("tool.%s: the arguments are %d bytes of JSON, more than the %d KiB a tool call may carry; pass a file path instead of the data",
			r.Name, len(r.Args), d.opts.MaxToolArgBytes>>10)
	}
	args := bytes.TrimSpace(r.Args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	if args[0] != '{' {
		return nil, fmt.Errorf("tool.%s: the arguments must be an object (a dict in Python), not %s", r.Name, jsonKind(args))
	}
	if d.host == nil {
		return nil, d.noHost("tool", "tool."+r.Name)
	}
	resp, err := d.host.Tool(ctx, ToolRequest{Name: r.Name, Args: json.RawMessage(args)})
	if err != nil {
		return nil, fmt.Errorf("tool.%s: %w", r.Name, redact.Error(err))
	}
	return rawOrNull(resp.Result), nil
}

func jsonKind(b []byte) string {
	switch b[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

func rawOrNull(b json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(b)) == 0 {
		return json.RawMessage("null")
	}
	return b
}

func (d *Dispatcher) checkText(helper string, r *request) error {
	if strings.TrimSpace(r.Prompt) == "" {
		return fmt.Errorf("%s: the prompt is empty", helper)
	}
	if n := len(r.Prompt) + len(r.System) + len(r.Context) + len(r.Schema); n > d.opts.MaxPromptBytes {
		return fmt.Errorf("%s: the prompt, system, context and schema are %d bytes, more than the %d MiB one call may carry", helper, n, d.opts.MaxPromptBytes>>20)
	}
	if s := bytes.TrimSpace(r.Schema); len(s) > 0 && !bytes.Equal(s, []byte("null")) && s[0] != '{' {
		return fmt.Errorf("%s: the schema must be a JSON schema object, not %s", helper, jsonKind(s))
	}
	return nil
}

// answer is what llm and agent return: the parsed object when a schema was
// given, the text otherwise.
func answer(helper string, schema json.RawMessage, text string, obj json.RawMessage) (any, error) {
	s := bytes.TrimSpace(schema)
	if len(s) == 0 || bytes.Equal(s, []byte("null")) {
		return text, nil
	}
	if len(bytes.TrimSpace(obj)) > 0 {
		if !json.Valid(obj) {
			return nil, fmt.Errorf("%s: the host's structured answer is not valid JSON", helper)
		}
		return obj, nil
	}
	t := strings.TrimSpace(text)
	if !json.Valid([]byte(t)) {
		return nil, fmt.Errorf("%s: a schema was given but the answer is not JSON: %.200q", helper, t)
	}
	return json.RawMessage(t), nil
}

func schemaOf(s json.RawMessage) json.RawMessage {
	s = bytes.TrimSpace(s)
	if len(s) == 0 || bytes.Equal(s, []byte("null")) {
		return nil
	}
	return s
}

var models = map[string]bool{"default": true, "smol": true, "slow": true}

func (d *Dispatcher) llm(ctx context.Context, r *request) (any, error) {
	if err := d.checkText("llm", r); err != nil {
		return nil, err
	}
	if r.Model == "" {
		r.Model = "default"
	}
	if !models[r.Model] {
		return nil, fmt.Errorf("llm: model %q is not one of 'default', 'smol', 'slow'", r.Model)
	}
	if d.host == nil {
		return nil, d.noHost("LLM", "llm")
	}
	resp, err := d.host.LLM(ctx, LLMRequest{Prompt: r.Prompt, Model: r.Model, System: r.System, Schema: schemaOf(r.Schema)})
	if err != nil {
		return nil, fmt.Errorf("llm: %w", redact.Error(err))
	}
	if strings.TrimSpace(resp.Text) == "" && len(bytes.TrimSpace(resp.Object)) == 0 {
		// The seed raises on empty output: an empty string would pass for
		// an answer.
		return nil, fmt.Errorf("llm: the model returned an empty completion; ask again, or reword the prompt")
	}
	return answer("llm", r.Schema, resp.Text, resp.Object)
}

func (d *Dispatcher) agent(ctx context.Context, r *request) (any, error) {
	if err := d.checkText("agent", r); err != nil {
		return nil, err
	}
	depth := d.opts.AgentDepth + 1
	if depth > MaxAgentDepth {
		return nil, fmt.Errorf("agent: agents nest at most %d deep, and this cell already runs at depth %d; do the work here instead", MaxAgentDepth, d.opts.AgentDepth)
	}
	if d.host == nil {
		return nil, d.noHost("agent", "agent")
	}
	resp, err := d.host.Agent(ctx, AgentRequest{
		Prompt: r.Prompt, AgentType: r.AgentType, Model: r.Model, Context: r.Context,
		Label: r.Label, Schema: schemaOf(r.Schema), Depth: depth,
	})
	if err != nil {
		return nil, fmt.Errorf("agent: %w", redact.Error(err))
	}
	out, err := answer("agent", r.Schema, resp.Text, resp.Object)
	if err != nil {
		return nil, err
	}
	return d.keepAgentAnswer(r, out), nil
}
