package jupyter_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/sandbox"
)

// TestKernelKeepsHostPATH: a session's default environment gives a wasm
// guest runtimes.GuestPATH, not the host's PATH, but a kernel runs the
// host's programs and keeps the host's PATH (the seed's allowlist).
func TestKernelKeepsHostPATH(t *testing.T) {
	ctx := context.Background()
	t.Setenv("PATH", "/opt/kernel-tools/bin:"+os.Getenv("PATH"))
	s, err := kernelSandbox(t).NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	text := evalOK(t, s, "import os\nprint(os.environ['PATH'])")
	if !strings.Contains(text, "/opt/kernel-tools/bin") || strings.TrimSpace(text) == runtimes.GuestPATH {
		t.Errorf("the kernel's PATH is %q, want the host's (with /opt/kernel-tools/bin)", text)
	}
}
