package wasm_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/wasmeval/wasmeval/wasm"
)

// constModule is a module exporting f() i32 that returns n (0..63): two
// of them compile to entries of the same shape, so one is a valid wazero
// cache entry (right CRC, right layout) in place of the other.
func constModule(n byte) []byte {
	return []byte{
		0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
		0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, // type: () -> i32
		0x03, 0x02, 0x01, 0x00, // function 0 of type 0
		0x07, 0x05, 0x01, 0x01, 'f', 0x00, 0x00, // export "f"
		0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, n, 0x0b, // i32.const n
	}
}

// runConst compiles bin with the cache in dir and returns what f returns.
func runConst(t *testing.T, dir, keyFile string, bin []byte) uint64 {
	t.Helper()
	ctx := context.Background()
	rt, mod, err := wasm.Compile(ctx, wasm.Config{CacheDir: dir, KeyFile: keyFile}, bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	inst, err := rt.InstantiateModule(ctx, mod, wazero.NewModuleConfig())
	if err != nil {
		t.Fatal(err)
	}
	res, err := inst.ExportedFunction("f").Call(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res[0]
}

// cacheEntries returns the paths of wazero's entries under dir.
func cacheEntries(t *testing.T, dir string) []string {
	t.Helper()
	var entries []string
	files, _ := filepath.Glob(filepath.Join(dir, "wazero", "*", "*", "*"))
	for _, f := range files {
		if b := filepath.Base(f); len(b) == 64 && !strings.Contains(b, ".") {
			entries = append(entries, f)
		}
	}
	return entries
}

func oneEntry(t *testing.T, dir string) string {
	t.Helper()
	e := cacheEntries(t, dir)
	if len(e) != 1 {
		t.Fatalf("want one wazero cache entry under %s, have %v", dir, e)
	}
	if _, err := os.Stat(e[0] + ".mac"); err != nil {
		t.Fatalf("the entry has no MAC: %v", err)
	}
	return e[0]
}

// A compiled-code entry replaced by another module's (valid for wazero:
// right layout and CRC) must not run: the MAC names the entry, so the
// swap is caught, the entry deleted and compiled again.
func TestCompileRejectsForgedCacheEntry(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	dirA, dirB := t.TempDir(), t.TempDir()
	if got := runConst(t, dirA, keyFile, constModule(1)); got != 1 {
		t.Fatalf("module A returns %d", got)
	}
	entryA := oneEntry(t, dirA)
	orig, _ := os.ReadFile(entryA)
	if got := runConst(t, dirB, keyFile, constModule(2)); got != 2 {
		t.Fatalf("module B returns %d", got)
	}
	forged, _ := os.ReadFile(oneEntry(t, dirB))
	if bytes.Equal(orig, forged) {
		t.Fatal("the two entries are the same: the test proves nothing")
	}

	for _, tc := range []struct {
		name  string
		forge func()
	}{
		{"swapped entry", func() {
			os.WriteFile(entryA, forged, 0o644)
		}},
		{"swapped entry and its MAC", func() {
			os.WriteFile(entryA, forged, 0o644)
			mac, _ := os.ReadFile(oneEntry(t, dirB) + ".mac")
			os.WriteFile(entryA+".mac", mac, 0o644)
		}},
		{"MAC under another key", func() {
			os.WriteFile(entryA, forged, 0o644)
			os.WriteFile(entryA+".mac", wasm.NewCacheKey(bytes.Repeat([]byte{7}, 32)).MAC("anything", forged), 0o644)
		}},
		{"no MAC (an entry from before MACs)", func() {
			os.WriteFile(entryA, forged, 0o644)
			os.Remove(entryA + ".mac")
		}},
		{"entry made a symlink", func() {
			other := filepath.Join(t.TempDir(), "forged")
			os.WriteFile(other, forged, 0o644)
			mac, _ := os.ReadFile(oneEntry(t, dirB) + ".mac")
			os.Remove(entryA)
			os.Symlink(other, entryA)
			os.WriteFile(entryA+".mac", mac, 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.forge()
			if got := runConst(t, dirA, keyFile, constModule(1)); got != 1 {
				t.Fatalf("module A ran the forged entry's code: f() = %d", got)
			}
			// Rebuilt and sealed again.
			if b, _ := os.ReadFile(oneEntry(t, dirA)); !bytes.Equal(b, orig) {
				t.Fatal("the entry was not rebuilt")
			}
		})
	}
}

// A version folder replaced by a symlink would lead wazero to entries
// verified nowhere: it is removed.
func TestCompileRejectsSymlinkedCacheFolder(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	dirA, dirB := t.TempDir(), t.TempDir()
	runConst(t, dirA, keyFile, constModule(1))
	runConst(t, dirB, keyFile, constModule(2))
	entryA, entryB := oneEntry(t, dirA), oneEntry(t, dirB)
	// B's folder, with B's code under A's entry name and B's MAC.
	evil := t.TempDir()
	forged, _ := os.ReadFile(entryB)
	mac, _ := os.ReadFile(entryB + ".mac")
	os.WriteFile(filepath.Join(evil, filepath.Base(entryA)), forged, 0o644)
	os.WriteFile(filepath.Join(evil, filepath.Base(entryA)+".mac"), mac, 0o644)
	vdir := filepath.Dir(entryA)
	os.RemoveAll(vdir)
	if err := os.Symlink(evil, vdir); err != nil {
		t.Fatal(err)
	}
	if got := runConst(t, dirA, keyFile, constModule(1)); got != 1 {
		t.Fatalf("module A ran code from a symlinked cache folder: f() = %d", got)
	}
	if st, err := os.Lstat(vdir); err != nil || !st.IsDir() {
		t.Fatalf("the version folder is not a real folder again: %v", err)
	}
}

// The key is made once, private to the user, and reused; a key others can
// read, or a symlink, is replaced.
func TestLoadCacheKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	path := filepath.Join(dir, "key")
	k1, err := wasm.LoadCacheKey(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 || st.Size() != wasm.CacheKeySize {
		t.Fatalf("key file: mode %v, %d bytes", st.Mode(), st.Size())
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Fatalf("key folder: mode %v", st.Mode())
	}
	k2, err := wasm.LoadCacheKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k1.MAC("x", nil), k2.MAC("x", nil)) {
		t.Fatal("the key changed between two loads")
	}

	// Readable by others: a new key.
	os.Chmod(path, 0o644)
	k3, err := wasm.LoadCacheKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(k1.MAC("x", nil), k3.MAC("x", nil)) {
		t.Fatal("a key readable by others was kept")
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("replaced key file: mode %v", st.Mode())
	}

	// A symlink to a key someone else chose: a new key.
	chosen := filepath.Join(t.TempDir(), "chosen")
	os.WriteFile(chosen, bytes.Repeat([]byte{1}, wasm.CacheKeySize), 0o600)
	os.Remove(path)
	os.Symlink(chosen, path)
	k4, err := wasm.LoadCacheKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(k4.MAC("x", nil), wasm.NewCacheKey(bytes.Repeat([]byte{1}, wasm.CacheKeySize)).MAC("x", nil)) {
		t.Fatal("a symlinked key was used")
	}
}

func TestCacheKeyFiles(t *testing.T) {
	k := wasm.NewCacheKey(bytes.Repeat([]byte{3}, wasm.CacheKeySize))
	dir := t.TempDir()
	path := filepath.Join(dir, "entry")
	if err := k.SaveFile(path, "entry", []byte("payload")); err != nil {
		t.Fatal(err)
	}
	if b, err := k.ReadFile(path, "entry"); err != nil || string(b) != "payload" {
		t.Fatalf("ReadFile: %q, %v", b, err)
	}
	if _, err := k.ReadFile(path, "other"); err == nil {
		t.Fatal("a file was accepted under another label")
	}
	b, _ := os.ReadFile(path)
	b[0] ^= 1
	os.WriteFile(path, b, 0o644)
	if _, err := k.ReadFile(path, "entry"); err == nil {
		t.Fatal("a rewritten file was accepted")
	}

	// Images: the copy is checked, and is private to the process.
	img := bytes.Repeat([]byte("image"), 5000)
	ipath := filepath.Join(dir, "image")
	os.WriteFile(ipath, img, 0o644)
	mac := k.ImageMAC("image", img, []byte("meta"))
	im, err := k.LoadImage(ipath, uint64(len(img)), "image", []byte("meta"), mac)
	if err != nil {
		t.Fatal(err)
	}
	// Changing the file afterwards does not change the loaded image.
	os.WriteFile(ipath, bytes.Repeat([]byte("EVIL!"), 5000), 0o644)
	got, err := wasm.SnapshotFromImage(im).Bytes()
	if err != nil || !bytes.Equal(got, img) {
		t.Fatalf("image changed after it was checked: %v", err)
	}
	im.Close()
	if _, err := k.LoadImage(ipath, uint64(len(img)), "image", []byte("meta"), mac); err == nil {
		t.Fatal("a rewritten image was accepted")
	}
	os.WriteFile(ipath, img, 0o644)
	if _, err := k.LoadImage(ipath, uint64(len(img)), "image", []byte("other meta"), mac); err == nil {
		t.Fatal("an image was accepted with other metadata")
	}
}

// A start checks the cache folder of its own module only, and removes the
// folders no process has used for two weeks and the one-folder layout of
// earlier versions.
func TestCompileChecksOnlyItsModuleFolder(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	dir := t.TempDir()
	runConst(t, dir, keyFile, constModule(1))
	entry := oneEntry(t, dir)
	mine := filepath.Dir(filepath.Dir(entry))
	top := filepath.Dir(mine)

	// Another module's folder, in use, holding an entry without a MAC: a
	// start of module 1 does not read it (checking it would delete it).
	other := filepath.Join(top, strings.Repeat("ab", 16))
	otherEntry := filepath.Join(other, "wazero-v0-amd64-linux", strings.Repeat("cd", 32))
	os.MkdirAll(filepath.Dir(otherEntry), 0o700)
	os.WriteFile(otherEntry, []byte("not checked"), 0o600)
	// A module folder unused for 15 days, and the old one-folder layout.
	stale := filepath.Join(top, strings.Repeat("ef", 16))
	os.MkdirAll(stale, 0o700)
	old := time.Now().Add(-15 * 24 * time.Hour)
	os.Chtimes(stale, old, old)
	legacy := filepath.Join(top, "wazero-v1.12.0-amd64-linux")
	os.MkdirAll(legacy, 0o700)
	os.WriteFile(filepath.Join(legacy, strings.Repeat("01", 32)), []byte("old"), 0o600)
	os.Chtimes(mine, old, old)

	if got := runConst(t, dir, keyFile, constModule(1)); got != 1 {
		t.Fatalf("f() = %d", got)
	}
	if _, err := os.Stat(otherEntry); err != nil {
		t.Errorf("another module's entry was read and removed: %v", err)
	}
	for _, gone := range []string{stale, legacy} {
		if _, err := os.Stat(gone); err == nil {
			t.Errorf("%s was kept", gone)
		}
	}
	if st, err := os.Stat(mine); err != nil || time.Since(st.ModTime()) > time.Hour {
		t.Errorf("the module's own folder was not marked used: %v", err)
	}
	if _, err := os.Stat(entry + ".mac"); err != nil {
		t.Errorf("the module's entry is not there, sealed: %v", err)
	}
}
