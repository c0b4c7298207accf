package mcpserver_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/profiles/profiletest"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server/mcpserver"
)

// newProfileServer starts a Server serving tools; created reports the
// owner and id of each session it makes.
func newProfileServer(t *testing.T, tools profiles.Set, created func(owner, id string)) *mcpserver.Server {
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
	srv, err := mcpserver.New(mcpserver.Config{Sandbox: sb, Manager: mgr, TempDir: t.TempDir(), Tools: tools,
		Create: func(ctx context.Context, owner string) (string, error) {
			id, err := mgr.Create(ctx, owner)
			if err == nil && created != nil {
				s, _ := mgr.Session(owner, id)
				created(s.Root(), id)
			}
			return id, err
		}})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestEvaluatePythonMCP runs the evaluate_python conformance table on the
// MCP tool, through the SDK's client.
func TestEvaluatePythonMCP(t *testing.T) {
	testenv.RequirePython(t)
	var mu sync.Mutex
	var root string
	srv := newProfileServer(t, profiles.All(), func(r, _ string) { mu.Lock(); root = r; mu.Unlock() })
	cs := connect(t, srv, nil)
	profiletest.RunEvaluatePython(t, profiletest.Face{
		Call: func(ctx context.Context, args []byte) ([]byte, string, error) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "evaluate_python", Arguments: json.RawMessage(args)})
			if err != nil {
				return nil, "", err
			}
			if res.StructuredContent == nil {
				if !res.IsError {
					return nil, "", &json.UnsupportedValueError{Str: "a result without structured content: " + text(res)}
				}
				return nil, text(res), nil
			}
			b, err := json.Marshal(res.StructuredContent)
			if err != nil {
				return nil, "", err
			}
			var r profiletest.EvalResult
			json.Unmarshal(b, &r)
			// The table's failed runs end in a traceback or a timeout.
			if want := strings.Contains(r.Stderr, "Traceback") || r.Stderr == "Execution timed out."; res.IsError != want {
				t.Errorf("isError = %v for stderr %q and value_repr %v", res.IsError, r.Stderr, r.ValueRepr)
			}
			var fromText, fromStructured any
			json.Unmarshal([]byte(text(res)), &fromText)
			json.Unmarshal(b, &fromStructured)
			if !reflect.DeepEqual(fromText, fromStructured) {
				t.Errorf("the text content is not the structured result %.300s", b)
			}
			return b, "", nil
		},
		Root: func() string { mu.Lock(); defer mu.Unlock(); return root },
	})
}

// TestEvaluatePythonMCPSharesEvalSession checks that evaluate_python runs
// in the connection's eval session: files shared, variables not.
func TestEvaluatePythonMCPSharesEvalSession(t *testing.T) {
	testenv.RequirePython(t)
	cs := connect(t, newProfileServer(t, profiles.All(), nil), nil)
	call(t, cs, "eval", map[string]any{"cells": []map[string]any{{"language": "py", "code": "x = 5\nopen('n.txt', 'w').write('7')"}}})
	var r profiletest.EvalResult
	res := call(t, cs, "evaluate_python", map[string]any{"code": "int(globals()['n.txt']) * 6 + ('x' in globals())", "reads": []map[string]string{{"path": "n.txt"}}, "writes": []map[string]string{{"path": "out.txt", "content": "{x}", "mode": "create"}}, "globals": map[string]string{"x": "\"from ep\""}})
	structured(t, res, &r)
	if r.ValueRepr == nil || *r.ValueRepr != "43" {
		t.Fatalf("value_repr %v, stderr %q; want 43 (the file read, x given)", r.ValueRepr, r.Stderr)
	}
	out := call(t, cs, "eval", map[string]any{"cells": []map[string]any{{"language": "py", "code": "print(x, open('out.txt').read())"}}})
	if got := text(out); !strings.Contains(got, "5 from ep") {
		t.Errorf("eval printed %q; want its own x (5) and the file evaluate_python wrote", got)
	}
}

// TestMCPTools checks Config.Tools: the tools of the profiles left out are
// not listed.
func TestMCPTools(t *testing.T) {
	for _, tc := range []struct {
		tools string
		want  []string
	}{
		{"", []string{"create_code_context", "delete_code_context", "eval", "evaluate_python", "python", "run_code", "run_in_code_context"}},
		{"evaluate_python", []string{"evaluate_python"}},
		{"python", []string{"python"}},
		{"eval,code_interpreter", []string{"create_code_context", "delete_code_context", "eval", "run_code", "run_in_code_context"}},
	} {
		set, err := profiles.ParseTools(tc.tools)
		if err != nil {
			t.Fatal(err)
		}
		cs := connect(t, newProfileServer(t, set, nil), nil)
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, tc.want) {
			t.Errorf("--tools %q lists %v, want %v", tc.tools, names, tc.want)
		}
		if slices.Contains(names, "evaluate_python") {
			for _, tool := range list.Tools {
				if tool.Name == "evaluate_python" {
					schema, _ := json.Marshal(tool.InputSchema)
					for _, f := range []string{`"code"`, `"globals"`, `"reads"`, `"writes"`, `"create","overwrite","append"`} {
						if !strings.Contains(string(schema), f) {
							t.Errorf("the input schema %s lacks %s", schema, f)
						}
					}
				}
			}
		}
	}
}

