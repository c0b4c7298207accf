package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/sandbox"
)

// The MCP tools of the profiles other than eval (profiles.Tools: python,
// evaluate_python, and code_interpreter's run_code, create_code_context,
// run_in_code_context and delete_code_context), and Config.Tools' choice
// of which tools are served.

// addProfileTools adds the tools of profiles.Tools and removes the tools
// of the profiles Config.Tools leaves out.
func (s *Server) addProfileTools() {
	notRO := false
	byProfile := map[string][]string{profiles.Eval: {"eval"}}
	for _, t := range profiles.Tools() {
		desc := t.Description
		if t.Session {
			desc += " Runs in this connection's session, the one eval uses."
		}
		ann := &mcp.ToolAnnotations{DestructiveHint: &notRO, OpenWorldHint: &notRO}
		if t.Name == "delete_code_context" {
			ann = &mcp.ToolAnnotations{OpenWorldHint: &notRO, IdempotentHint: true}
		}
		s.srv.AddTool(&mcp.Tool{
			Name:         t.Name,
			Title:        t.Title,
			Description:  desc,
			InputSchema:  t.InputSchema,
			OutputSchema: t.OutputSchema,
			Annotations:  ann,
		}, s.profileTool(t))
		byProfile[t.Profile] = append(byProfile[t.Profile], t.Name)
	}
	for _, p := range profiles.Names {
		if !s.cfg.Tools.Has(p) {
			s.srv.RemoveTools(byProfile[p]...)
		}
	}
}

// toolError is a tool error whose text the model reads.
func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// env is the Env of a call of owner: in session id when t runs in the
// connection's session ("" otherwise). The code contexts whose turn the
// call takes settle once an answer is written on ss's connection
// (settle.go).
func (s *Server) env(ss *mcp.ServerSession, owner, id string) *profiles.Env {
	env := &profiles.Env{
		NewSession: profiles.Budgeted(s.cfg.Manager, profiles.SandboxSessions(s.cfg.Sandbox, s.cfg.TempDir)),
		KernelMode: s.cfg.KernelMode,
		Admit:      s.admit,
		Contexts: &profiles.ManagerContexts{
			Manager: s.cfg.Manager, Owner: owner, Create: s.cfg.Create, CreateWith: s.cfg.CreateWith,
			Turn: func(ctx context.Context, cid string) (func(), bool, error) {
				end, err := s.turn(ctx, cid)
				if err == nil {
					if cs, err := s.cfg.Manager.Session(owner, cid); err == nil {
						s.settleAfterAnswer(ss, cs)
					}
				}
				return end, false, err
			},
			Admit: s.admit,
		},
	}
	if id != "" {
		env.Session = profiles.EvalFunc(func(ctx context.Context, r sandbox.Request) (*sandbox.Result, error) {
			return s.cfg.Manager.Eval(ctx, owner, id, r)
		})
		if sess, err := s.cfg.Manager.Session(owner, id); err == nil {
			env.Root = sess.Root()
			fresh, temp := profiles.Budgeted(s.cfg.Manager, profiles.FreshSessions(sess)), env.NewSession
			env.NewSession = func(ctx context.Context, root string) (profiles.Session, error) {
				if root != "" {
					return fresh(ctx, root) // the python profile's per-call kernel
				}
				return temp(ctx, root)
			}
		}
	}
	return env
}

// profileTool is the handler of t: a tool of the session runs in the
// connection's eval session, the others in sessions of their own. The
// arguments are checked by t.Check, not by the SDK against the schema, so
// every face gives the same messages.
func (s *Server) profileTool(t profiles.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := []byte(req.Params.Arguments)
		if len(args) == 0 || string(args) == "null" {
			args = []byte(`{}`)
		}
		if err := t.Check(args); err != nil {
			return toolError(profiles.Detail(err)), nil
		}
		var res any
		var failed bool
		logCall := func(owner string) {
			if s.log.Enabled(ctx, slog.LevelInfo) {
				a := []rune(string(args))
				if len(a) > 200 {
					a = append(a[:200], '…')
				}
				s.log.LogAttrs(ctx, slog.LevelInfo, "mcp "+t.Name, slog.String("owner", owner), slog.String("args", string(a)))
			}
		}
		var note string
		var err error
		if t.Session {
			note, err = s.inEvalSession(ctx, req, func(ctx context.Context, owner, id string) error {
				logCall(owner)
				var err error
				res, failed, err = t.Run(s.runCtx(ctx, req), s.env(req.Session, owner, id), args)
				if err == nil {
					if sess, e := s.cfg.Manager.Session(owner, id); e == nil {
						s.settleAfterAnswer(req.Session, sess)
					}
				}
				return err
			})
		} else {
			owner := s.owner(req.Session, s.conn(req.Session), req.Extra)
			logCall(owner)
			handled := false
			if s.cfg.Elsewhere != nil && req.Extra != nil {
				res, failed, handled, err = s.cfg.Elsewhere(ctx, req.Extra.Header, t.Name, args)
			}
			if !handled {
				res, failed, err = t.Run(s.runCtx(ctx, req), s.env(req.Session, owner, ""), args)
				var pe *profiles.Error
				if err != nil && !errors.As(err, &pe) {
					err = hostError(err)
				}
			}
		}
		var pe *profiles.Error
		switch {
		case errors.As(err, &pe):
			return toolError(pe.Detail()), nil
		case err != nil:
			return toolError(err.Error()), nil
		}
		text, err := json.Marshal(res)
		if err != nil {
			return toolError("host error: " + err.Error()), nil
		}
		return &mcp.CallToolResult{
			IsError:           failed,
			Content:           toolContent(res, note, string(text)),
			StructuredContent: json.RawMessage(text),
		}, nil
	}
}

