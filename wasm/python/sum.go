package python

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
)

var sum = sync.OnceValue(func() string {
	h := sha256.New()
	for _, name := range []string{"dist/python.wasm.zst", "dist/python311.zip.zst"} {
		b, err := dist.ReadFile(name)
		if err != nil {
			return "" // not built: ErrNotBuilt says so where it matters
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
})

// Sum returns the first 16 hex digits of the SHA-256 of the embedded,
// compressed artifact (python.wasm.zst, then the stdlib zip), or "" when the
// binary was built without it. It names the artifact a binary carries even
// when the build stamped nothing (go install, go run).
func Sum() string { return sum() }

// Inputs returns the hash of the sources and build files the embedded
// artifact was built from (dist/INPUTS, which `make python` writes and
// `make python-check` compares with the checkout's), or "" when unknown.
func Inputs() string {
	b, err := dist.ReadFile("dist/INPUTS")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
