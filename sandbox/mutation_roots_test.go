package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
)

// Fork checks its target before it copies anything into it. Without
// that check the copy went into the cache and only NewSession's own check
// refused the session afterwards (the cleanup then removed the copy), so
// TestForkIntoCacheIsRefused, whose source copies cleanly, could not tell
// (the mutation pass of docs/mutations.md found it). Here the source
// holds a named pipe, which a fork refuses to copy: the refusal must be
// the cache's, which is only so when nothing was copied first.
func TestForkIntoCacheRefusedBeforeCopying(t *testing.T) {
	ctx := context.Background()
	_, defCache := userCache(t)
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "planted.txt"), []byte("from the guest"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	target := filepath.Join(defCache, "fork")
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if cp, err := s.Fork(ctx, sandbox.SessionOptions{Root: target}); !errors.Is(err, sandbox.ErrRootOverlap) {
		if cp != nil {
			cp.Close(ctx)
		}
		t.Fatalf("fork into the cache: %v, want ErrRootOverlap before any copying", err)
	}
	if entries, err := os.ReadDir(target); err != nil || len(entries) != 0 {
		t.Errorf("the refused fork left %d entries in the cache (%v)", len(entries), err)
	}
}
