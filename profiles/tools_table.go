package profiles

import (
	"context"
	"encoding/json"
)

// The table entries of the python and code_interpreter profiles' tools.

var pythonTool = Tool{
	Name:    "python",
	Profile: Python,
	Title:   "Python",
	Description: "Run Python cells in order in a persistent interpreter of this session (variables and imports persist between calls). " +
		"A cell that fails stops the rest and the result names it. timeout is per call, in seconds (clamped to 1..600, default 30); " +
		"cwd is a folder inside the session root to run in (it must exist); reset restarts the interpreter before the first cell. " +
		"input() and stdin are not supported (the cell fails). kernelMode per-call runs the call in a fresh interpreter dropped after.",
	InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "cells": {"type": "array", "minItems": 1, "items": {"type": "object", "properties": {
      "code": {"type": "string", "minLength": 1, "description": "Python code; the last expression's value is shown"},
      "title": {"type": "string", "description": "a short name for the cell"}
    }, "required": ["code"], "additionalProperties": false}, "description": "cells run in order; the first that fails stops the rest"},
    "timeout": {"type": "number", "description": "seconds for the whole call, clamped to 1..600 (default 30)"},
    "cwd": {"type": "string", "description": "working directory: an existing folder inside the session root (default: the root)"},
    "reset": {"type": "boolean", "description": "restart the interpreter before the first cell"},
    "kernelMode": {"type": "string", "enum": ["session", "per-call"], "description": "session (default): the session's interpreter; per-call: a fresh one for this call"}
  },
  "required": ["cells"],
  "additionalProperties": false
}`),
	OutputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "content": {"type": "array", "items": {"type": "object"}},
    "details": {"type": "object", "properties": {
      "cells": {"type": "array", "items": {"type": "object"}},
      "jsonOutputs": {"type": "array"},
      "images": {"type": "array", "items": {"type": "object"}},
      "statusEvents": {"type": "array", "items": {"type": "object"}},
      "isError": {"type": "boolean"},
      "cancelled": {"type": "boolean"},
      "stdinRequested": {"type": "boolean"},
      "kernelMode": {"type": "string"}
    }, "required": ["cells", "isError", "cancelled", "stdinRequested"]}
  },
  "required": ["content", "details"]
}`),
	Detect: func(m map[string]json.RawMessage) bool {
		if _, lang := m["language"]; lang {
			return false
		}
		var cells []map[string]json.RawMessage
		if json.Unmarshal(m["cells"], &cells) != nil || len(cells) == 0 {
			return false
		}
		for _, c := range cells {
			if c == nil {
				return false
			}
			if _, ok := c["language"]; ok {
				return false
			}
		}
		return true
	},
	Check: func(args []byte) error {
		_, err := DecodePython(args)
		return err
	},
	Session: true,
	Run: func(ctx context.Context, env *Env, args []byte) (any, bool, error) {
		p, err := DecodePython(args)
		if err != nil {
			return nil, false, err
		}
		res, err := RunPython(ctx, env, p)
		if err != nil {
			return nil, false, err
		}
		return res, res.Failed(), nil
	},
}

const codeResultSchema = `{
  "type": "object",
  "properties": {
    "outputs": {"type": "array", "items": {"type": "object", "properties": {
      "type": {"type": "string", "enum": ["stdout", "stderr", "display", "result"]},
      "text": {"type": "string"}, "mime": {"type": "string"}, "data": {"type": "string"}, "value": {}
    }, "required": ["type"]}},
    "exitCode": {"type": "integer"},
    "error": {"type": "string"}
  },
  "required": ["outputs", "exitCode"]
}`

const languageSchema = `{"type": "string", "enum": ["python", "javascript", "typescript", "py", "js", "ts"], "description": "python, javascript or typescript (or py, js, ts)"}`

const timeoutMsSchema = `{"type": "integer", "minimum": 1, "maximum": 600000, "description": "milliseconds before the run is stopped (default 30000)"}`

