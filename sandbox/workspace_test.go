package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
)

// TestManagerCloseKeepsNamedWorkspace: shutting a manager down must not
// empty a workspace the operator named (a graceful stop of serve used to
// delete every session's files there); a temporary one is removed whole.
func TestManagerCloseKeepsNamedWorkspace(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(ctx) })

	write := func(m *sandbox.Manager) string {
		t.Helper()
		id, err := m.Create(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		jsEval(t, m, "alice", id, "1")
		s, err := m.Session("alice", id)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(s.Root(), "work.txt")
		if err := os.WriteFile(f, []byte("an agent's afternoon"), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}

	ws := t.TempDir()
	named, err := sandbox.NewManager(sb, sandbox.ManagerOptions{Workspace: ws, IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	kept := write(named)
	if err := named.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(kept); err != nil || string(b) != "an agent's afternoon" {
		t.Errorf("Close emptied the named workspace: %q, %v", b, err)
	}

	temp, err := sandbox.NewManager(sb, sandbox.ManagerOptions{IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	gone := write(temp)
	tempWS := filepath.Dir(filepath.Dir(gone))
	if err := temp.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tempWS); !os.IsNotExist(err) {
		t.Errorf("the temporary workspace %s outlived Close: %v", tempWS, err)
	}
}
