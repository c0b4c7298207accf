package store_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/store"
)

func openDir(t *testing.T) (*store.Dir, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := store.Open("dir://" + dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*store.Dir), dir
}

func files(st *store.State) map[string]string {
	m := map[string]string{}
	for _, f := range st.Files {
		switch {
		case f.Mode.IsDir():
			m[f.Path] = "dir"
		case f.Mode&fs.ModeSymlink != 0:
			m[f.Path] = "-> " + string(f.Data)
		default:
			m[f.Path] = string(f.Data)
		}
	}
	return m
}

// TestDirRoundTrip: a full save then deltas (a change, a new file, a
// removed folder) load back as the complete set, with the metadata and
// the Python state.
func TestDirRoundTrip(t *testing.T) {
	s, _ := openDir(t)
	ctx := context.Background()
	st := &store.State{
		ID: "abc123", Owner: "ownerhash", Artifact: "py-1", Options: []byte(`{"env":{"A":"1"}}`),
		Python: bytes.Repeat([]byte("pages"), 1000), Outputs: []byte(`["x"]`), FuelUsed: 77, JS: []byte(`{"had":true}`),
		FullFiles: true,
		Files: []store.File{
			{Path: "a.txt", Mode: 0o644, Data: []byte("one")},
			{Path: "sub", Mode: fs.ModeDir | 0o755},
			{Path: "sub/b.txt", Mode: 0o600, Data: []byte("two")},
			{Path: "link", Mode: fs.ModeSymlink | 0o777, Data: []byte("a.txt")},
			{Path: "same.txt", Mode: 0o644, Data: []byte("one")},
		},
	}
	if err := s.Save(ctx, st, 1); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(ctx, "abc123", "py-1"); err != nil || string(got.Outputs) != `["x"]` || string(got.Options) != `{"env":{"A":"1"}}` || string(got.JS) != `{"had":true}` {
		t.Fatalf("first save: %+v, %v", got, err)
	}
	delta := &store.State{ID: "abc123", Owner: "ownerhash", Artifact: "py-1", Python: []byte("later pages"), FuelUsed: 99, Outputs: []byte(`["x","y"]`),
		Files: []store.File{
			{Path: "a.txt", Mode: 0o644, Data: []byte("one, changed")},
			{Path: "c.txt", Mode: 0o644, Data: []byte("three")},
			{Path: "sub", Deleted: true},
		},
	}
	if err := s.Save(ctx, delta, 1); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, "abc123", "py-1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a.txt": "one, changed", "c.txt": "three", "link": "-> a.txt", "same.txt": "one"}
	if g := files(got); !equalMaps(g, want) {
		t.Fatalf("files %v, want %v", g, want)
	}
	if string(got.Python) != "later pages" || string(got.Outputs) != `["x","y"]` || got.FuelUsed != 99 || got.Owner != "ownerhash" || !got.FullFiles || got.Epoch != 1 || got.Format != store.Format {
		t.Fatalf("loaded %+v", got)
	}
	ids, err := s.List(ctx)
	if err != nil || !slices.Equal(ids, []string{"abc123"}) {
		t.Fatalf("List = %v, %v", ids, err)
	}
	// The session is its log alone.
	if entries, _ := os.ReadDir(filepath.Join(s.Root(), "abc123")); len(entries) != 1 || entries[0].Name() != "log" {
		t.Fatalf("the session's folder holds %v, want its log alone", entries)
	}
	if err := s.Delete(ctx, "abc123"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "abc123", "py-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Load after Delete: %v", err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestDirStaleEpoch: a save at an epoch below the stored one is refused
// and stores nothing; equal or higher is taken.
func TestDirStaleEpoch(t *testing.T) {
	s, _ := openDir(t)
	ctx := context.Background()
	save := func(epoch int64, py string) error {
		return s.Save(ctx, &store.State{ID: "s1", Artifact: "py-1", Python: []byte(py), FullFiles: true}, epoch)
	}
	if err := save(5, "five"); err != nil {
		t.Fatal(err)
	}
	if err := save(4, "four"); !errors.Is(err, store.ErrStaleEpoch) {
		t.Fatalf("save at epoch 4 over 5: %v, want ErrStaleEpoch", err)
	}
	got, err := s.Load(ctx, "s1", "py-1")
	if err != nil || string(got.Python) != "five" || got.Epoch != 5 {
		t.Fatalf("after a stale save: %q epoch %d, %v", got.Python, got.Epoch, err)
	}
	if err := save(5, "five again"); err != nil {
		t.Fatal(err)
	}
	if err := save(6, "six"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load(ctx, "s1", "py-1"); string(got.Python) != "six" || got.Epoch != 6 {
		t.Fatalf("got %q epoch %d", got.Python, got.Epoch)
	}
}

// TestDirCorrupt: a record or a file whose bytes changed on disk is
// refused with ErrCorrupt, naming the session; nothing of it loads.
func TestDirCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   error
	}{
		{"record byte flipped", func(t *testing.T, dir string) { flip(t, logOf(dir, "s1"), -3) }, store.ErrCorrupt},
		{"record cut", func(t *testing.T, dir string) { cut(t, logOf(dir, "s1")) }, store.ErrCorrupt},
		{"not a log", func(t *testing.T, dir string) {
			os.WriteFile(logOf(dir, "s1"), []byte("hello"), 0o600)
		}, store.ErrCorrupt},
		{"file content changed", func(t *testing.T, dir string) { flipAt(t, logOf(dir, "s1"), "content") }, store.ErrCorrupt},
		{"another format", func(t *testing.T, dir string) { flip(t, logOf(dir, "s1"), len("wasmeval-log\n")) }, store.ErrFormat},
		{"python frame changed", func(t *testing.T, dir string) { flipAt(t, logOf(dir, "s1"), "frame") }, store.ErrCorrupt},
		{"earlier record damaged", func(t *testing.T, dir string) {
			// Whole records follow the damaged one: not a crash's tail,
			// and loading the state before it would lose saves.
			flipAt(t, logOf(dir, "s1"), "content")
		}, store.ErrCorrupt},
		{"earlier build's layout", func(t *testing.T, dir string) {
			os.Remove(logOf(dir, "s1"))
			os.WriteFile(filepath.Join(dir, "s1", "state"), []byte("wasmeval-state\n"), 0o600)
		}, store.ErrFormat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := openDir(t)
			ctx := context.Background()
			st := &store.State{ID: "s1", Artifact: "py-1", Python: []byte("pages"), FullFiles: true,
				PythonFrames: []store.Frame{testFrame("frame")},
				Files:        []store.File{{Path: "f.txt", Mode: 0o644, Data: []byte("content")}}}
			if err := s.Save(ctx, st, 1); err != nil {
				t.Fatal(err)
			}
			if tc.name == "earlier record damaged" {
				later := &store.State{ID: "s1", Artifact: "py-1", Python: []byte("pages 2"), PythonFrames: []store.Frame{testFrame("frame")}}
				if err := s.Save(ctx, later, 1); err != nil {
					t.Fatal(err)
				}
			}
			tc.damage(t, dir)
			got, err := s.Load(ctx, "s1", "py-1")
			if !errors.Is(err, tc.want) || got != nil || !strings.Contains(err.Error(), "s1") {
				t.Fatalf("Load of a damaged record: %v, %v; want %v naming the session", got, err, tc.want)
			}
		})
	}
}

