package fuel

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"sync"
)

// passSource is the pass's own code: every non-test Go file of the package
// but the documentation (TestVersionCoversThePass keeps the list whole).
//
//go:embed code.go fuel.go leb.go version.go
var passSource embed.FS

// passFiles are passSource's files, in the order Version hashes them.
var passFiles = []string{"code.go", "fuel.go", "leb.go", "version.go"}

// Version identifies this version of the pass: a hash of its source code.
// A cache of instrumented modules keyed by it (with the Options) never
// serves what another version of the pass made; a version number bumped
// by hand was forgotten once (the checks' local of 4b3ae8d0 kept the cache
// name of the pass before it).
func Version() string { return version() }

var version = sync.OnceValue(func() string {
	h := sha256.New()
	for _, name := range passFiles {
		b, err := passSource.ReadFile(name)
		if err != nil {
			panic("fuel: " + err.Error()) // embedded: cannot happen
		}
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
})