var runCodeTool = Tool{
	Name:    "run_code",
	Profile: CodeInterpreter,
	Title:   "Run code once",
	Description: "Run Python, JavaScript or TypeScript once, in a fresh sandbox thrown away afterwards. " +
		"Returns {outputs: [{type: stdout|stderr, text} | {type: display, mime, data (base64)} | {type: result, value (JSON)}], exitCode, error?}.",
	InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "language": ` + languageSchema + `,
    "code": {"type": "string", "minLength": 1, "description": "the code to run; the last expression's value is the result output"},
    "timeoutMs": ` + timeoutMsSchema + `
  },
  "required": ["language", "code"],
  "additionalProperties": false
}`),
	OutputSchema: json.RawMessage(codeResultSchema),
	Detect: func(m map[string]json.RawMessage) bool {
		return has(m, "language") && has(m, "code") && !has(m, "cells") && !has(m, "contextId")
	},
	Check: func(args []byte) error { _, err := DecodeRunCode(args); return err },
	Run: func(ctx context.Context, env *Env, args []byte) (any, bool, error) {
		p, err := DecodeRunCode(args)
		if err != nil {
			return nil, false, err
		}
		res, err := RunCode(ctx, env, p)
		if err != nil {
			return nil, false, err
		}
		return res, res.Failed(), nil
	},
}

var createContextTool = Tool{
	Name:        "create_code_context",
	Profile:     CodeInterpreter,
	Title:       "Create a code context",
	Description: "Create a persistent code context (an interpreter whose variables persist across run_in_code_context calls) for a language; returns {contextId}.",
	InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "language": ` + languageSchema + `,
    "cwd": {"type": "string", "description": "python contexts: the working folder inside the context's own folder (made when missing)"},
    "python": {"type": "string", "enum": ["wasm", "jupyter"], "description": "python contexts: the Python backend, wasm (the CPython sandbox) or jupyter (a native kernel), where the operator lets sessions choose (--python-backend-choice); default: the operator's --python-backend"}
  },
  "required": ["language"],
  "additionalProperties": false
}`),
	OutputSchema: json.RawMessage(`{"type": "object", "properties": {"contextId": {"type": "string"}}, "required": ["contextId"]}`),
	Detect: func(m map[string]json.RawMessage) bool {
		return has(m, "language") && !has(m, "code") && !has(m, "cells") && !has(m, "contextId")
	},
	Check: func(args []byte) error { _, err := DecodeCreateContext(args); return err },
	Run: func(ctx context.Context, env *Env, args []byte) (any, bool, error) {
		p, err := DecodeCreateContext(args)
		if err != nil {
			return nil, false, err
		}
		res, err := CreateContext(ctx, env, p)
		if err != nil {
			return nil, false, err
		}
		return res, false, nil
	},
}

var runInContextTool = Tool{
	Name:        "run_in_code_context",
	Profile:     CodeInterpreter,
	Title:       "Run code in a context",
	Description: "Run code in a code context from create_code_context, in its language; variables persist from earlier runs. Returns outputs, exitCode and error as run_code.",
	InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "contextId": {"type": "string", "minLength": 1, "description": "the contextId create_code_context returned"},
    "code": {"type": "string", "minLength": 1, "description": "the code to run"},
    "timeoutMs": ` + timeoutMsSchema + `
  },
  "required": ["contextId", "code"],
  "additionalProperties": false
}`),
	OutputSchema: json.RawMessage(codeResultSchema),
	Detect: func(m map[string]json.RawMessage) bool {
		return has(m, "contextId") && has(m, "code")
	},
	Check: func(args []byte) error { _, err := DecodeRunInContext(args); return err },
	Run: func(ctx context.Context, env *Env, args []byte) (any, bool, error) {
		p, err := DecodeRunInContext(args)
		if err != nil {
			return nil, false, err
		}
		res, err := RunInContext(ctx, env, p)
		if err != nil {
			return nil, false, err
		}
		return res, res.Failed(), nil
	},
}

var deleteContextTool = Tool{
	Name:        "delete_code_context",
	Profile:     CodeInterpreter,
	Title:       "Delete a code context",
	Description: "Delete a code context and its files; returns {ok: true}.",
	InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "contextId": {"type": "string", "minLength": 1, "description": "the context to delete"}
  },
  "required": ["contextId"],
  "additionalProperties": false
}`),
	OutputSchema: json.RawMessage(`{"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}`),
	Detect: func(m map[string]json.RawMessage) bool {
		return has(m, "contextId") && !has(m, "code")
	},
	Check: func(args []byte) error { _, err := DecodeDeleteContext(args); return err },
	Run: func(ctx context.Context, env *Env, args []byte) (any, bool, error) {
		id, err := DecodeDeleteContext(args)
		if err != nil {
			return nil, false, err
		}
		res, err := DeleteContext(ctx, env, id)
		if err != nil {
			return nil, false, err
		}
		return res, false, nil
	},
}

func has(m map[string]json.RawMessage, k string) bool { _, ok := m[k]; return ok }
