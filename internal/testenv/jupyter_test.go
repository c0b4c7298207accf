package testenv_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// TestJupyterPython: the interpreter comes from WASMEVAL_JUPYTER_PYTHON,
// and one that cannot import ipykernel, or a module asked for besides, or
// is not there at all fails the test rather than skipping it.
func TestJupyterPython(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "python3")
	// A "python" that imports only ipykernel.
	os.WriteFile(fake, []byte("#!/bin/sh\n[ \"$2\" = \"import ipykernel\" ]\n"), 0o755)
	for _, tc := range []struct {
		name, env string
		also      []string
		fail      bool
	}{
		{"ipykernel", fake, nil, false},
		{"ipykernel and numpy", fake, []string{"numpy"}, true},
		{"no interpreter", filepath.Join(t.TempDir(), "none"), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(testenv.JupyterPythonEnv, tc.env)
			var got string
			skip, fail := run(func(tb testing.TB) { got = testenv.JupyterPython(tb, tc.also...) })
			if skip || fail != tc.fail || (!fail && got != fake) {
				t.Errorf("JupyterPython: %q, skipped %v, failed %v; want %q, failed %v", got, skip, fail, fake, tc.fail)
			}
		})
	}
}
