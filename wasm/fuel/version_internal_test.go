package fuel

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestVersionCoversThePass: Version hashes every non-test Go file of the
// package but doc.go, so that no change to the pass keeps its Version.
func TestVersionCoversThePass(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") && n != "doc.go" {
			want = append(want, n)
		}
	}
	got := slices.Sorted(slices.Values(passFiles))
	if !slices.Equal(got, want) {
		t.Errorf("Version hashes %v, want the pass's files %v: add new files to passFiles and the go:embed line of version.go", got, want)
	}
	embedded, err := passSource.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(embedded) != len(passFiles) {
		t.Errorf("%d files embedded, passFiles lists %d: keep the go:embed line and passFiles in step", len(embedded), len(passFiles))
	}
	if v := Version(); len(v) != 24 || v != Version() {
		t.Errorf("Version() = %q, %q: want one 24-digit hex hash", v, Version())
	}
}
