package server_test

import (
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// persistBytes reads wasmeval_persist_bytes_total off a node's /metrics.
func persistBytes(t *testing.T, n *clusterNode) float64 {
	t.Helper()
	r := do(t, "GET", n.URL+"/metrics", tokenA, nil)
	wantStatus(t, r, http.StatusOK)
	m := regexp.MustCompile(`(?m)^wasmeval_persist_bytes_total(?:\{[^}]*\})? (\S+)$`).FindSubmatch(r.body)
	if m == nil {
		t.Fatal("no wasmeval_persist_bytes_total in /metrics")
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPersistBytesCountsEverything: wasmeval_persist_bytes_total counts
// every byte a save writes to the store: a cell that makes 400 KB of
// incompressible Python data and a 300 KB file adds both (in the new
// Python frame and the file's content), not only the record's index and
// metadata; a save after a cell that changed nearly nothing adds less
// (what changed, and at most a frame compacted again: not the state
// again).
func TestPersistBytesCountsEverything(t *testing.T) {
	testenv.RequirePython(t)
	stores := []struct{ name, url string }{{"dir", "dir://" + filepath.Join(t.TempDir(), "store")}}
	if pg := testenv.StartPostgres(t); pg != nil {
		stores = append(stores, struct{ name, url string }{"postgres", pg.URL})
	}
	for _, tc := range stores {
		t.Run(tc.name, func(t *testing.T) {
			n := startNode(t, "node-a", tc.url, 10*time.Second)
			id := n.create(t, tokenA)
			n.eval(t, tokenA, id, cells("py", "x = 0"))
			before := persistBytes(t, n)
			n.eval(t, tokenA, id, cells("py", "import os\nblob = os.urandom(400_000)\nopen('f.bin', 'wb').write(os.urandom(300_000))"))
			big := persistBytes(t, n) - before
			if big < 700_000 {
				t.Fatalf("a save of 400 KB of new Python data and a 300 KB file counted %.0f bytes", big)
			}
			before = persistBytes(t, n)
			n.eval(t, tokenA, id, cells("py", "x += 1"))
			if light := persistBytes(t, n) - before; light <= 0 || light >= big {
				t.Fatalf("a light eval's save counted %.0f bytes (the big one %.0f)", light, big)
			}
		})
	}
}
