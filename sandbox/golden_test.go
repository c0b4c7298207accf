package sandbox_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

var update = flag.Bool("update", false, "rewrite the golden results in ../testdata/cells")

// goldenDir holds the conformance corpus: NAME.ndjson is the input of
// `wasmeval eval` (one request a line, each case a fresh session) and
// NAME.golden.json the results it must give, as a JSON array with one
// entry per non-blank line and every durationMs zeroed.
const goldenDir = "../testdata/cells"

// TestGolden runs the corpus through real runtimes. Cases with Python cells
// are skipped when the binary has no CPython artifact, unless
// WASMEVAL_REQUIRE_PYTHON=1.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.ndjson"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in %s: %v", goldenDir, err)
	}
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	avail := newAvailability(sb)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".ndjson")
		t.Run(name, func(t *testing.T) {
			input, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, lang := range caseLanguages(input) {
				avail.require(t, lang)
			}
			got := runCase(t, sb, input)
			goldenFile := filepath.Join(goldenDir, name+".golden.json")
			if *update {
				if err := os.WriteFile(goldenFile, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(goldenFile)
			if errors.Is(err, os.ErrNotExist) {
				t.Fatalf("no golden results in %s: run go test ./sandbox -run TestGolden -update, and review them", goldenFile)
			} else if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("results differ from %s (rerun with -update if the change is right):\n%s", goldenFile, lineDiff(string(want), string(got)))
			}
		})
	}
}

// runCase runs every line of input in one fresh session and returns the
// results as indented JSON.
func runCase(t *testing.T, sb *sandbox.Sandbox, input []byte) []byte {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{
		Root: root,
		Env:  map[string]string{"LANG": "C.UTF-8", "TZ": "UTC"},
		Now:  func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) },
		Rand: rand.NewChaCha8([32]byte{'w', 'a', 's', 'm', 'e', 'v', 'a', 'l'}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	var results []any
	for i, line := range strings.Split(string(input), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		req, err := sandbox.DecodeRequest([]byte(line))
		if err != nil {
			var re *sandbox.RequestError
			if !errors.As(err, &re) {
				t.Fatalf("line %d: %v", i+1, err)
			}
			// As `wasmeval eval` writes it.
			results = append(results, map[string]any{"error": map[string]any{
				"code": "invalid_request", "message": "line " + strconv.Itoa(i+1) + ": " + re.Detail(),
			}})
			continue
		}
		res, err := s.Eval(ctx, req)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		for j := range res.Details.Cells {
			res.Details.Cells[j].DurationMs = 0
		}
		for _, tr := range res.Details.Meta.Truncated {
			full, err := s.Output(tr.OutputID)
			if err != nil || int64(len(full)) != tr.Bytes {
				t.Errorf("line %d: Output(%s) has %d bytes (%v), want %d", i+1, tr.OutputID, len(full), err, tr.Bytes)
			}
		}
		results = append(results, res)
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

// caseLanguages lists the languages of a case's valid requests.
func caseLanguages(input []byte) []string {
	seen := map[string]bool{}
	var langs []string
	sc := bufio.NewScanner(bytes.NewReader(input))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		req, err := sandbox.DecodeRequest(sc.Bytes())
		if err != nil {
			continue
		}
		for _, c := range req.Cells {
			if !seen[c.Language] {
				seen[c.Language] = true
				langs = append(langs, c.Language)
			}
		}
	}
	return langs
}

// availability finds out once per language whether its runtime runs.
type availability struct {
	sb   *sandbox.Sandbox
	mu   sync.Mutex
	errs map[string]error
	done map[string]bool
}

func newAvailability(sb *sandbox.Sandbox) *availability {
	return &availability{sb: sb, errs: map[string]error{}, done: map[string]bool{}}
}

// require skips or fails t when lang's runtime cannot run. Python without
// its artifact skips (fails when WASMEVAL_REQUIRE_PYTHON is set); anything
// else fails.
func (a *availability) require(t *testing.T, lang string) {
	t.Helper()
	a.mu.Lock()
	if !a.done[lang] {
		a.done[lang] = true
		a.errs[lang] = probe(a.sb, lang)
	}
	err := a.errs[lang]
	a.mu.Unlock()
	switch {
	case err == nil:
	case testenv.IsNotBuilt(err):
		testenv.NotBuilt(t, err)
	default:
		t.Fatalf("the %s runtime cannot run: %v", lang, err)
	}
}

func probe(sb *sandbox.Sandbox, lang string) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "wasmeval-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: dir})
	if err != nil {
		return err
	}
	defer s.Close(ctx)
	_, err = s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: "1"}}})
	return err
}

// lineDiff shows the first lines where want and got differ, with context.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	var b strings.Builder
	from := max(0, i-3)
	for j := from; j < i; j++ {
		b.WriteString("  " + clipLine(w[j]) + "\n")
	}
	for j := i; j < min(len(w), i+5); j++ {
		b.WriteString("- " + clipLine(w[j]) + "\n")
	}
	for j := i; j < min(len(g), i+5); j++ {
		b.WriteString("+ " + clipLine(g[j]) + "\n")
	}
	return b.String()
}

func clipLine(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
