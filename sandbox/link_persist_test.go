package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestManagerStoreKeepsNpmLinks: a persisted session over npm-installed
// packages moves to another workspace with its node_modules/.bin links,
// which a save dropped before (links were kept only as the guest may make
// them, down from their folder): the package's command was gone after a
// restart. The guest reads the command through the link on both sides.
func TestManagerStoreKeepsNpmLinks(t *testing.T) {
	st := dirStore(t)
	ctx := context.Background()
	ws1 := t.TempDir()
	m1 := storeManager(t, ws1, st)
	id, err := m1.Create(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	// What npm install leaves in the session's folder.
	root := filepath.Join(ws1, id)
	os.MkdirAll(filepath.Join(root, "node_modules/x/bin"), 0o755)
	os.MkdirAll(filepath.Join(root, "node_modules/.bin"), 0o755)
	os.WriteFile(filepath.Join(root, "node_modules/x/bin/x"), []byte("cli"), 0o755)
	if err := os.Symlink("../x/bin/x", filepath.Join(root, "node_modules/.bin/x")); err != nil {
		t.Fatal(err)
	}
	read := "print(require('fs').readFileSync('node_modules/.bin/x', 'utf8'))"
	if got := evalText(t, m1, "alice", id, "js", read).Content[0].Text; got != "cli" {
		t.Fatalf("before the move: %q", got)
	}
	m1.Close(ctx)

	ws2 := t.TempDir()
	m2 := storeManager(t, ws2, st)
	if got := evalText(t, m2, "alice", id, "js", read).Content[0].Text; got != "cli" {
		t.Fatalf("after the move: %q", got)
	}
	if got, err := os.Readlink(filepath.Join(ws2, id, "node_modules/.bin/x")); err != nil || got != "../x/bin/x" {
		t.Fatalf("the moved session's link: %q, %v", got, err)
	}
}
