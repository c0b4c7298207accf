package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server/mcpserver"
)

// newServer starts a Server on a fresh sandbox.
func newServer(t *testing.T) (*mcpserver.Server, *sandbox.Manager) {
	t.Helper()
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(ctx) })
	mgr, err := sandbox.NewManager(sb, sandbox.ManagerOptions{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mgr.Close(ctx) })
	srv, err := mcpserver.New(mcpserver.Config{Sandbox: sb, Manager: mgr, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return srv, mgr
}

// connect connects a client of the SDK to srv over in-memory transports.
func connect(t *testing.T, srv *mcpserver.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// text joins a result's text content.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// structured decodes a result's structured content into v.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("structured content %s: %v", data, err)
	}
}

func jsCells(code ...string) map[string]any {
	var cells []map[string]any
	for _, c := range code {
		cells = append(cells, map[string]any{"language": "js", "code": c})
	}
	return map[string]any{"cells": cells}
}

func TestListTools(t *testing.T) {
	srv, _ := newServer(t)
	cs := connect(t, srv, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil || tool.Description == "" {
			t.Errorf("%s: no input schema or description", tool.Name)
		}
	}
	if got, want := strings.Join(names, ","), "create_code_context,delete_code_context,eval,evaluate_python,python,run_code,run_in_code_context"; got != want {
		t.Errorf("tools %s, want %s", got, want)
	}
}

func TestEvalPersistsPerConnection(t *testing.T) {
	srv, _ := newServer(t)
	a := connect(t, srv, nil)
	res := call(t, a, "eval", jsCells("var x = 20; console.log('set')", "console.log(x + 22)"))
	if res.IsError {
		t.Fatalf("isError: %s", text(res))
	}
	if got := text(res); !strings.Contains(got, "[1/2] js\nset") || !strings.Contains(got, "[2/2] js\n42") {
		t.Errorf("content %q", got)
	}
	var details sandbox.Details
	structured(t, res, &details)
	if len(details.Cells) != 2 || details.Cells[1].Status != sandbox.StatusComplete || details.Language != "js" {
		t.Errorf("details %+v", details)
	}
	// State persists across calls of one connection...
	if got := text(call(t, a, "eval", jsCells("x * 2"))); got != "40" {
		t.Errorf("second call: %q, want 40", got)
	}
	// ...and another connection has its own session.
	b := connect(t, srv, nil)
	res = call(t, b, "eval", jsCells("typeof x"))
	if got := text(res); got != "'undefined'" {
		t.Errorf("other connection sees %q, want undefined", got)
	}
}

func TestEvalFailingCellIsToolError(t *testing.T) {
	srv, _ := newServer(t)
	cs := connect(t, srv, nil)
	res := call(t, cs, "eval", jsCells("throw new TypeError('boom')", "console.log('never')"))
	if !res.IsError {
		t.Fatal("isError not set for a failing cell")
	}
	var details sandbox.Details
	structured(t, res, &details)
	if details.Cells[0].Status != sandbox.StatusError || details.Cells[1].Status != sandbox.StatusPending {
		t.Errorf("statuses %s, %s", details.Cells[0].Status, details.Cells[1].Status)
	}
	if !strings.Contains(text(res), "boom") {
		t.Errorf("content %q lacks the error", text(res))
	}
}

func TestEvalImage(t *testing.T) {
	srv, _ := newServer(t)
	cs := connect(t, srv, nil)
	const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	res := call(t, cs, "eval", jsCells(`display({type: "image", data: "`+png+`", mimeType: "image/png"})`))
	if res.IsError {
		t.Fatalf("isError: %s", text(res))
	}
	var img *mcp.ImageContent
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			img = ic
		}
	}
	if img == nil {
		t.Fatalf("no image content in %s", text(res))
	}
	if img.MIMEType != "image/png" || len(img.Data) == 0 || img.Data[0] != 0x89 {
		t.Errorf("image %s of %d bytes", img.MIMEType, len(img.Data))
	}
}

