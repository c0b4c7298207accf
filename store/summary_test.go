package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/store"
)

// TestSummaries: Summaries lists one owner's records by id, with their
// metadata, fuel, whether they hold a Python state and when they were
// saved, without another owner's; on the Dir a record whose header
// cannot be read is left out.
func TestSummaries(t *testing.T) {
	dir, root := openDir(t)
	stores := []struct {
		name string
		st   store.Store
	}{{"dir", dir}}
	if pg := testenv.StartPostgres(t); pg != nil {
		stores = append(stores, struct {
			name string
			st   store.Store
		}{"postgres", openPG(t, pg.URL)})
	}
	for _, tc := range stores {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			before := time.Now().Add(-time.Second)
			save := func(id, owner string, python []byte, fuel uint64) {
				t.Helper()
				st := &store.State{ID: id, Owner: owner, Artifact: "art", Python: python, FuelUsed: fuel,
					Meta: []byte(`{"created":"2026-01-02T03:04:05Z"}`), FullFiles: true,
					Files: []store.File{{Path: "a.txt", Mode: 0o600, Data: []byte("x")}}}
				if err := tc.st.Save(ctx, st, 1); err != nil {
					t.Fatal(err)
				}
			}
			save("b-session", "alice", []byte("pages"), 7)
			save("a-session", "alice", nil, 0)
			save("c-session", "bob", []byte("pages"), 9)
			sum := tc.st.(store.Summarizer)
			got, err := sum.Summaries(ctx, "alice")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].ID != "a-session" || got[1].ID != "b-session" {
				t.Fatalf("alice's summaries: %+v", got)
			}
			a, b := got[0], got[1]
			if a.HasPython || !b.HasPython || b.FuelUsed != 7 || a.Owner != "alice" ||
				string(b.Meta) != `{"created":"2026-01-02T03:04:05Z"}` || b.Saved.Before(before) || b.Saved.After(time.Now().Add(time.Second)) {
				t.Errorf("summaries: %+v", got)
			}
			if none, err := sum.Summaries(ctx, "carol"); err != nil || len(none) != 0 {
				t.Errorf("carol's: %+v, %v", none, err)
			}
			if tc.name != "dir" {
				return
			}
			if err := os.WriteFile(filepath.Join(root, "a-session", "log"), []byte("not a record"), 0o600); err != nil {
				t.Fatal(err)
			}
			if got, err := sum.Summaries(ctx, "alice"); err != nil || len(got) != 1 || got[0].ID != "b-session" {
				t.Errorf("with a damaged record: %+v, %v", got, err)
			}
		})
	}
}
