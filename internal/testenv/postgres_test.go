//go:build linux

package testenv_test

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// TestStartPostgres starts a cluster, queries it, stops it (the queries
// fail) and starts it again on the same port.
func TestStartPostgres(t *testing.T) {
	pg := testenv.StartPostgres(t)
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/psql")
	if len(bins) == 0 {
		t.Fatal("no psql next to the server")
	}
	query := func() (string, error) {
		out, err := exec.Command(bins[0], "-h", "127.0.0.1", "-p", strconv.Itoa(pg.Port), "-U", "postgres",
			"-d", "postgres", "-Atc", "select 40 + 2").CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := query(); err != nil || out != "42" {
		t.Fatalf("query: %q, %v", out, err)
	}
	if !strings.HasPrefix(pg.URL, "postgres://postgres@127.0.0.1:"+strconv.Itoa(pg.Port)+"/") {
		t.Errorf("URL %q", pg.URL)
	}
	pg.Stop()
	if out, err := query(); err == nil {
		t.Fatalf("query after Stop answered %q", out)
	}
	pg.Start()
	if out, err := query(); err != nil || out != "42" {
		t.Fatalf("query after Start: %q, %v", out, err)
	}
}
