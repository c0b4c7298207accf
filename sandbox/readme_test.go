package sandbox_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// TestREADMELibraryExample runs the README's library example as it stands,
// as a program of a scratch module that requires wasmeval (through a
// replace to this checkout, offline): the example cannot drift from the
// API, and a module that imports sandbox gets a working Python.
func TestREADMELibraryExample(t *testing.T) {
	testenv.RequirePython(t)
	if testing.Short() {
		t.Skip("builds a program")
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := bytes.Cut(readme, []byte("\n## As a Go library\n"))
	if !ok {
		t.Fatal(`README.md has no "## As a Go library" section`)
	}
	_, block, ok := bytes.Cut(after, []byte("\n```go\n"))
	if !ok {
		t.Fatal("README.md's library section has no ```go block")
	}
	block, _, ok = bytes.Cut(block, []byte("\n```\n"))
	if !ok {
		t.Fatal("README.md's library example is not closed")
	}
	if !bytes.HasPrefix(bytes.TrimSpace(block), []byte("package main")) && !bytes.Contains(block, []byte("\npackage main\n")) {
		t.Fatalf("README.md's library example is not a complete program (no package main):\n%s", block)
	}

	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module scratch\n\ngo 1.26\n\nrequire github.com/wasmeval/wasmeval v0.0.0\n\nreplace github.com/wasmeval/wasmeval => " + repo + "\n"
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "main.go": block} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "run", ".")
	cmd.Dir = dir
	// Offline: every module the example needs is in the module cache
	// already, because this test's own build needed it.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run of README's library example: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "2432902008176640000"; got != want {
		t.Errorf("README's library example printed %q, want %q (what the README says it prints)", got, want)
	}
}
