package server_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
	"github.com/wasmeval/wasmeval/store"
)

// TestDirStoreOutageAnswers503: issue 16's fault rule over a real dir
// store (TestClusterStoreOutage has it over PostgreSQL). With the store's
// folder unwritable (replaced by a file: root ignores permissions), an
// eval answers 503 store_error with Retry-After and a message naming the
// store and saying it is unavailable; once the folder is back the
// session takes evals again with its state.
func TestDirStoreOutageAnswers503(t *testing.T) {
	testenv.RequirePython(t)
	st, err := store.OpenDir(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	ts := newServerWith(t, server.Config{}, sandbox.ManagerOptions{Store: st})
	id := ts.create(t, tokenA)
	ts.eval(t, tokenA, id, cells("py", "x = 1"))
	if err := os.Rename(st.Root(), st.Root()+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st.Root(), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := do(t, "POST", ts.URL+"/v1/sessions/"+id+"/eval", tokenA, cells("py", "x += 1"))
	wantStatus(t, r, http.StatusServiceUnavailable)
	if msg := r.errorMessage(t); !strings.Contains(string(r.body), "store_error") || !strings.Contains(msg, "unavailable") ||
		!strings.Contains(msg, st.Root()) || r.header.Get("Retry-After") == "" {
		t.Fatalf("an eval whose store is unwritable: %s (Retry-After %q)", r.body, r.header.Get("Retry-After"))
	}
	os.Remove(st.Root())
	if err := os.Rename(st.Root()+".away", st.Root()); err != nil {
		t.Fatal(err)
	}
	if got := output(ts.eval(t, tokenA, id, cells("py", "x += 1\nprint(x)"))); got != "3\n" {
		t.Fatalf("after the store came back: %q", got)
	}
}