func flip(t *testing.T, path string, at int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if at < 0 {
		at += len(b)
	}
	b[at] ^= 0x55
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// logOf is the log of session id of the dir store at root.
func logOf(root, id string) string { return filepath.Join(root, id, "log") }

// flipAt flips the first byte of the last occurrence of what in path.
func flipAt(t *testing.T, path, what string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.LastIndex(b, []byte(what))
	if i < 0 {
		t.Fatalf("%q is not in %s", what, path)
	}
	flip(t, path, i)
}

func cut(t *testing.T, path string) {
	t.Helper()
	b, _ := os.ReadFile(path)
	os.WriteFile(path, b[:len(b)-2], 0o600)
}

// TestDirArtifactMismatch: a state saved by another Python build is
// refused with ErrArtifactMismatch, never returned.
func TestDirArtifactMismatch(t *testing.T) {
	s, _ := openDir(t)
	ctx := context.Background()
	if err := s.Save(ctx, &store.State{ID: "s1", Artifact: "py-old", Python: []byte("pages"), FullFiles: true}, 1); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, "s1", "py-new")
	if !errors.Is(err, store.ErrArtifactMismatch) || got != nil || !strings.Contains(err.Error(), "py-old") {
		t.Fatalf("Load by another build: %v, %v", got, err)
	}
}

// TestOpenAndPaths: bad URLs and paths are refused saying what is right.
func TestOpenAndPaths(t *testing.T) {
	for _, u := range []string{"dir://relative/path", "nope", "ftp://x/y", "dir:///tmp/x?y=1", "dir:///tmp/x?sync=sometimes"} {
		if _, err := store.Open(u); err == nil || !strings.Contains(err.Error(), "dir:///") {
			t.Errorf("Open(%q) = %v, want an error showing dir:///path", u, err)
		}
	}
	nosync, err := store.Open("dir://" + t.TempDir() + "?sync=none")
	if err != nil {
		t.Fatal(err)
	}
	if err := nosync.Save(context.Background(), &store.State{ID: "s1", Artifact: "a", Python: []byte("p"), FullFiles: true}, 1); err != nil {
		t.Fatal(err)
	}
	if st, err := nosync.Load(context.Background(), "s1", "a"); err != nil || string(st.Python) != "p" {
		t.Fatalf("?sync=none: %v", err)
	}
	s, _ := openDir(t)
	for _, p := range []string{"", "/abs", "../up", "a/../b", "a//b", "./a"} {
		err := s.Save(context.Background(), &store.State{ID: "s1", FullFiles: true, Files: []store.File{{Path: p, Mode: 0o644}}}, 1)
		if err == nil || !strings.Contains(err.Error(), "session root") {
			t.Errorf("Save with path %q: %v", p, err)
		}
	}
	if err := s.Save(context.Background(), &store.State{ID: "../x"}, 1); err == nil {
		t.Error("Save with id ../x: no error")
	}
}

// TestDirDeltaNeedsRecord: a delta of files for an id with no record is
// refused (ErrNotFound), so a record never holds a delta alone.
func TestDirDeltaNeedsRecord(t *testing.T) {
	s, _ := openDir(t)
	ctx := context.Background()
	delta := &store.State{ID: "s1", Artifact: "a", Files: []store.File{{Path: "new.txt", Mode: 0o644, Data: []byte("x")}}}
	if err := s.Save(ctx, delta, 1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delta with no record: %v, want ErrNotFound", err)
	}
	if _, err := s.Load(ctx, "s1", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused delta stored something: %v", err)
	}
}
