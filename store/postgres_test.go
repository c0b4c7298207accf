package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/store"
)

func openPG(t *testing.T, url string) *store.Postgres {
	t.Helper()
	s, err := store.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	p, ok := s.(*store.Postgres)
	if !ok {
		t.Fatalf("Open(%q) gave a %T", url, s)
	}
	return p
}

func filesByPath(fs []store.File) map[string]store.File {
	m := map[string]store.File{}
	for _, f := range fs {
		m[f.Path] = f
	}
	return m
}

// TestPostgres runs the postgres:// store against a real PostgreSQL
// cluster: records, deltas, fencing, integrity and leases.
func TestPostgres(t *testing.T) {
	pg := testenv.StartPostgres(t)
	ctx := context.Background()
	p := openPG(t, pg.URL)
	// A second node's connection to the same database.
	p2 := openPG(t, pg.URL)

	t.Run("save and load", func(t *testing.T) {
		st := &store.State{
			ID: "s1", Owner: "owner1", Artifact: "art", Options: []byte(`{"a":1}`), Python: []byte("pages"),
			Outputs: []byte(`{}`), JS: []byte(`[]`), Meta: []byte(`{"m":2}`), FuelUsed: 77, FullFiles: true,
			Files: []store.File{
				{Path: "a.txt", Mode: 0o644, ModTime: 1, Data: []byte("one")},
				{Path: "d", Mode: fs.ModeDir | 0o755, ModTime: 2},
				{Path: "d/b.txt", Mode: 0o600, ModTime: 3, Data: []byte("two")},
				{Path: "link", Mode: fs.ModeSymlink | 0o777, ModTime: 4, Data: []byte("a.txt")},
			},
		}
		if err := p.Save(ctx, st, 1); err != nil {
			t.Fatal(err)
		}
		got, err := p2.Load(ctx, "s1", "art")
		if err != nil {
			t.Fatal(err)
		}
		if got.Owner != "owner1" || string(got.Python) != "pages" || got.FuelUsed != 77 || got.Epoch != 1 ||
			got.Format != store.Format || !got.FullFiles || string(got.Meta) != `{"m":2}` || string(got.Options) != `{"a":1}` {
			t.Fatalf("loaded %+v", got)
		}
		if len(got.Files) != 4 || filesByPath(got.Files)["link"].Mode != fs.ModeSymlink|0o777 {
			t.Fatalf("files %+v", got.Files)
		}
		// A delta: one file changed, one added, one deleted.
		delta := *st
		delta.FullFiles, delta.Python = false, []byte("pages2")
		delta.Files = []store.File{
			{Path: "a.txt", Mode: 0o644, ModTime: 5, Data: []byte("one!")},
			{Path: "c.txt", Mode: 0o644, ModTime: 6, Data: []byte("three")},
			{Path: "d/b.txt", Deleted: true},
		}
		if err := p.Save(ctx, &delta, 1); err != nil {
			t.Fatal(err)
		}
		got, err = p2.Load(ctx, "s1", "art")
		if err != nil {
			t.Fatal(err)
		}
		m := filesByPath(got.Files)
		if len(m) != 4 || string(m["a.txt"].Data) != "one!" || string(m["c.txt"].Data) != "three" || m["d/b.txt"].Path != "" || string(got.Python) != "pages2" {
			t.Fatalf("after the delta: %+v", got.Files)
		}
		// FullFiles replaces the set.
		full := *st
		full.Files = []store.File{{Path: "only", Mode: 0o644, Data: []byte("x")}}
		if err := p.Save(ctx, &full, 1); err != nil {
			t.Fatal(err)
		}
		if got, err = p.Load(ctx, "s1", "art"); err != nil || len(got.Files) != 1 || got.Files[0].Path != "only" {
			t.Fatalf("after a full save: %+v, %v", got, err)
		}
		ids, err := p.List(ctx)
		if err != nil || len(ids) == 0 || ids[0] != "s1" {
			t.Fatalf("List: %v, %v", ids, err)
		}
	})

	t.Run("python frames", func(t *testing.T) {
		conn, err := pgx.Connect(ctx, pg.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		a, b, c := testFrame(strings.Repeat("a", 100<<10)), testFrame("bbb"), testFrame("ccc")
		st := &store.State{ID: "big", Artifact: "art", Python: []byte("index"), FullFiles: true}
		for round, frames := range [][]store.Frame{{a, b}, {a, c}, {a, c, b}, {}} {
			st.PythonFrames = frames
			if err := p.Save(ctx, st, 1); err != nil {
				t.Fatal(err)
			}
			got, err := p2.Load(ctx, "big", "art")
			if err != nil || string(got.Python) != "index" || !slices.Equal(frameData(got.PythonFrames), frameData(frames)) {
				t.Fatalf("round %d: %q back, want %q (%v)", round, frameData(got.PythonFrames), frameData(frames), err)
			}
			var rows int
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM wasmeval_chunks WHERE id = 'big'`).Scan(&rows); err != nil {
				t.Fatal(err)
			}
			if rows != len(frames) {
				t.Errorf("round %d: %d frame rows, want %d (no leftovers)", round, rows, len(frames))
			}
		}
		bad := testFrame("ddd")
		bad.Data = []byte("not ddd")
		st.PythonFrames = []store.Frame{a, bad}
		if err := p.Save(ctx, st, 1); err == nil || !strings.Contains(err.Error(), "does not match its Sum") {
			t.Fatalf("a frame whose Sum is wrong: %v", err)
		}
	})

	t.Run("delta needs a record", func(t *testing.T) {
		delta := &store.State{ID: "nodelta", Artifact: "art", Files: []store.File{{Path: "a", Mode: 0o644, Data: []byte("x")}}}
		if err := p.Save(ctx, delta, 1); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a delta with no record: %v, want ErrNotFound", err)
		}
		if _, err := p.Load(ctx, "nodelta", "art"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the refused delta was stored: %v", err)
		}
	})

	t.Run("saved before", func(t *testing.T) {
		if err := p.Save(ctx, &store.State{ID: "aged", Artifact: "art", FullFiles: true}, 1); err != nil {
			t.Fatal(err)
		}
		var aged store.Aged = p
		ids, err := aged.SavedBefore(ctx, time.Now().Add(-time.Hour))
		if err != nil || len(ids) != 0 {
			t.Fatalf("saved an hour ago: %v, %v", ids, err)
		}
		ids, err = aged.SavedBefore(ctx, time.Now().Add(time.Minute))
		if err != nil || !slices.Contains(ids, "aged") {
			t.Fatalf("saved before a minute from now: %v, %v", ids, err)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		if _, err := p.Load(ctx, "nope", "art"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("missing id: %v", err)
		}
		if _, err := p.Load(ctx, "s1", "other-build"); !errors.Is(err, store.ErrArtifactMismatch) {
			t.Errorf("another artifact: %v", err)
		}
		bad := &store.State{ID: "s2", Artifact: "art", Files: []store.File{{Path: "../etc/passwd", Data: []byte("x")}}, FullFiles: true}
		if err := p.Save(ctx, bad, 1); err == nil {
			t.Error("a path outside the root was saved")
		}
		if err := p.Save(ctx, &store.State{ID: "bad id!", Artifact: "art"}, 1); err == nil {
			t.Error("a bad id was saved")
		}
	})

	t.Run("corrupt", func(t *testing.T) {
		st := &store.State{ID: "c1", Artifact: "art", Python: []byte("p"), FullFiles: true, PythonFrames: []store.Frame{testFrame("frame")},
			Files: []store.File{{Path: "f", Mode: 0o644, Data: []byte("good")}}}
		if err := p.Save(ctx, st, 1); err != nil {
			t.Fatal(err)
		}
		conn, err := pgx.Connect(ctx, pg.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		for _, tc := range []struct{ name, sql string }{
			{"file data", `UPDATE wasmeval_files SET data = 'evil' WHERE id = 'c1'`},
			{"record field", `UPDATE wasmeval_sessions SET fuel_used = 999 WHERE id = 'c1'`},
			{"lost file", `DELETE FROM wasmeval_files WHERE id = 'c1'`},
			{"python frame", `UPDATE wasmeval_chunks SET data = 'evil' WHERE id = 'c1'`},
			{"lost python frame", `DELETE FROM wasmeval_chunks WHERE id = 'c1'`},
			{"python index", `UPDATE wasmeval_sessions SET pyindex = 'q' WHERE id = 'c1'`},
		} {
			if err := p.Save(ctx, st, 1); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec(ctx, tc.sql); err != nil {
				t.Fatal(err)
			}
			if got, err := p.Load(ctx, "c1", "art"); !errors.Is(err, store.ErrCorrupt) || got != nil {
				t.Errorf("%s altered: %v, %v", tc.name, got, err)
			}
		}
		if _, err := conn.Exec(ctx, `UPDATE wasmeval_sessions SET format = 99 WHERE id = 'c1'`); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Load(ctx, "c1", "art"); !errors.Is(err, store.ErrFormat) {
			t.Errorf("another format: %v", err)
		}
	})

	t.Run("leases and fencing", func(t *testing.T) {
		const ttl = 400 * time.Millisecond
		a, err := p.Acquire(ctx, "L1", "nodeA", "127.0.0.1:1", time.Minute)
		if err != nil || a.Epoch != 1 || a.Holder != "nodeA" {
			t.Fatalf("first acquire: %+v, %v", a, err)
		}
		if err := p.Save(ctx, &store.State{ID: "L1", Artifact: "art", Python: []byte("A1"), FullFiles: true}, a.Epoch); err != nil {
			t.Fatal(err)
		}
		cur, err := p2.Acquire(ctx, "L1", "nodeB", "127.0.0.1:2", ttl)
		if !errors.Is(err, store.ErrLeaseHeld) || cur.Holder != "nodeA" || cur.Addr != "127.0.0.1:1" || !cur.Live {
			t.Fatalf("acquire of a held lease: %+v, %v", cur, err)
		}
		again, err := p.Acquire(ctx, "L1", "nodeA", "127.0.0.1:1", ttl)
		if err != nil || again.Epoch != a.Epoch {
			t.Fatalf("the holder's acquire: %+v, %v (epoch must stay %d)", again, err, a.Epoch)
		}
		held, err := p.Renew(ctx, "nodeA", ttl)
		if err != nil || held["L1"].Epoch != 1 {
			t.Fatalf("Renew: %v, %v", held, err)
		}
		time.Sleep(ttl + 200*time.Millisecond)
		if l, err := p2.Get(ctx, "L1"); err != nil || l.Live {
			t.Fatalf("an expired lease: %+v, %v", l, err)
		}
		b, err := p2.Acquire(ctx, "L1", "nodeB", "127.0.0.1:2", time.Minute)
		if err != nil || b.Epoch != 2 || b.Holder != "nodeB" {
			t.Fatalf("takeover: %+v, %v", b, err)
		}
		// The old holder, partitioned away, writes before the new one:
		// refused by the lease, and what is stored stays.
		err = p.Save(ctx, &store.State{ID: "L1", Artifact: "art", Python: []byte("A2"), FullFiles: true}, a.Epoch)
		if !errors.Is(err, store.ErrStaleEpoch) {
			t.Fatalf("a stale write: %v", err)
		}
		if got, err := p.Load(ctx, "L1", "art"); err != nil || string(got.Python) != "A1" {
			t.Fatalf("after the stale write: %+v, %v", got, err)
		}
		if err := p2.Save(ctx, &store.State{ID: "L1", Artifact: "art", Python: []byte("B1"), FullFiles: true}, b.Epoch); err != nil {
			t.Fatal(err)
		}
		if held, err := p.Renew(ctx, "nodeA", ttl); err != nil || len(held) != 0 {
			t.Fatalf("the old holder's renew: %v, %v (it lost L1)", held, err)
		}
		// Released: the next node takes it at once, at a higher epoch.
		if err := p2.Release(ctx, "L1", "nodeB"); err != nil {
			t.Fatal(err)
		}
		c, err := p.Acquire(ctx, "L1", "nodeA", "127.0.0.1:1", time.Minute)
		if err != nil || c.Epoch != 3 {
			t.Fatalf("after release: %+v, %v", c, err)
		}
		if err := p.Forget(ctx, "L1"); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Get(ctx, "L1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a forgotten lease: %v", err)
		}
		// A new lease on a stored state starts above its epoch.
		if d, err := p.Acquire(ctx, "L1", "nodeC", "x", time.Minute); err != nil || d.Epoch != 3 {
			t.Fatalf("a new lease over state at epoch 2: %+v, %v", d, err)
		}
	})

	t.Run("one winner", func(t *testing.T) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		winners := 0
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := p
				if i%2 == 1 {
					s = p2
				}
				_, err := s.Acquire(ctx, "race", fmt.Sprintf("node%d", i), "x", time.Minute)
				switch {
				case err == nil:
					mu.Lock()
					winners++
					mu.Unlock()
				case !errors.Is(err, store.ErrLeaseHeld):
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if winners != 1 {
			t.Fatalf("%d nodes acquired the same lease at once", winners)
		}
	})

	t.Run("bad url", func(t *testing.T) {
		if _, err := store.Open("postgres://u:secret@127.0.0.1:1/db?sslmode=bogus"); err == nil || bytes.Contains([]byte(err.Error()), []byte("secret")) {
			t.Fatalf("a bad URL: %v (must fail, without the password)", err)
		}
	})
}

// TestPostgresOutage takes the database away: operations fail with
// ErrUnavailable in bounded time, nothing stored changes, and the store
// works again once the database is back.
func TestPostgresOutage(t *testing.T) {
	pg := testenv.StartPostgres(t)
	ctx := context.Background()
	p := openPG(t, pg.URL)
	st := &store.State{ID: "o1", Artifact: "art", Python: []byte("before"), FullFiles: true,
		Files: []store.File{{Path: "f", Mode: 0o644, Data: []byte("v1")}}}
	if err := p.Save(ctx, st, 1); err != nil {
		t.Fatal(err)
	}
	pg.Stop()
	start := time.Now()
	for name, err := range map[string]error{
		"Ping": p.Ping(ctx),
		"Save": p.Save(ctx, &store.State{ID: "o1", Artifact: "art", Python: []byte("during"), FullFiles: true}, 1),
		"Load": func() error { _, err := p.Load(ctx, "o1", "art"); return err }(),
		"Acquire": func() error {
			_, err := p.Acquire(ctx, "o1", "n", "x", time.Second)
			return err
		}(),
	} {
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s during the outage: %v (want ErrUnavailable)", name, err)
		}
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("failing took %v", d)
	}
	pg.Start()
	if err := p.Ping(ctx); err != nil {
		t.Fatalf("Ping after the outage: %v", err)
	}
	got, err := p.Load(ctx, "o1", "art")
	if err != nil || string(got.Python) != "before" || string(got.Files[0].Data) != "v1" {
		t.Fatalf("after the outage: %+v, %v", got, err)
	}
}
