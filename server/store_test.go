package server_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
	"github.com/wasmeval/wasmeval/store"
)

// failingStore is a dir store whose saves fail while fail is set, as a
// store that cannot be reached.
type failingStore struct {
	*store.Dir
	fail atomic.Bool
}

func (s *failingStore) Save(ctx context.Context, st *store.State, epoch int64) error {
	if s.fail.Load() {
		return errors.New("store: the disk went away: " + store.ErrUnavailable.Error())
	}
	return s.Dir.Save(ctx, st, epoch)
}

// TestStoreFailureAnswers503: an eval whose session cannot be saved
// answers 503 store_error with Retry-After, saying so; once the store is
// back the session goes on with its state.
func TestStoreFailureAnswers503(t *testing.T) {
	dir, err := store.OpenDir(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	st := &failingStore{Dir: dir}
	sb, mgr := newSandbox(t, sandbox.ManagerOptions{Store: st})
	srv, err := server.New(server.Config{Sandbox: sb, Manager: mgr, Tokens: []string{tokenA}, Logger: slog.New(slog.NewJSONHandler(&syncBuffer{}, nil)), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ts := &testServer{URL: hs.URL, mgr: mgr, sb: sb}
	id := ts.create(t, tokenA)
	ts.eval(t, tokenA, id, cells("js", "var a = 1"))
	st.fail.Store(true)
	r := do(t, "POST", hs.URL+"/v1/sessions/"+id+"/eval", tokenA, cells("js", "a = 2"))
	wantStatus(t, r, http.StatusServiceUnavailable)
	if msg := r.errorMessage(t); !strings.Contains(msg, "session store") || !strings.Contains(msg, "disk went away") || r.header.Get("Retry-After") == "" {
		t.Fatalf("answer to an eval whose save failed: %s (Retry-After %q)", r.body, r.header.Get("Retry-After"))
	}
	st.fail.Store(false)
	if got := output(ts.eval(t, tokenA, id, cells("js", "a"))); strings.TrimSpace(got) != "2" {
		t.Fatalf("after the store came back: %q", got)
	}
}
