package sandbox_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
)

// TestRecordRefusesOutwardLinks: a recorded session (eval --record) over a
// root in which the host put a link that leads out of its folder does not
// start: its tape could not be replayed (the replay refuses to rebuild
// such a link), so NewSession says which link and what to do. Without a
// tape the same root is a session's as before, and a link that leads down
// is recorded.
func TestRecordRefusesOutwardLinks(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(ctx) })
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a"), 0o644)
	os.Symlink("a.txt", filepath.Join(root, "down"))

	var tp bytes.Buffer
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: root, Record: &tp})
	if err != nil {
		t.Fatalf("a root whose links lead down: %v", err)
	}
	s.Close(ctx)

	os.Symlink("../elsewhere", filepath.Join(root, "up"))
	_, err = sb.NewSession(ctx, sandbox.SessionOptions{Root: root, Record: &bytes.Buffer{}})
	if err == nil {
		t.Fatal("a root with a link out of it was recorded")
	}
	for _, want := range []string{`up -> "../elsewhere"`, "root is not recorded"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	s, err = sb.NewSession(ctx, sandbox.SessionOptions{Root: root})
	if err != nil {
		t.Fatalf("the same root without a tape: %v", err)
	}
	s.Close(ctx)
}
