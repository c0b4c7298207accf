package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/sandbox"
)

// The tools decode their arguments themselves, with the cell request's
// decoder (sandbox.DecodeRequest), rather than letting the SDK check them
// against the input schema first: a bad timeout then reads "use an integer
// from 1 to 600 seconds" on MCP as on the command line and HTTP, not
// "minimum: 0/1 is less than 1.000000". The schemas still describe the
// input to clients.

// typed adapts a typed handler to a raw one that decodes its arguments
// with decode. Like the SDK's typed handlers, a handler's error becomes a
// tool error, and a structured result is also the text content when the
// handler set none.
func typed[In any](decode func(json.RawMessage) (In, error), h func(context.Context, *mcp.CallToolRequest, In) (*mcp.CallToolResult, any, error)) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := json.RawMessage(req.Params.Arguments)
		if len(strings.TrimSpace(string(args))) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		in, err := decode(args)
		if err != nil {
			return toolError(err.Error()), nil
		}
		res, out, err := h(ctx, req, in)
		if err != nil {
			return toolError(err.Error()), nil
		}
		if res == nil {
			res = &mcp.CallToolResult{}
		}
		if out != nil {
			res.StructuredContent = out
			if len(res.Content) == 0 {
				b, err := json.Marshal(out)
				if err != nil {
					return toolError("host error: encoding the result: " + err.Error()), nil
				}
				res.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
			}
		}
		if res.Content == nil {
			res.Content = []mcp.Content{}
		}
		return res, nil
	}
}

// decodeEval leaves the request to the eval handler, which decodes it
// with sandbox.DecodeRequest.
func decodeEval(json.RawMessage) (EvalInput, error) { return EvalInput{}, nil }

// argsObject is args as an object, or an error saying what it should be.
func argsObject(args json.RawMessage, example string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil || m == nil {
		return nil, fmt.Errorf("the arguments must be a JSON object like %s", example)
	}
	return m, nil
}

// unknownArg is the error for a field the tool does not take.
func unknownArg(m map[string]json.RawMessage, fields []string) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(fields, k) {
			if best := sandbox.ClosestName(k, fields); best != "" {
				return fmt.Errorf("unknown field %q (did you mean %q?); the fields are %s", k, best, strings.Join(fields, ", "))
			}
			return fmt.Errorf("unknown field %q; the fields are %s", k, strings.Join(fields, ", "))
		}
	}
	return nil
}

// contextID takes the id field out of m.
func contextID(m map[string]json.RawMessage) (string, error) {
	raw, ok := m["id"]
	if !ok {
		return "", errors.New("id: missing; give the context id that create_code_context returned")
	}
	delete(m, "id")
	var id string
	if err := json.Unmarshal(raw, &id); err != nil || id == "" {
		return "", fmt.Errorf("id: must be the context id (a non-empty string) that create_code_context returned, not %.40s", raw)
	}
	return id, nil
}

// decodeCell decodes m's language, code and timeout as one cell of a
// request, so its messages are the request decoder's.
func decodeCell(m map[string]json.RawMessage) (sandbox.Cell, error) {
	cell, _ := json.Marshal(m)
	wrapped, _ := json.Marshal(map[string]any{"cells": []json.RawMessage{cell}})
	req, err := sandbox.DecodeRequest(wrapped)
	if err != nil {
		var re *sandbox.RequestError
		if errors.As(err, &re) {
			re.Path = strings.TrimPrefix(strings.TrimPrefix(re.Path, "cells[0]"), ".")
			return sandbox.Cell{}, errors.New(re.Detail())
		}
		return sandbox.Cell{}, err
	}
	return req.Cells[0], nil
}

var runFields = []string{"language", "code", "timeout"}

func decodeRun(args json.RawMessage) (RunInput, error) {
	m, err := argsObject(args, `{"language": "py", "code": "print(1)"}`)
	if err != nil {
		return RunInput{}, err
	}
	if err := unknownArg(m, runFields); err != nil {
		return RunInput{}, err
	}
	c, err := decodeCell(m)
	if err != nil {
		return RunInput{}, err
	}
	return RunInput{Language: c.Language, Code: c.Code, Timeout: c.TimeoutSeconds}, nil
}

func decodeRunIn(args json.RawMessage) (RunInContextInput, error) {
	m, err := argsObject(args, `{"id": "...", "language": "py", "code": "print(1)"}`)
	if err != nil {
		return RunInContextInput{}, err
	}
	if err := unknownArg(m, append([]string{"id"}, runFields...)); err != nil {
		return RunInContextInput{}, err
	}
	id, err := contextID(m)
	if err != nil {
		return RunInContextInput{}, err
	}
	c, err := decodeCell(m)
	if err != nil {
		return RunInContextInput{}, err
	}
	return RunInContextInput{ID: id, Language: c.Language, Code: c.Code, Timeout: c.TimeoutSeconds}, nil
}

func decodeCreate(args json.RawMessage) (struct{}, error) {
	m, err := argsObject(args, `{}`)
	if err != nil {
		return struct{}{}, err
	}
	if len(m) > 0 {
		return struct{}{}, unknownArg(m, nil)
	}
	return struct{}{}, nil
}

func decodeContext(args json.RawMessage) (ContextInput, error) {
	m, err := argsObject(args, `{"id": "..."}`)
	if err != nil {
		return ContextInput{}, err
	}
	if err := unknownArg(m, []string{"id"}); err != nil {
		return ContextInput{}, err
	}
	id, err := contextID(m)
	return ContextInput{ID: id}, err
}
