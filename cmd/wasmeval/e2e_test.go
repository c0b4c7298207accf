package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes/python"
	"github.com/wasmeval/wasmeval/sandbox"
)

// TestEvalCorpus runs each case of the conformance corpus through the real
// command and compares its stdout with the golden results that the sandbox
// package's TestGolden keeps (durationMs zeroed). Cases with Python cells
// skip when the binary has no CPython artifact, unless
// WASMEVAL_REQUIRE_PYTHON=1.
func TestEvalCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: runs the real runtimes")
	}
	files, err := filepath.Glob("../../testdata/cells/*.ndjson")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	pyErr := pythonAvailable()
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".ndjson")
		t.Run(name, func(t *testing.T) {
			input, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if usesPython(input) && pyErr != nil {
				testenv.NotBuilt(t, pyErr)
			}
			want, err := os.ReadFile(strings.TrimSuffix(file, ".ndjson") + ".golden.json")
			if errors.Is(err, os.ErrNotExist) {
				t.Skip("skipped: no golden results yet; make them with go test ./sandbox -run TestGolden -update")
			} else if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			doMain(context.Background(), []string{"eval", "--cwd", t.TempDir()}, bytes.NewReader(input), &stdout, &stderr)
			got := normalize(t, stdout.Bytes())
			if !bytes.Equal(got, want) {
				t.Errorf("stdout differs from the golden results (stderr: %s)\n got: %s", stderr.String(), clip(got))
			}
		})
	}
}

// normalize turns eval's output lines into the golden form: an indented
// JSON array, durations zeroed.
func normalize(t *testing.T, stdout []byte) []byte {
	t.Helper()
	var results []any
	for _, l := range bytes.Split(bytes.TrimSuffix(stdout, []byte("\n")), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		if bytes.HasPrefix(l, []byte(`{"error":`)) {
			var e errorLine
			if err := json.Unmarshal(l, &e); err != nil {
				t.Fatal(err)
			}
			results = append(results, map[string]any{"error": map[string]any{"code": e.Error.Code, "message": e.Error.Message}})
			continue
		}
		var res sandbox.Result
		if err := json.Unmarshal(l, &res); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		for i := range res.Details.Cells {
			res.Details.Cells[i].DurationMs = 0
		}
		results = append(results, &res)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(results); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func usesPython(input []byte) bool {
	for _, l := range bytes.Split(input, []byte("\n")) {
		if req, err := sandbox.DecodeRequest(l); err == nil {
			for _, c := range req.Cells {
				if c.Language == "py" {
					return true
				}
			}
		}
	}
	return false
}

// pythonAvailable starts the Python runtime once, as the sandbox would.
func pythonAvailable() error {
	cache := ""
	if dir, err := os.UserCacheDir(); err == nil {
		cache = filepath.Join(dir, "wasmeval")
	}
	rt, err := python.New(context.Background(), python.Config{CacheDir: cache})
	if err != nil {
		return err
	}
	return rt.Close(context.Background())
}

func clip(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}