func TestBadInputIsToolError(t *testing.T) {
	srv, _ := newServer(t)
	cs := connect(t, srv, nil)
	tests := []struct {
		name, tool string
		args       any
		want       string
	}{
		{"no cells", "eval", map[string]any{"cells": []any{}}, "cells"},
		{"unknown language", "eval", map[string]any{"cells": []any{map[string]any{"language": "ruby", "code": "1"}}}, "language"},
		{"unknown cell field", "eval", map[string]any{"cells": []any{map[string]any{"language": "js", "code": "1", "timout": 3}}}, "timout"},
		{"timeoutMs out of range", "run_code", map[string]any{"language": "js", "code": "1", "timeoutMs": 9999999}, "timeoutMs"},
		{"missing code", "run_code", map[string]any{"language": "js"}, "code"},
		{"no such context", "run_in_code_context", map[string]any{"contextId": "nope", "code": "1"}, "no such code context"},
		{"delete unknown", "delete_code_context", map[string]any{"contextId": "nope"}, "no such code context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, cs, tt.tool, tt.args)
			if !res.IsError {
				t.Fatalf("isError not set: %s", text(res))
			}
			if !strings.Contains(text(res), tt.want) {
				t.Errorf("message %q does not mention %q", text(res), tt.want)
			}
		})
	}
}

// TestRunCode: run_code takes and answers the CodeInterpreter's shapes
// (the conformance table checks them in full; profiles_test.go).
func TestRunCode(t *testing.T) {
	srv, _ := newServer(t)
	cs := connect(t, srv, nil)
	res := call(t, cs, "run_code", map[string]any{"language": "javascript", "code": "console.log('hi'); globalThis.y = 1; 6 * 7"})
	var out profiles.CodeResult
	structured(t, res, &out)
	if res.IsError || out.ExitCode != 0 || out.Error != "" {
		t.Fatalf("failed: %+v", out)
	}
	if len(out.Outputs) != 2 || out.Outputs[0].Type != "stdout" || out.Outputs[0].Text != "hi\n" ||
		out.Outputs[1].Type != "result" || string(out.Outputs[1].Value) != "42" {
		t.Errorf("outputs %+v", out.Outputs)
	}
	if got := text(res); got != "hi\n42" {
		t.Errorf("text %q, want the output and the result", got)
	}
	// Stateless: the next run does not see y.
	res = call(t, cs, "run_code", map[string]any{"language": "js", "code": "y"})
	structured(t, res, &out)
	if !res.IsError || out.ExitCode != 1 || !strings.HasPrefix(out.Error, "ReferenceError") {
		t.Errorf("second run: isError %v, %+v", res.IsError, out.Error)
	}
}

func TestCodeContexts(t *testing.T) {
	srv, mgr := newServer(t)
	cs := connect(t, srv, nil)
	res := call(t, cs, "create_code_context", map[string]any{"language": "javascript"})
	var created profiles.CodeContextCreated
	structured(t, res, &created)
	if created.ContextID == "" || text(res) != created.ContextID {
		t.Fatalf("create: %q, %+v", text(res), created)
	}
	run := func(code string) profiles.CodeResult {
		t.Helper()
		res := call(t, cs, "run_in_code_context", map[string]any{"contextId": created.ContextID, "code": code})
		var out profiles.CodeResult
		structured(t, res, &out)
		return out
	}
	run("var n = 41")
	if out := run("n + 1"); out.ExitCode != 0 || len(out.Outputs) != 1 || string(out.Outputs[0].Value) != "42" {
		t.Errorf("state did not persist: %+v", out)
	}
	// Another connection (another owner over stdio) cannot use it.
	other := connect(t, srv, nil)
	if res := call(t, other, "run_in_code_context", map[string]any{"contextId": created.ContextID, "code": "n"}); !res.IsError || !strings.Contains(text(res), "no such code context") {
		t.Errorf("another connection ran in the context: %s", text(res))
	}
	n := mgr.Len()
	res = call(t, cs, "delete_code_context", map[string]any{"contextId": created.ContextID})
	var deleted profiles.CodeContextDeleted
	structured(t, res, &deleted)
	if res.IsError || !deleted.OK {
		t.Fatalf("delete: %s", text(res))
	}
	if mgr.Len() != n-1 {
		t.Errorf("sessions %d after delete, want %d", mgr.Len(), n-1)
	}
	if res := call(t, cs, "run_in_code_context", map[string]any{"contextId": created.ContextID, "code": "1"}); !res.IsError {
		t.Error("ran in a deleted context")
	}
	// The older shapes are refused, naming the field: a context made
	// without a language, runs naming theirs, id for contextId, timeout
	// in seconds.
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"create_code_context", map[string]any{}, "language: missing"},
		{"run_in_code_context", map[string]any{"id": "x", "code": "1 + 1"}, `id: not a field here`},
		{"run_in_code_context", map[string]any{"contextId": "x", "language": "js", "code": "1 + 1"}, "language: not a field here"},
		{"run_in_code_context", map[string]any{"contextId": "x", "code": "1 + 1", "timeout": 5}, "timeout: not a field here"},
	} {
		if res := call(t, cs, c.tool, c.args); !res.IsError || !strings.Contains(text(res), c.want) {
			t.Errorf("%s %v: isError %v, %q; want a refusal holding %q", c.tool, c.args, res.IsError, text(res), c.want)
		}
	}
}

