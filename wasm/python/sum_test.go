package python

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
)

// TestEmbeddedArtifactMatchesSums: the committed artifact is what its
// SHA256SUMS says, and INPUTS names the inputs' hash, so a binary built
// from any checkout carries a known artifact.
func TestEmbeddedArtifactMatchesSums(t *testing.T) {
	sums, err := dist.ReadFile("dist/SHA256SUMS")
	if err != nil {
		t.Fatalf("wasm/python/dist/SHA256SUMS: %v (run make python and commit wasm/python/dist)", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(sums))
	n := 0
	for sc.Scan() {
		want, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not '<sum>  <file>'", sc.Text())
		}
		b, err := dist.ReadFile("dist/" + name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := sha256.Sum256(b)
		if hex.EncodeToString(got[:]) != want {
			t.Errorf("%s does not match SHA256SUMS: run make python and commit wasm/python/dist", name)
		}
		n++
	}
	if n != 2 {
		t.Errorf("SHA256SUMS names %d files, want python.wasm.zst and python311.zip.zst", n)
	}
	if in := Inputs(); !regexp.MustCompile(`^[0-9a-f]{16}-[0-9a-f]{16}$`).MatchString(in) {
		t.Errorf("Inputs() = %q, want the two 16-digit input hashes make python writes", in)
	}
	if s := Sum(); len(s) != 16 {
		t.Errorf("Sum() = %q", s)
	}
}
