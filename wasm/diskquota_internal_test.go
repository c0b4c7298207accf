package wasm

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestRootQuotaRecountRateLimited: a guest that retries a refused change
// in a loop does not make the quota walk the root on every try: after a
// refusal despite a walk, the next walk waits ten times that walk's cost.
func TestRootQuotaRecountRateLimited(t *testing.T) {
	root := t.TempDir()
	for i := range 5000 {
		if err := os.WriteFile(filepath.Join(root, strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	q, err := NewRootQuota(root, 1<<20, 0)
	if err != nil {
		t.Fatal(err)
	}
	q.Lock()
	defer q.Unlock()
	for range 200 {
		if q.CheckLocked(2<<20, 0) == nil {
			t.Fatal("2 MiB passed a 1 MiB quota")
		}
	}
	if q.walks > 3 {
		t.Errorf("200 refused tries walked the root %d times", q.walks)
	}
	if q.walks == 0 {
		t.Error("a refused change did not walk the root at all")
	}
}