func TestEvalPython(t *testing.T) {
	testenv.RequirePython(t)
	srv, _ := newServer(t)
	cs := connect(t, srv, nil)
	res := call(t, cs, "eval", map[string]any{"cells": []any{
		map[string]any{"language": "py", "code": "import math\nr = math.factorial(5)"},
		map[string]any{"language": "py", "code": "print(r)"},
	}})
	if res.IsError || !strings.HasSuffix(text(res), "120") {
		t.Errorf("isError %v, content %q", res.IsError, text(res))
	}
}

func TestSampling(t *testing.T) {
	srv, _ := newServer(t)
	var got *mcp.CreateMessageParams
	cs := connect(t, srv, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			got = req.Params
			prompt := req.Params.Messages[0].Content.(*mcp.TextContent).Text
			answer := "echo: " + prompt
			if strings.Contains(prompt, "JSON schema") {
				answer = "```json\n{\"n\": 7}\n```"
			}
			return &mcp.CreateMessageResult{Model: "fake", Role: "assistant", Content: &mcp.TextContent{Text: answer}}, nil
		},
	})
	res := call(t, cs, "eval", jsCells(
		`console.log(await llm("hello", {system: "be brief"}))`,
		`const o = await llm("a number", {schema: {type: "object"}}); console.log(o.n + 1)`,
	))
	if res.IsError {
		t.Fatalf("isError: %s", text(res))
	}
	if out := text(res); !strings.Contains(out, "echo: hello") || !strings.Contains(out, "8") {
		t.Errorf("content %q", out)
	}
	if got == nil || got.MaxTokens != mcpserver.DefaultMaxTokens {
		t.Errorf("params %+v", got)
	}

	// Without the sampling capability, llm() says what is missing.
	plain := connect(t, srv, nil)
	res = call(t, plain, "eval", jsCells(`await llm("hello")`))
	if !res.IsError || !strings.Contains(text(res), "did not offer sampling") {
		t.Errorf("without sampling: isError %v, %q", res.IsError, text(res))
	}
}

// TestConcurrentCallsBounded: with no Config.Admit (wasmeval mcp on stdio),
// at most DefaultMaxInFlight calls run code at once; the others are tool
// errors saying the server is busy, not one more interpreter each.
func TestConcurrentCallsBounded(t *testing.T) {
	srv, _ := newServer(t)
	cs := connect(t, srv, nil)
	const n = mcpserver.DefaultMaxInFlight + 8
	results := make(chan *mcp.CallToolResult, n)
	for range n {
		go func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code",
				Arguments: map[string]any{"language": "js", "code": "const t = Date.now(); while (Date.now() - t < 1500) {}", "timeoutMs": 10000}})
			if err != nil {
				res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
			}
			results <- res
		}()
	}
	busy := 0
	for range n {
		res := <-results
		if res.IsError && strings.Contains(text(res), "the server is running as many evals as it allows") {
			busy++
		} else if res.IsError {
			t.Errorf("a call failed otherwise: %s", text(res))
		}
	}
	if busy < n-mcpserver.DefaultMaxInFlight {
		t.Errorf("%d of %d calls were refused as busy; want at least %d", busy, n, n-mcpserver.DefaultMaxInFlight)
	}
}
