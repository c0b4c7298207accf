package profiles

import (
	"context"
	"encoding/json"
	"slices"
)

// Tool is one tool of a profile that runs in a session, as every face
// serves it: MCP lists it under Name with its schemas, serve answers POST
// /v1/sessions/{id}/profiles/{Name}, and `wasmeval eval` runs the lines
// whose "profile" is Name, or that Detect claims. A new tool is one entry
// of the table Tools returns; the faces need no change.
type Tool struct {
	// Name is the tool's name, as the seed tool spells it.
	Name string
	// Profile is the --tools name that serves it.
	Profile string
	// Title and Description are shown to MCP clients.
	Title, Description string
	// InputSchema and OutputSchema are the JSON Schemas of the call and
	// the result.
	InputSchema, OutputSchema json.RawMessage
	// Detect reports whether an eval line without a "profile" field, with
	// these top-level fields, is a call of this tool.
	Detect func(fields map[string]json.RawMessage) bool
	// Check decodes and validates args without running anything, so that
	// a face can refuse an invalid call before it takes a session's turn.
	Check func(args []byte) error
	// Session says the tool runs in the face's session (Env.Session), so
	// a face that makes its session lazily makes it first; the others
	// (run_code, the code contexts) run in sessions of their own.
	Session bool
	// Run decodes and validates args (one JSON object), runs the call in
	// env and returns the result, ready for JSON. failed says the guest
	// code failed (MCP's isError; a failed cell's exit status on eval
	// lines). An invalid call is an *Error; any other error is the host's.
	Run func(ctx context.Context, env *Env, args []byte) (result any, failed bool, err error)
}

var tools = []Tool{pythonTool, evaluatePythonTool, runCodeTool, createContextTool, runInContextTool, deleteContextTool}

// ProfileTools returns the names of the tools of profile name.
func ProfileTools(name string) []string {
	var out []string
	for _, t := range tools {
		if t.Profile == name {
			out = append(out, t.Name)
		}
	}
	return out
}

// Tools returns the tools of the profiles that run in a session.
func Tools() []Tool { return slices.Clone(tools) }

// LookupTool returns the tool called name.
func LookupTool(name string) (Tool, bool) {
	for _, t := range tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// ToolNames lists the tools' names, for messages.
func ToolNames() []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return names
}

var evaluatePythonTool = Tool{
	Name:    "evaluate_python",
	Profile: EvaluatePython,
	Title:   "Evaluate Python",
	Description: "Run a short Python expression or script in a sandbox. Supports preloading files, staging writes, and returning captured stdout, stderr, and result data. " +
		"Each call gets a fresh namespace of the session's Python (files and imported modules are shared; variables are not); " +
		"read_text(path) and write_text(path, content, mode='create') work inside the code; writes apply only if the code succeeds; " +
		"stdout and stderr are cut at 4,096 characters; the code stops after 5 seconds with \"Execution timed out.\".",
	InputSchema: json.RawMessage(`{
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
}`),
	OutputSchema: json.RawMessage(`{
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
}`),
	Detect: func(m map[string]json.RawMessage) bool {
		if has(m, "cells") || has(m, "language") || has(m, "contextId") {
			return false
		}
		for _, f := range evalFields {
			if _, ok := m[f]; ok {
				return true
			}
		}
		return false
	},
	Check: func(args []byte) error {
		_, err := DecodeEvaluatePython(args)
		return err
	},
	Session: true,
	Run: func(ctx context.Context, env *Env, args []byte) (any, bool, error) {
		p, err := DecodeEvaluatePython(args)
		if err != nil {
			return nil, false, err
		}
		sess, done, err := env.session(ctx, EvaluatePython)
		if err != nil {
			return nil, false, err
		}
		defer done()
		res, err := RunEvaluatePython(ctx, sess, p, EvalOptions{})
		if err != nil {
			return nil, false, err
		}
		return res, res.Failed(), nil
	},
}
