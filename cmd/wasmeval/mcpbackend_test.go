package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPContextPythonBackend: create_code_context, the session-creating
// tool of wasmeval mcp, takes the Python backend as serve's POST
// /v1/sessions does ({"python": "jupyter"}), with the same validation: a
// python context on jupyter runs in a native kernel where the operator
// gave --python-backend-choice, and is refused naming python and the flag
// where it did not; an unknown backend, and a backend for a JavaScript
// context, are refused naming the field.
func TestMCPContextPythonBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if out, err := exec.Command("/usr/bin/python3", "-c", "import ipykernel").CombinedOutput(); err != nil {
		t.Fatalf("/usr/bin/python3 cannot import ipykernel (run make jupyter-deps): %v\n%s", err, out)
	}
	bin := wasmevalBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	connect := func(args ...string) *mcp.ClientSession {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"mcp", "--workspace", t.TempDir()}, args...)...)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	call := func(cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return res
	}
	refused := func(cs *mcp.ClientSession, args map[string]any, want ...string) {
		t.Helper()
		res := call(cs, "create_code_context", args)
		if !res.IsError {
			t.Errorf("create_code_context %v accepted, want a refusal holding %q", args, want)
			return
		}
		for _, w := range want {
			if !strings.Contains(mcpText(res), w) {
				t.Errorf("create_code_context %v: refusal %q does not hold %q", args, mcpText(res), w)
			}
		}
	}
	// inKernel creates a python context with args and says whether its
	// code runs in an IPython kernel.
	inKernel := func(cs *mcp.ClientSession, args map[string]any) bool {
		t.Helper()
		res := call(cs, "create_code_context", args)
		if res.IsError {
			t.Fatalf("create_code_context %v: %s", args, mcpText(res))
		}
		id := mcpText(res)
		defer call(cs, "delete_code_context", map[string]any{"contextId": id})
		res = call(cs, "run_in_code_context", map[string]any{"contextId": id, "code": "import sys\n'ipykernel' in sys.modules"})
		var out struct {
			Outputs []struct {
				Type  string
				Value json.RawMessage
			}
		}
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
		for _, o := range out.Outputs {
			if o.Type == "result" {
				return string(o.Value) == "true"
			}
		}
		t.Fatalf("run_in_code_context %v: no result value: %s", args, b)
		return false
	}

	choosing := connect("--python-backend-choice", "--jupyter-python", "/usr/bin/python3")
	if !inKernel(choosing, map[string]any{"language": "python", "python": "jupyter"}) {
		t.Error(`a context with "python": "jupyter" did not run in a Jupyter kernel`)
	}
	if inKernel(choosing, map[string]any{"language": "python"}) {
		t.Error("a context without python ran in a Jupyter kernel; want the operator's default, wasm")
	}
	if inKernel(choosing, map[string]any{"language": "python", "python": "wasm"}) {
		t.Error(`a context with "python": "wasm" ran in a Jupyter kernel`)
	}
	refused(choosing, map[string]any{"language": "python", "python": "pyodide"}, "code_interpreter: python:", `"pyodide" is not a Python backend`, `"wasm" or "jupyter"`)
	refused(choosing, map[string]any{"language": "javascript", "python": "jupyter"}, "code_interpreter: python:", "runs no Python")
	refused(choosing, map[string]any{"language": "python", "python": 1}, "python: must be a string")

	fixed := connect()
	refused(fixed, map[string]any{"language": "python", "python": "jupyter"}, "code_interpreter: python:", `"jupyter"`, "--python-backend-choice")
	if inKernel(fixed, map[string]any{"language": "python", "python": "wasm"}) {
		t.Error(`"python": "wasm", the default, ran in a Jupyter kernel`)
	}
}
