package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/sandbox"
)

// The MCP tools of the profiles other than eval and code_interpreter, and
// Config.Tools' choice of which tools are served.

// profileTools are the tools of the profiles served by mcpserver.go;
// addProfileTools adds those of profiles.Tools.
var profileTools = map[string][]string{
	profiles.Eval:            {"eval"},
	profiles.CodeInterpreter: {"run_code", "create_code_context", "run_in_code_context", "delete_code_context"},
}

// addProfileTools adds the tools of profiles.Tools (evaluate_python) and
// removes the tools of the profiles Config.Tools leaves out.
func (s *Server) addProfileTools() {
	notRO := false
	byProfile := map[string][]string{}
	for p, names := range profileTools {
		byProfile[p] = names
	}
	for _, t := range profiles.Tools() {
		s.srv.AddTool(&mcp.Tool{
			Name:         t.Name,
			Title:        t.Title,
			Description:  t.Description + " Runs in this connection's session, the one eval uses.",
			InputSchema:  t.InputSchema,
			OutputSchema: t.OutputSchema,
			Annotations:  &mcp.ToolAnnotations{DestructiveHint: &notRO, OpenWorldHint: &notRO},
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

// profileTool is the handler of t: the call runs in the connection's
// eval session. The arguments are checked by t.Run, not by the SDK
// against the schema, so every face gives the same messages.
func (s *Server) profileTool(t profiles.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := []byte(req.Params.Arguments)
		if len(args) == 0 {
			args = []byte(`{}`)
		}
		if err := t.Check(args); err != nil {
			return toolError(profiles.Detail(err)), nil
		}
		var res any
		var failed bool
		note, err := s.inEvalSession(ctx, req, func(ctx context.Context, owner, id string) error {
			if s.log.Enabled(ctx, slog.LevelInfo) {
				a := []rune(string(args))
				if len(a) > 200 {
					a = append(a[:200], '…')
				}
				s.log.LogAttrs(ctx, slog.LevelInfo, "mcp "+t.Name, slog.String("owner", owner), slog.String("args", string(a)))
			}
			var err error
			res, failed, err = t.Run(s.runCtx(ctx, req), profiles.EvalFunc(func(ctx context.Context, r sandbox.Request) (*sandbox.Result, error) {
				return s.cfg.Manager.Eval(ctx, owner, id, r)
			}), args)
			return err
		})
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
			Content:           []mcp.Content{&mcp.TextContent{Text: note + string(text)}},
			StructuredContent: json.RawMessage(text),
		}, nil
	}
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