// TestEvaluatePythonMCPProgress checks that an evaluate_python call with a
// progressToken streams its code's output as progress notifications, as
// eval does, and never the wrapper's result bundle.
func TestEvaluatePythonMCPProgress(t *testing.T) {
	testenv.RequirePython(t)
	n := &notes{}
	cs := connect(t, newProfileServer(t, profiles.All(), nil), n.options())
	params := &mcp.CallToolParams{Name: "evaluate_python", Arguments: map[string]any{"code": "print('one')\nprint('two')\n6 * 7"}}
	params.SetProgressToken("tok-ep")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}
	n.waitFor(t, "the output as progress", func() bool {
		var b strings.Builder
		for _, p := range n.progress {
			b.WriteString(p.Message)
		}
		return strings.Contains(b.String(), "one\ntwo\n")
	})
	if got := n.text(); strings.Contains(got, "vnd.wasmeval") || strings.Contains(got, "nonce") {
		t.Errorf("progress carried the wrapper's result: %q", got)
	}
}

// mcpTool is a profiletest.Face's Tool over the SDK's client: a refusal
// is a tool error without structured content.
func mcpTool(cs *mcp.ClientSession) func(ctx context.Context, name string, args []byte) ([]byte, string, error) {
	return func(ctx context.Context, name string, args []byte) ([]byte, string, error) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			return nil, "", err
		}
		if res.StructuredContent == nil {
			if !res.IsError {
				return nil, "", &json.UnsupportedValueError{Str: "a result without structured content: " + text(res)}
			}
			return nil, text(res), nil
		}
		b, err := json.Marshal(res.StructuredContent)
		return b, "", err
	}
}

// TestPythonMCP runs the python conformance table on the MCP tool: in the
// connection's eval session.
func TestPythonMCP(t *testing.T) {
	testenv.RequirePython(t)
	var mu sync.Mutex
	var root string
	srv := newProfileServer(t, profiles.All(), func(r, _ string) {
		mu.Lock()
		if root == "" {
			root = r // the connection's eval session, made by the first call
		}
		mu.Unlock()
	})
	cs := connect(t, srv, nil)
	profiletest.RunPython(t, profiletest.Face{Tool: mcpTool(cs), Root: func() string { mu.Lock(); defer mu.Unlock(); return root }})
	// The python tool shares the eval tool's session.
	call(t, cs, "python", map[string]any{"cells": []map[string]any{{"code": "shared = 'from python'"}}})
	if got := text(call(t, cs, "eval", map[string]any{"cells": []map[string]any{{"language": "py", "code": "print(shared)"}}})); got != "from python" {
		t.Errorf("eval printed %q, want the python tool's variable", got)
	}
}

// TestCodeInterpreterMCP runs the code_interpreter conformance table on
// the MCP tools run_code, create_code_context, run_in_code_context and
// delete_code_context.
func TestCodeInterpreterMCP(t *testing.T) {
	testenv.RequirePython(t)
	cs := connect(t, newProfileServer(t, profiles.All(), nil), nil)
	profiletest.RunCodeInterpreter(t, profiletest.Face{Tool: mcpTool(cs)})
}

// TestPythonMCPKernelMode checks Config.KernelMode: per-call by default
// for calls that name no mode, and a call's kernelMode wins.
func TestPythonMCPKernelMode(t *testing.T) {
	testenv.RequirePython(t)
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
	srv, err := mcpserver.New(mcpserver.Config{Sandbox: sb, Manager: mgr, KernelMode: profiles.KernelPerCall})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, srv, nil)
	py := func(code, mode string) string {
		args := map[string]any{"cells": []map[string]any{{"code": code}}}
		if mode != "" {
			args["kernelMode"] = mode
		}
		return text(call(t, cs, "python", args))
	}
	py("x = 1", "")
	if got := py("print('x' in globals())", ""); got != "False" {
		t.Errorf("per-call by default: %q, want False", got)
	}
	py("y = 2", "session")
	if got := py("print(y)", "session"); got != "2" {
		t.Errorf("kernelMode session: %q, want 2", got)
	}
}

// TestPythonMCPProgress checks that a python call with a progressToken
// streams its cells' output as progress notifications, never the setup's
// or the stdin mark's bundles.
func TestPythonMCPProgress(t *testing.T) {
	testenv.RequirePython(t)
	n := &notes{}
	cs := connect(t, newProfileServer(t, profiles.All(), nil), n.options())
	params := &mcp.CallToolParams{Name: "python", Arguments: map[string]any{"cells": []map[string]any{{"code": "print('one')"}, {"code": "print('two')\ninput()"}}}}
	params.SetProgressToken("tok-py")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || !res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}
	n.waitFor(t, "the output as progress", func() bool {
		var b strings.Builder
		for _, p := range n.progress {
			b.WriteString(p.Message)
		}
		return strings.Contains(b.String(), "one\ntwo\n")
	})
	if got := n.text(); strings.Contains(got, "vnd.wasmeval") || strings.Contains(got, "nonce") {
		t.Errorf("progress carried a profile's own bundle: %q", got)
	}
}
