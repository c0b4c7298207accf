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

// profileTools are the tools each profile adds.
var profileTools = map[string][]string{
	profiles.Eval:            {"eval"},
	profiles.EvaluatePython:  {"evaluate_python"},
	profiles.CodeInterpreter: {"run_code", "create_code_context", "run_in_code_context", "delete_code_context"},
}

// evaluatePythonSchema is the seed tool's parameters: EvalParams.
var evaluatePythonSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "code": {"type": "string", "maxLength": 2000, "description": "Python script to execute (<=2,000 characters, no control characters but tab and newline); the repr of its last expression is value_repr"},
    "globals": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Mapping of global variable names to JSON-encoded strings. The payload is decoded before execution."},
    "reads": {"type": "array", "items": {"type": "object", "properties": {"path": {"type": "string", "description": "Relative path of a file of the session to load; its text is put in the globals under its path."}}, "required": ["path"], "additionalProperties": false}, "description": "Files to load before execution."},
    "writes": {"type": "array", "items": {"type": "object", "properties": {
      "path": {"type": "string", "description": "Relative path of the file to create or update."},
      "content": {"type": "string", "maxLength": 48000, "description": "Text to write after execution (<=48,000 characters); {name} is replaced by the final global name (str.format_map)."},
      "mode": {"type": "string", "enum": ["create", "overwrite", "append"], "default": "create", "description": "create a new file (it must not exist), overwrite it, or append to it."}
    }, "required": ["path", "content"], "additionalProperties": false}, "description": "Files to write after execution completes, only if it succeeds. These mirror calls to write_text."}
  },
  "required": ["code"],
  "additionalProperties": false
}`)

var evaluatePythonOutput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "value_repr": {"type": ["string", "null"]},
    "stdout": {"type": "string"},
    "stderr": {"type": "string"},
    "globals": {"type": "object", "additionalProperties": {"type": "string"}},
    "reads": {"type": "array", "items": {"type": "object"}},
    "writes": {"type": "array", "items": {"type": "object"}}
  },
  "required": ["value_repr", "stdout", "stderr", "globals", "reads", "writes"]
}`)

// addProfileTools adds the evaluate_python tool and removes the tools of
// the profiles Config.Tools leaves out.
func (s *Server) addProfileTools() {
	notRO := false
	s.srv.AddTool(&mcp.Tool{
		Name:  "evaluate_python",
		Title: "Evaluate Python",
		Description: "Run a short Python expression or script in a sandbox. Supports preloading files, staging writes, and returning captured stdout, stderr, and result data. " +
			"Each call gets a fresh namespace of this connection's session (the one eval uses: files are shared, variables are not); " +
			"read_text(path) and write_text(path, content, mode='create') work inside the code; writes apply only if the code succeeds; " +
			"stdout and stderr are cut at 4,096 characters; the code stops after 5 seconds with \"Execution timed out.\".",
		InputSchema:  evaluatePythonSchema,
		OutputSchema: evaluatePythonOutput,
		Annotations:  &mcp.ToolAnnotations{DestructiveHint: &notRO, OpenWorldHint: &notRO},
	}, s.evaluatePython)
	for _, p := range profiles.Names {
		if !s.cfg.Tools.Has(p) {
			s.srv.RemoveTools(profileTools[p]...)
		}
	}
}

// toolError is a tool error whose text the model reads.
func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

func (s *Server) evaluatePython(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.Params.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	p, err := profiles.DecodeEvaluatePython(args)
	if err != nil {
		return toolError(profiles.Detail(err)), nil
	}
	var res *profiles.EvalResult
	note, err := s.inEvalSession(ctx, req, func(ctx context.Context, owner, id string) error {
		if s.log.Enabled(ctx, slog.LevelInfo) {
			code := []rune(p.Code)
			if len(code) > 200 {
				code = append(code[:200], '…')
			}
			s.log.LogAttrs(ctx, slog.LevelInfo, "mcp evaluate_python", slog.String("owner", owner), slog.String("code", string(code)))
		}
		var err error
		res, err = profiles.RunEvaluatePython(s.runCtx(ctx, req), profiles.EvalFunc(func(ctx context.Context, r sandbox.Request) (*sandbox.Result, error) {
			return s.cfg.Manager.Eval(ctx, owner, id, r)
		}), p, profiles.EvalOptions{})
		return err
	})
	var pe *profiles.Error
	switch {
	case errors.As(err, &pe):
		return toolError(pe.Detail()), nil
	case err != nil:
		return toolError(err.Error()), nil
	}
	text, _ := json.Marshal(res)
	out := &mcp.CallToolResult{
		// The seed's rule: a run that wrote to stderr and produced no value failed.
		IsError:           res.Stderr != "" && res.ValueRepr == nil,
		Content:           []mcp.Content{&mcp.TextContent{Text: note + string(text)}},
		StructuredContent: res,
	}
	return out, nil
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
