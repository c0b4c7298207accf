package profiles_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/sandbox"
)

// TestProfilesOnJupyter: the python profile (the seed's own tool runs on a
// Jupyter kernel) and code_interpreter's result values work on the jupyter
// backend as on the wasm one. Its setup and value cells send JSON text in
// +json display bundles, which the kernel's runtime used to quote again
// ("the call's setup gave no result"), and IPython keeps the last value in
// the user's namespace, not builtins._ (every value came back null).
func TestProfilesOnJupyter(t *testing.T) {
	py := testenv.JupyterPython(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{PythonBackend: sandbox.PythonJupyter,
		Jupyter: sandbox.JupyterOptions{Python: py}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	sess, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(ctx)
	env, contexts := profiles.SessionEnv(sess)
	defer contexts.Close(ctx)

	p, err := profiles.DecodePython([]byte(`{"cells": [{"code": "x = 6 * 7"}, {"code": "print(x)"}], "timeout": 60}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := profiles.RunPython(ctx, env, p)
	if err != nil {
		t.Fatalf("python profile on jupyter: %v", err)
	}
	if res.Details.IsError || !strings.Contains(res.Details.Cells[1].Output, "42") {
		t.Errorf("python profile on jupyter: isError %v, cells %+v", res.Details.IsError, res.Details.Cells)
	}

	// A caught input() fails its cell and stops the cells after it, in a
	// kernel as in the CPython sandbox.
	p, err = profiles.DecodePython([]byte(`{"cells": [{"code": "try:\n    input()\nexcept Exception:\n    pass\nprint('went on')"}, {"code": "print('second')"}], "timeout": 60}`))
	if err != nil {
		t.Fatal(err)
	}
	if res, err = profiles.RunPython(ctx, env, p); err != nil {
		t.Fatal(err)
	}
	if c := res.Details.Cells; !res.Details.StdinRequested || c[0].Status != sandbox.StatusError || c[1].Status != sandbox.StatusPending {
		t.Errorf("a caught input() on jupyter: stdinRequested %v, cells %+v; want the first failed, the second pending", res.Details.StdinRequested, c)
	}

	for code, want := range map[string]string{
		"[1, 2]":              `[1,2]`,
		"x = 5\nx * 2":        `10`,
		`{"a": (1, None)}`:    `{"a":[1,null]}`,
		"'text'":              `"text"`,
		"object.__name__[:3]": `"obj"`,
	} {
		res, err := profiles.RunCode(ctx, env, profiles.CodeRunParams{Language: "python", Code: code})
		if err != nil {
			t.Fatalf("%q: %v", code, err)
		}
		var got string
		for _, o := range res.Outputs {
			if o.Type == "result" {
				b, _ := json.Marshal(o.Value)
				got = string(b)
			}
		}
		if got != want {
			t.Errorf("runCode %q on jupyter: result %s, want %s (outputs %+v)", code, got, want, res.Outputs)
		}
	}
}
