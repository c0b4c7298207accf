package python

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// TestStartEntryMapped: once a start entry has passed its MAC check (and
// is old enough to be memoed), later loads map it instead of reading it,
// with the same parts; an entry changed in place, or one that others may
// write, is read and checked again, never mapped (issue 15, a warm
// process's start).
func TestStartEntryMapped(t *testing.T) {
	testenv.RequirePython(t)
	cfg := Config{CacheDir: t.TempDir(), KeyFile: filepath.Join(t.TempDir(), "key")}
	c := openCache(cfg)
	load := func() (artifactFiles, bool) {
		t.Helper()
		n := startMapped.Load()
		a, err := loadArtifact(cfg, c)
		if err != nil {
			t.Fatal(err)
		}
		return a, startMapped.Load() > n
	}
	same := func(a, b artifactFiles) bool {
		return bytes.Equal(a.bin, b.bin) && bytes.Equal(a.stdlib, b.stdlib) && reflect.DeepEqual(a.data, b.data) && a.key == b.key && a.digest == b.digest
	}
	made, _ := load() // makes the entry
	entries, _ := filepath.Glob(filepath.Join(cfg.CacheDir, "python-start-*.bin"))
	if len(entries) != 1 {
		t.Fatalf("start entries: %v", entries)
	}
	entry := entries[0]
	settle := func() { time.Sleep(2100 * time.Millisecond) } // a memo wants a ctime 2 s old
	settle()
	if a, mapped := load(); mapped || !same(a, made) {
		t.Fatalf("the first load after the entry was made: mapped %v, same parts %v; want read and checked", mapped, same(a, made))
	}
	a, mapped := load()
	if !mapped || !same(a, made) {
		t.Fatalf("a checked entry: mapped %v, same parts %v; want mapped, the same", mapped, same(a, made))
	}

	// Changed in place (a byte of the stdlib): its memo no longer holds, the
	// MAC check fails, and the entry is made again.
	f, err := os.OpenFile(entry, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(a.stdlib, []byte("PK"))
	off := int64(bytes.Index(mustRead(t, entry), a.stdlib[:64]) + i)
	if _, err := f.WriteAt([]byte("XX"), off); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if a, mapped := load(); mapped || !same(a, made) {
		t.Fatalf("an entry changed in place: mapped %v, same parts %v; want made again", mapped, same(a, made))
	}

	// Writable by its group: read and checked every time, never mapped.
	settle()
	load() // memoes the remade entry
	if err := os.Chmod(entry, 0o620); err != nil {
		t.Fatal(err)
	}
	settle()
	// Even with a memo that it passed the check.
	if f, err = os.Open(entry); err != nil {
		t.Fatal(err)
	}
	c.key.SaveMemo(entry+".checked", startMemoLabel, f, nil)
	if _, ok := c.key.LoadMemo(entry+".checked", startMemoLabel, f); !ok {
		t.Fatal("no memo taken")
	}
	f.Close()
	if a, mapped := load(); mapped || !same(a, made) {
		t.Fatalf("a group-writable entry: mapped %v, same parts %v; want read", mapped, same(a, made))
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
