package sandbox

import (
	"context"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

// SetRuntimeForTest makes Sandboxes created during the test use f for lang.
// Tests that call it must not run in parallel.
func SetRuntimeForTest(t testing.TB, lang string, f func(ctx context.Context) (runtimes.Runtime, error)) {
	t.Helper()
	old, had := newRuntime[lang]
	newRuntime[lang] = func(ctx context.Context, _ Options) (runtimes.Runtime, error) { return f(ctx) }
	t.Cleanup(func() {
		if had {
			newRuntime[lang] = old
		} else {
			delete(newRuntime, lang)
		}
	})
}

// Limits, for tests.
const (
	MaxShownBytes = maxShownBytes
	MaxShownLines = maxShownLines
	KeepCap       = keepCap
)
