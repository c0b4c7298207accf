package mcpserver

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools decode their arguments themselves, with the cell request's
// decoder (sandbox.DecodeRequest) or the profile's (profiles.Tool.Check),
// rather than letting the SDK check them against the input schema first: a bad timeout then reads "use an integer
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
