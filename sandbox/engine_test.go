package sandbox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/wasm"
)

// TestOptionsEngine: a bad engine name is refused by New, naming the good
// ones; Options.Engine reaches the Python runtime and wins over
// $WASMEVAL_ENGINE (set here to a bad name, which Python would refuse).
func TestOptionsEngine(t *testing.T) {
	ctx := context.Background()
	t.Setenv(wasm.EngineEnv, "")
	if _, err := sandbox.New(ctx, sandbox.Options{Engine: "v8"}); err == nil || err.Error() != `sandbox: Options.Engine "v8": use wazero or wasmtime` {
		t.Fatalf("got %v", err)
	}
	t.Setenv(wasm.EngineEnv, "wasmer")
	if _, err := sandbox.New(ctx, sandbox.Options{}); err == nil || err.Error() != `sandbox: $WASMEVAL_ENGINE "wasmer": use wazero or wasmtime` {
		t.Fatalf("got %v", err)
	}
	for _, engine := range wasm.Engines() {
		t.Run(engine, func(t *testing.T) {
			sb, err := sandbox.New(ctx, sandbox.Options{Engine: engine})
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close(ctx)
			s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			out, res := evalLang(t, s, "py", "import sys\nprint(sum(range(10)), sys.platform)")
			if res.Details.IsError || !strings.Contains(out, "45 wasi") {
				t.Fatalf("error %v, output %q", res.Details.IsError, out)
			}
		})
	}
}
