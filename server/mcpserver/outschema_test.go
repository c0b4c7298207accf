package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// TestOutputSchemasDescribeResults: every tool declares an output schema,
// and the structured results of real calls (output, errors, displays,
// several cells) satisfy it, as clients that check them require.
func TestOutputSchemasDescribeResults(t *testing.T) {
	srv, _ := newServer(t)
	cs := connect(t, srv, nil)
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	for _, tool := range list.Tools {
		if tool.OutputSchema == nil {
			t.Errorf("tool %s declares no output schema", tool.Name)
			continue
		}
		b, _ := json.Marshal(tool.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s's output schema does not resolve: %v", tool.Name, err)
		}
		schemas[tool.Name] = r
	}
	check := func(name string, args any) *mcp.CallToolResult {
		t.Helper()
		res := call(t, cs, name, args)
		if res.StructuredContent == nil {
			if !res.IsError {
				t.Errorf("%s(%v): no structured result", name, args)
			}
			return res
		}
		b, _ := json.Marshal(res.StructuredContent)
		var v any
		json.Unmarshal(b, &v)
		if r := schemas[name]; r != nil {
			if err := r.Validate(v); err != nil {
				t.Errorf("%s(%v): the structured result %s does not satisfy the declared schema: %v", name, args, b, err)
			}
		}
		return res
	}
	cell := func(lang, code string) map[string]any { return map[string]any{"language": lang, "code": code} }
	check("eval", map[string]any{"cells": []any{cell("js", "console.log('hi'); display({a: 1}); 6 * 7"), cell("js", "log('step')")}})
	check("eval", map[string]any{"cells": []any{cell("js", "throw new Error('no')"), cell("js", "1")}})
	check("eval", map[string]any{"cells": []any{cell("py", "print(1)\n{'a': [1, None]}"), cell("py", "1/0"), cell("py", "2")}})
	check("eval", map[string]any{"cells": []any{map[string]any{"language": "py", "code": "while True: pass", "timeout": 1}}})
	check("run_code", cell("js", "console.error('e'); 1 + 1"))
	check("run_code", cell("py", "raise KeyError('k')"))
	check("run_code", cell("js", "null.x"))
	check("run_code", cell("javascript", "display({a: 1}); 'text'"))
	check("run_code", map[string]any{"language": "js", "code": "while (true) {}", "timeoutMs": 100})
	created := check("create_code_context", map[string]any{"language": "javascript"})
	var id struct{ ContextID string }
	b, _ := json.Marshal(created.StructuredContent)
	json.Unmarshal(b, &id)
	check("run_in_code_context", map[string]any{"contextId": id.ContextID, "code": "let x = 2; x"})
	check("delete_code_context", map[string]any{"contextId": id.ContextID})
	if testenv.PythonRequired() {
		check("python", map[string]any{"cells": []any{map[string]any{"code": "print(1)\ndisplay({'a': 1})"}, map[string]any{"code": "1/0"}, map[string]any{"code": "2"}}})
		check("python", map[string]any{"cells": []any{map[string]any{"code": "while True: pass"}}, "timeout": 1})
		check("evaluate_python", map[string]any{"code": "x = 1\nx"})
	}
}
