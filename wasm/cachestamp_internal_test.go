package wasm

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// settleNow lets stamps be taken of files just written, for the test.
func settleNow(t *testing.T) {
	old := stampSettle
	stampSettle = 0
	t.Cleanup(func() { stampSettle = old })
}

// rewriteKeepingTimes overwrites path's first bytes with b in place,
// keeping its size and setting its mtime back: what a writer hiding a
// change would do. Only the ctime moves.
func rewriteKeepingTimes(t *testing.T, path string, b []byte) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // past the clock's tick
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// TestReadFileStamp: a cache file checked once is not hashed again while
// it is unchanged, and a change that keeps its size and mtime (its ctime
// moves) is caught; a forged stamp is ignored.
func TestReadFileStamp(t *testing.T) {
	settleNow(t)
	dir := t.TempDir()
	k := NewCacheKey(bytes.Repeat([]byte{7}, CacheKeySize))
	path := filepath.Join(dir, "entry")
	data := []byte(strings.Repeat("compiled code ", 1000))
	if err := k.SaveFile(path, "entry", data); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // the ctime settles (stampSettle is 0)
	n0 := macChecks.Load()
	for i := range 3 {
		got, err := k.ReadFile(path, "entry")
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	if n := macChecks.Load() - n0; n != 1 {
		t.Fatalf("3 reads of an unchanged file hashed it %d times, want 1 (then its stamp)", n)
	}
	if _, err := os.Stat(path + stampSuffix); err != nil {
		t.Fatalf("no stamp: %v", err)
	}

	// Another label (a file moved under another name) is checked whole.
	if _, err := k.ReadFile(path, "other"); err == nil {
		t.Fatal("read under another label")
	}

	// Changed in place, size and mtime kept.
	rewriteKeepingTimes(t, path, []byte("forged code"))
	if _, err := k.ReadFile(path, "entry"); err == nil || !strings.Contains(err.Error(), "not authentic") {
		t.Fatalf("a changed file with its old stamp: %v, want not authentic", err)
	}

	// A stamp made without the key is ignored.
	if err := k.SaveFile(path, "entry", data); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	st, _ := statStamp(f)
	f.Close()
	forged := append(st.encode(), bytes.Repeat([]byte{1}, MACSize)...)
	if err := os.WriteFile(path+stampSuffix, forged, 0o600); err != nil {
		t.Fatal(err)
	}
	rewriteKeepingTimes(t, path, []byte("forged code"))
	f, _ = os.Open(path)
	st, _ = statStamp(f)
	f.Close()
	forged = append(st.encode(), bytes.Repeat([]byte{1}, MACSize)...)
	if err := os.WriteFile(path+stampSuffix, forged, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := k.ReadFile(path, "entry"); err == nil {
		t.Fatal("a changed file with a forged stamp was read")
	}
}

// TestStampWaitsForSettle: no stamp is taken of a file whose ctime is
// younger than stampSettle (a change in the same clock tick would not
// move it).
func TestStampWaitsForSettle(t *testing.T) {
	dir := t.TempDir()
	k := NewCacheKey(bytes.Repeat([]byte{7}, CacheKeySize))
	path := filepath.Join(dir, "entry")
	if err := k.SaveFile(path, "entry", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := k.ReadFile(path, "entry"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + stampSuffix); err == nil {
		t.Fatal("a stamp of a file written just now")
	}
}

// TestLoadImageSparseAndStamped: a template image saved sparse loads
// byte for byte, holes as zeros; the second load copies it unhashed, and
// a change to it in place is caught.
func TestLoadImageSparseAndStamped(t *testing.T) {
	settleNow(t)
	dir := t.TempDir()
	k := NewCacheKey(bytes.Repeat([]byte{9}, CacheKeySize))
	img := make([]byte, 64*imagePage+100) // zero pages, data pages, a partial last page
	for i := range img {
		if (i/imagePage)%5 == 1 || i > 60*imagePage {
			img[i] = byte(i*7 + 1)
		}
	}
	path := filepath.Join(dir, "t.mem")
	if err := SaveSparseImage(path, img); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	if st.Blocks*512 >= int64(len(img)) {
		t.Logf("the file system keeps no holes (%d bytes allocated of %d)", st.Blocks*512, len(img))
	}
	extra := []byte("meta")
	mac := k.ImageMAC("t", img, extra)
	time.Sleep(10 * time.Millisecond)
	n0 := macChecks.Load()
	for i := range 2 {
		im, err := k.LoadImage(path, uint64(len(img)), "t", extra, mac)
		if err != nil {
			t.Fatalf("load %d: %v", i, err)
		}
		got := make([]byte, len(img))
		if _, err := im.f.ReadAt(got, 0); err != nil {
			t.Fatal(err)
		}
		im.Close()
		if !bytes.Equal(got, img) {
			t.Fatalf("load %d: the image differs", i)
		}
	}
	if n := macChecks.Load() - n0; n != 1 {
		t.Fatalf("2 loads hashed the image %d times, want 1", n)
	}
	// Against another MAC (other metadata), the stamp does not hold.
	if _, err := k.LoadImage(path, uint64(len(img)), "t", []byte("other"), mac); err == nil {
		t.Fatal("loaded with other metadata")
	}
	rewriteKeepingTimes(t, path, []byte{0xff})
	if _, err := k.LoadImage(path, uint64(len(img)), "t", extra, mac); err == nil {
		t.Fatal("a changed image with its old stamp was loaded")
	}
}

// TestMemo: a memo holds for the file it was stored for while that file
// is unchanged, under its label, and not once the file changes or the
// memo is edited.
func TestMemo(t *testing.T) {
	settleNow(t)
	dir := t.TempDir()
	k := NewCacheKey(bytes.Repeat([]byte{5}, CacheKeySize))
	exe := filepath.Join(dir, "exe")
	if err := os.WriteFile(exe, []byte("an executable"), 0o700); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	memo := filepath.Join(dir, "memo")
	load := func(label string) ([]byte, bool) {
		f, err := os.Open(exe)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return k.LoadMemo(memo, label, f)
	}
	f, _ := os.Open(exe)
	k.SaveMemo(memo, "sum", f, []byte("abc123"))
	f.Close()
	if v, ok := load("sum"); !ok || string(v) != "abc123" {
		t.Fatalf("LoadMemo = %q, %v", v, ok)
	}
	if _, ok := load("other"); ok {
		t.Fatal("a memo held under another label")
	}
	b, _ := os.ReadFile(memo)
	edited := bytes.Replace(b, []byte("abc123"), []byte("evil12"), 1)
	os.WriteFile(memo, edited, 0o600)
	if _, ok := load("sum"); ok {
		t.Fatal("an edited memo held")
	}
	os.WriteFile(memo, b, 0o600)
	rewriteKeepingTimes(t, exe, []byte("AN"))
	if _, ok := load("sum"); ok {
		t.Fatal("a memo held for a changed file")
	}
}
