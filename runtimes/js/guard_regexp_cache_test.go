package js_test

import (
	"context"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestRegexpCacheKeepsNoSessionsPatterns: a global, sticky or unicode
// RegExp that Go's regexp matches gets a regexp2 pattern up front, and
// those are cached for the whole process, outside every session's memory.
// The cache kept every pattern up to 4096 of them, whatever their size:
// 200 distinct 36 KB patterns matched once held 10 MiB after their session
// was closed (14 MiB for 300). It keeps short patterns only, up to 1 MiB of
// them.
func TestRegexpCacheKeepsNoSessionsPatterns(t *testing.T) {
	s := newSession(t, runtimes.InstanceOptions{MemoryLimitBytes: 128 << 20})
	s.ok(`1`)
	base := liveHeap()
	s.ok(`for (let i = 0; i < 200; i++) new RegExp('[ab]'.repeat(9000) + i, 'g').test('x')`)
	if err := s.inst.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	kept, bound := liveHeap()-base, int64(4<<20)
	if kept > bound {
		t.Errorf("after its session closed, 200 patterns of 36 KB it matched hold %d MiB, more than %d MiB", kept>>20, bound>>20)
	}
}
