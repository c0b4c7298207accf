package store_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/store"
)

func testFrame(s string) store.Frame {
	return store.Frame{Sum: sha256.Sum256([]byte(s)), Data: []byte(s)}
}

func frameData(fs []store.Frame) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Data))
	}
	return out
}

// TestDirFrames: a save that hands back the last save's Python frames and
// one new frame writes only the new one (the log grows by it, not by the
// kept frames); a new frame whose Sum is not its bytes' hash is refused
// and nothing is stored.
func TestDirFrames(t *testing.T) {
	s, dir := openDir(t)
	ctx := context.Background()
	a, b, c := testFrame(strings.Repeat("a", 5000)), testFrame("bbb"), testFrame("ccc")
	st := &store.State{ID: "s1", Artifact: "py-1", Python: []byte("index 1"), PythonFrames: []store.Frame{a, b}, FullFiles: true}
	if err := s.Save(ctx, st, 1); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(logOf(dir, "s1"))
	if err != nil {
		t.Fatal(err)
	}
	st2 := &store.State{ID: "s1", Artifact: "py-1", Python: []byte("index 2"), PythonFrames: []store.Frame{a, c}}
	if err := s.Save(ctx, st2, 1); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(logOf(dir, "s1"))
	if err != nil {
		t.Fatal(err)
	}
	if grew := after.Size() - before.Size(); grew <= 0 || grew >= 1000 {
		t.Fatalf("the log grew by %d bytes for one new 3-byte frame (the kept 5000-byte one written again?)", grew)
	}
	got, err := s.Load(ctx, "s1", "py-1")
	if err != nil || string(got.Python) != "index 2" || !slices.Equal(frameData(got.PythonFrames), frameData(st2.PythonFrames)) {
		t.Fatalf("loaded %q, %q, %v", got.Python, frameData(got.PythonFrames), err)
	}
	for i, f := range got.PythonFrames {
		if f.Sum != st2.PythonFrames[i].Sum {
			t.Fatalf("frame %d loaded with another Sum", i)
		}
	}
	bad := testFrame("ddd")
	bad.Data = []byte("not ddd")
	err = s.Save(ctx, &store.State{ID: "s1", Artifact: "py-1", Python: []byte("index 3"), PythonFrames: []store.Frame{a, bad}}, 1)
	if err == nil || !strings.Contains(err.Error(), "does not match its Sum") {
		t.Fatalf("a frame whose Sum is wrong: %v", err)
	}
	if got, err := s.Load(ctx, "s1", "py-1"); err != nil || string(got.Python) != "index 2" {
		t.Fatalf("after a refused save: %q, %v", got.Python, err)
	}
}

// TestDirUnwritable: a store whose folder cannot be written (here: made a
// file, as root ignores permissions) fails saves with ErrUnavailable,
// naming the folder; what was stored loads as it was; once the folder is
// back, saves work again. A store whose folder is gone is unavailable,
// not empty: a load does not say the session does not exist.
func TestDirUnwritable(t *testing.T) {
	s, dir := openDir(t)
	ctx := context.Background()
	st := &store.State{ID: "s1", Artifact: "py-1", Python: []byte("index"), PythonFrames: []store.Frame{testFrame("one")}, FullFiles: true,
		Files: []store.File{{Path: "f.txt", Mode: 0o644, Data: []byte("v1")}}}
	if err := s.Save(ctx, st, 1); err != nil {
		t.Fatal(err)
	}
	// The session's folder made a file.
	sess := filepath.Join(dir, "s1")
	if err := os.Rename(sess, sess+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sess, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	later := &store.State{ID: "s1", Artifact: "py-1", Python: []byte("index 2"), PythonFrames: []store.Frame{testFrame("one"), testFrame("two")},
		Files: []store.File{{Path: "f.txt", Mode: 0o644, Data: []byte("v2")}}}
	err := s.Save(ctx, later, 1)
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("a save into an unwritable folder: %v, want ErrUnavailable naming %s", err, dir)
	}
	os.Remove(sess)
	if err := os.Rename(sess+".away", sess); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, "s1", "py-1")
	if err != nil || string(got.Python) != "index" || string(got.Files[0].Data) != "v1" {
		t.Fatalf("after the failed save: %+v, %v", got, err)
	}
	if err := s.Save(ctx, later, 1); err != nil {
		t.Fatalf("a save once the folder is back: %v", err)
	}
	if got, err := s.Load(ctx, "s1", "py-1"); err != nil || string(got.Python) != "index 2" || string(got.Files[0].Data) != "v2" || len(got.PythonFrames) != 2 {
		t.Fatalf("after the store came back: %+v, %v", got, err)
	}
	// The whole folder gone.
	if err := os.Rename(dir, dir+".gone"); err != nil {
		t.Fatal(err)
	}
	defer os.Rename(dir+".gone", dir)
	if _, err := s.Load(ctx, "s1", "py-1"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a load with the store's folder gone: %v, want ErrUnavailable", err)
	}
	if err := s.Ping(ctx); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Ping with the store's folder gone: %v", err)
	}
}