// toolContent is what the model reads of a profile tool's result: for the
// python tool its text and images, for code_interpreter's runs their
// output as text (and images), a context's id, and for the others (as
// evaluate_python's seed tool returns it) the result's JSON.
func toolContent(res any, note, jsonText string) []mcp.Content {
	var out []mcp.Content
	switch r := res.(type) {
	case *profiles.PythonResult:
		for _, c := range r.Content {
			if c.Type == "image" {
				if b, err := base64.StdEncoding.DecodeString(c.Data); err == nil {
					out = append(out, &mcp.ImageContent{Data: b, MIMEType: c.MIMEType})
				}
				continue
			}
			out = append(out, &mcp.TextContent{Text: c.Text})
		}
	case *profiles.CodeResult:
		var text strings.Builder
		for _, o := range r.Outputs {
			switch o.Type {
			case "stdout", "stderr":
				text.WriteString(o.Text)
			case "display":
				switch {
				case strings.HasPrefix(o.MIME, "image/") && o.MIME != "image/svg+xml":
					if b, err := base64.StdEncoding.DecodeString(o.Data); err == nil {
						out = append(out, &mcp.ImageContent{Data: b, MIMEType: o.MIME})
					}
				case o.MIME == "text/plain" || o.MIME == "text/markdown":
					if b, err := base64.StdEncoding.DecodeString(o.Data); err == nil {
						text.WriteString(strings.TrimSuffix(string(b), "\n") + "\n")
					}
				}
			case "result":
				var s string
				if json.Unmarshal(o.Value, &s) != nil {
					s = string(o.Value)
				}
				text.WriteString(s + "\n")
			}
		}
		if r.Error != "" && !strings.Contains(text.String(), r.Error) {
			text.WriteString(r.Error + "\n")
		}
		t := strings.TrimRight(text.String(), "\n")
		if t == "" && len(out) == 0 {
			t = "(no output)"
		}
		if t != "" {
			out = append([]mcp.Content{&mcp.TextContent{Text: t}}, out...)
		}
	case *profiles.CodeContextCreated:
		out = []mcp.Content{&mcp.TextContent{Text: r.ContextID}}
	default:
		out = []mcp.Content{&mcp.TextContent{Text: jsonText}}
	}
	if len(out) == 0 {
		out = []mcp.Content{&mcp.TextContent{Text: "(no output)"}}
	}
	if note != "" {
		if tc, ok := out[0].(*mcp.TextContent); ok {
			tc.Text = note + tc.Text
		}
	}
	return out
}

// inEvalSession runs fn in the connection's eval session (made on first
// use), in its turn and with an admission, as the eval tool does. note
// says when the previous session was evicted.
func (s *Server) inEvalSession(ctx context.Context, req *mcp.CallToolRequest, fn func(ctx context.Context, owner, id string) error) (note string, err error) {
	c := s.conn(req.Session)
	owner := s.owner(req.Session, c, req.Extra)
	s.mu.Lock()
	id := c.evalID
	s.mu.Unlock()
	endTurn := func() {}
	defer func() { endTurn() }()
	takeTurn := func(id string) error {
		endTurn()
		end, err := s.turn(ctx, id)
		if err != nil {
			endTurn = func() {}
			return err
		}
		endTurn = end
		return nil
	}
	if id != "" {
		if err := takeTurn(id); err != nil {
			return "", err
		}
	}
	done, err := s.admit()
	if err != nil {
		return "", err
	}
	defer done()
	for attempt := 0; ; attempt++ {
		if id == "" {
			if id, err = s.cfg.Create(ctx, owner); err != nil {
				return "", hostError(err)
			}
			if err := takeTurn(id); err != nil {
				return "", err
			}
			s.mu.Lock()
			c.evalID, c.evalOwner = id, owner
			s.mu.Unlock()
		}
		err := fn(ctx, owner, id)
		if errors.Is(err, sandbox.ErrNoSession) && attempt == 0 {
			id, note = "", "(note: this connection's previous session was evicted after being idle; it starts fresh)\n"
			continue
		}
		var pe *profiles.Error
		if err != nil && !errors.As(err, &pe) {
			return note, hostError(err)
		}
		return note, err
	}
}
