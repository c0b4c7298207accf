package python

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestCachePrunedBySize: past the cache's size cap, the entries used least
// recently are removed whole (a template's image, metadata and stamps
// together), the newest stay, and an entry unused for two weeks goes
// whatever the size. Before the cap, a machine that made many templates in
// two weeks kept them all (6.7 GiB on the machine this was found on).
func TestCachePrunedBySize(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	mib := make([]byte, 1<<20)
	for i := range mib {
		mib[i] = byte(i) | 1 // allocated on disk, not a hole
	}
	write := func(name string, data []byte, age time.Duration) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	// Newest first: template a, fuel module b, start entry c, template d.
	write("python-template-a.json", []byte("{}"), time.Hour)
	write("python-template-a.mem", mib, time.Hour)
	write("python-template-a.mem.stamp", []byte("s"), time.Hour)
	write("python-fuel-b.wasm", mib, 2*time.Hour)
	write("python-start-c.bin", mib, 3*time.Hour)
	write("python-start-c.bin.stamp", []byte("s"), 3*time.Hour)
	write("python-template-d.json", []byte("{}"), 4*time.Hour)
	write("python-template-d.mem", mib, 4*time.Hour)
	// Small, but unused for 15 days.
	write("python-fuel-old.wasm", []byte("x"), 15*24*time.Hour)
	write("key", []byte("not an entry"), 30*24*time.Hour)

	old := cacheMaxBytes
	defer func() { cacheMaxBytes = old }()
	cacheMaxBytes = 5 << 19 // 2.5 MiB: a and b fit
	pruneCache(dir)
	var left []string
	all, _ := os.ReadDir(dir)
	for _, e := range all {
		left = append(left, e.Name())
	}
	want := []string{"key", "python-fuel-b.wasm", "python-template-a.json", "python-template-a.mem", "python-template-a.mem.stamp"}
	if !slices.Equal(left, want) {
		t.Errorf("after pruning to 2.5 MiB the cache holds\n%v\nwant\n%v", left, want)
	}
}
