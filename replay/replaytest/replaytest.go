// Package replaytest replays wasmeval tapes in Go tests: a host records
// an agent's session once (sandbox.SessionOptions.Record, or `wasmeval
// eval --record`), commits the tape under testdata/, and replays it in CI,
// offline, with every result compared byte for byte:
//
//	func TestAgent(t *testing.T) { replaytest.Run(t, "testdata/agent.wtape") }
//
// Each request is a subtest ("request_1", ...) that fails with the
// replay's divergences: what differed and a unified diff. Requests run in
// order whatever -run selects, since each builds on the state of the ones
// before.
//
// # Updating
//
// When the test binary defines a boolean -update flag (the golden-file
// habit of go/printer) and it is set, or Options.Update is, a tape whose
// results differ is rewritten with the replayed results instead of
// failing; its inputs (clocks, randomness, host-call answers) stay as
// recorded.
package replaytest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/tape"
)

// Options configure RunWith.
type Options struct {
	// Replay configures the replay (root folder, blobs, sandbox options).
	Replay replay.Options
	// Update rewrites the tape's results with the replayed ones instead of
	// failing on a differing result; the -update flag, where the test
	// binary defines one, does the same.
	Update bool
}

// Run replays the tape at path as subtests of t, one per request.
func Run(t *testing.T, path string) { RunWith(t, path, Options{}) }

// RunWith is Run with options.
func RunWith(t *testing.T, path string, o Options) {
	t.Helper()
	update := o.Update
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		update = true
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("replaytest: %v", err)
	}
	tp, err := tape.Read(f)
	f.Close()
	if err != nil {
		t.Fatalf("replaytest: %s: %v", path, err)
	}
	ctx := t.Context()
	p, err := replay.Start(ctx, tp, o.Replay)
	if err != nil {
		t.Fatalf("replaytest: %s: %v", path, err)
	}
	defer p.Close()
	differs := false
	for n := 1; p.More(); n++ {
		divs, err := p.Step(ctx)
		differs = differs || len(divs) > 0
		t.Run(fmt.Sprintf("request_%d", n), func(t *testing.T) {
			if err != nil {
				t.Fatalf("replaytest: %s: %v", path, err)
			}
			if update {
				return
			}
			for _, d := range divs {
				t.Errorf("%s: %s", filepath.Base(path), d)
			}
		})
		if err != nil {
			return
		}
	}
	if update && differs {
		var buf bytes.Buffer
		w, err := tape.NewWriter(&buf)
		if err == nil {
			err = p.WriteUpdated(w)
		}
		if err == nil {
			err = w.Close()
		}
		if err == nil {
			err = writeFileAtomic(path, buf.Bytes())
		}
		if err != nil {
			t.Fatalf("replaytest: updating %s: %v", path, err)
		}
		t.Logf("replaytest: updated the results in %s", path)
	}
}

// writeFileAtomic replaces path with data through a temporary file in its
// folder, so that a failed write leaves the old tape.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".wtape-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
