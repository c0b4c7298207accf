//go:build !unix

package jupyter_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/jupyter"
)

// TestLocalKernelsUnsupported: off Unix, starting a local kernel fails at
// once, saying why and what works instead.
func TestLocalKernelsUnsupported(t *testing.T) {
	_, err := jupyter.StartLocal(context.Background(), jupyter.LocalOptions{StartOptions: jupyter.StartOptions{Root: t.TempDir()}})
	if err == nil || !strings.Contains(err.Error(), "not supported") || !strings.Contains(err.Error(), "--jupyter-url") {
		t.Fatalf("StartLocal = %v, want an error that local kernels are not supported here and names --jupyter-url", err)
	}
}
