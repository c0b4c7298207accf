package sandbox_test

import (
	"context"
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/store"
)

// BenchmarkJSJournalEval is a light JavaScript eval of a stored session
// with its journal kept (journal) and without (off, JSJournalBytes < 0):
// the difference is the journal's cost per eval (an entry, a walk of the
// root, a frame).
func BenchmarkJSJournalEval(b *testing.B) {
	for _, bc := range []struct {
		name  string
		limit int64
	}{{"journal", 0}, {"off", -1}} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			sb, err := sandbox.New(ctx, sandbox.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer sb.Close(ctx)
			d, err := store.OpenDir(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			st := d.NoSync() // the syncs' cost is the store's, not the journal's
			m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{Workspace: b.TempDir(), Store: st, IdleTimeout: -1, JSJournalBytes: bc.limit})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close(ctx)
			id, err := m.Create(ctx, "owner")
			if err != nil {
				b.Fatal(err)
			}
			req := sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "var n = (globalThis.n || 0) + Math.random() + Date.now() % 2"}}}
			if _, err := m.Eval(ctx, "owner", id, req); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := m.Eval(ctx, "owner", id, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
