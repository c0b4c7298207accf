package python_test

import (
	"context"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes/python"
)

// TestTemplateSameEverywhere: two runtimes that each build their template
// (each with an empty cache of its own, as two machines do, or one whose
// cache entry went) get the same template bytes, so the same StateKey: a
// session persisted by one loads in the other. The template's boot read
// the host's clocks, which left a few bytes of the build's time in it,
// and a node with a fresh cache refused every stored session as "state
// of another Python build".
func TestTemplateSameEverywhere(t *testing.T) {
	runtimeForTest(t) // skips when the artifact is missing
	ctx := context.Background()
	var keys [2]string
	for i := range keys {
		r, err := python.New(ctx, python.Config{CacheDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		keys[i], err = r.StateKey()
		r.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
	}
	if keys[0] != keys[1] {
		t.Fatalf("two templates built apart have state keys %s and %s, want one", keys[0], keys[1])
	}
}
