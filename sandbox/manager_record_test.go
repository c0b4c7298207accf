package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
)

func TestManagerRecordDir(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	if _, err := sandbox.NewManager(sb, sandbox.ManagerOptions{RecordDir: "/nonexistent/tapes"}); err == nil || !strings.Contains(err.Error(), "give an existing folder") {
		t.Fatalf("a missing RecordDir: %v", err)
	}
	dir := t.TempDir()
	m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{RecordDir: dir, Session: sandbox.SessionOptions{Deterministic: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	var ids []string
	for range 2 {
		id, err := m.Create(ctx, "owner")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		if _, err := m.Eval(ctx, "owner", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "console.log(Date.now(), Math.random())"}}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		if err := m.Delete(ctx, "owner", id); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, id+".wtape")
		rep, err := replay.File(ctx, path, replay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Identical || rep.Requests != 1 || !rep.Header.Options.Deterministic {
			t.Errorf("%s: %+v", path, rep)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d tapes in the record dir; want 2", len(ents))
	}
}
