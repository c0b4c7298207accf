package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
	"github.com/wasmeval/wasmeval/store"
)

// listed is GET /v1/sessions for token through base: the sessions as the
// typed answer and as raw JSON objects (to compare their shapes).
func listed(t *testing.T, base, token string) ([]sandbox.SessionInfo, []map[string]any) {
	t.Helper()
	r := do(t, "GET", base+"/v1/sessions", token, nil)
	wantStatus(t, r, http.StatusOK)
	var typed server.SessionList
	r.json(t, &typed)
	var raw struct{ Sessions []map[string]any }
	r.json(t, &raw)
	return typed.Sessions, raw.Sessions
}

func ids(infos []sandbox.SessionInfo) []string {
	var out []string
	for _, in := range infos {
		out = append(out, in.ID)
	}
	sort.Strings(out)
	return out
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestListSessionsAfterRestart: with a dir:// store, GET /v1/sessions
// after a restart lists every session the store holds for the caller,
// used since or not, in the same shape as a loaded one, and none of
// another token's.
func TestListSessionsAfterRestart(t *testing.T) {
	testenv.RequirePython(t)
	ws := t.TempDir()
	st, err := store.OpenDir(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	start := func() *testServer {
		sb, mgr := newSandbox(t, sandbox.ManagerOptions{Workspace: ws, Store: st, IdleTimeout: -1})
		srv, err := server.New(server.Config{Sandbox: sb, Manager: mgr, Tokens: []string{tokenA, tokenB},
			Logger: slog.New(slog.DiscardHandler), TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		t.Cleanup(hs.Close)
		return &testServer{URL: hs.URL, mgr: mgr, sb: sb}
	}
	first := start()
	py := first.create(t, tokenA)
	first.eval(t, tokenA, py, cells("py", "x = 1"))
	js := first.create(t, tokenA)
	first.eval(t, tokenA, js, cells("js", "var y = 2"))
	other := first.create(t, tokenB)
	before, _ := listed(t, first.URL, tokenA)
	first.mgr.Close(context.Background())

	second := start()
	if second.mgr.Len() != 0 {
		t.Fatalf("the restarted manager holds %d sessions before any request", second.mgr.Len())
	}
	got, raw := listed(t, second.URL, tokenA)
	if want := []string{js, py}; !slices.Equal(ids(got), sortedCopy(want)) {
		t.Fatalf("token A's sessions after the restart: %v, want %v", ids(got), sortedCopy(want))
	}
	for i, in := range got {
		var was sandbox.SessionInfo
		for _, b := range before {
			if b.ID == in.ID {
				was = b
			}
		}
		if !in.Created.Equal(was.Created) || in.Busy || in.LastUsed.Before(was.Created) {
			t.Errorf("session %s after the restart: %+v; before it: %+v", in.ID, in, was)
		}
		wantLang := map[string][]string{py: {"py"}, js: {"js"}}[in.ID]
		if !slices.Equal(in.Languages, wantLang) {
			t.Errorf("session %s's languages: %v, want %v", in.ID, in.Languages, wantLang)
		}
		if i > 0 && got[i-1].Created.After(in.Created) {
			t.Errorf("not oldest first: %v", got)
		}
	}
	if b, _ := listed(t, second.URL, tokenB); !slices.Equal(ids(b), []string{other}) {
		t.Errorf("token B's sessions: %v, want [%s]", ids(b), other)
	}
	// Once one is loaded (used), it is listed once, in the same shape.
	second.eval(t, tokenA, py, cells("py", "print(x)"))
	got, raw2 := listed(t, second.URL, tokenA)
	if len(got) != 2 {
		t.Fatalf("after loading one: %v", ids(got))
	}
	var loaded, stored map[string]any
	for _, m := range raw2 {
		if m["id"] == py {
			loaded = m
		} else {
			stored = m
		}
	}
	if !slices.Equal(keys(loaded), keys(stored)) || !slices.Equal(keys(raw[0]), keys(loaded)) {
		t.Errorf("a loaded session lists as %v, one only stored as %v", keys(loaded), keys(stored))
	}
	if in := got[slices.IndexFunc(got, func(i sandbox.SessionInfo) bool { return i.ID == py })]; in.FuelUsed <= 0 {
		t.Errorf("the loaded session's fuel: %+v", in)
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}

// TestClusterListSessions: on nodes sharing a PostgreSQL store, GET
// /v1/sessions through any node lists every session of the caller,
// whichever node made or holds it, and none of another token's.
func TestClusterListSessions(t *testing.T) {
	pg := testenv.StartPostgres(t)
	a := startNode(t, "node-a", pg.URL, 10*time.Second)
	b := startNode(t, "node-b", pg.URL, 10*time.Second)
	onA := a.create(t, tokenA)
	a.eval(t, tokenA, onA, cells("js", "1"))
	onB := b.create(t, tokenA)
	otherB := b.create(t, tokenB)
	want := sortedCopy([]string{onA, onB})
	for _, n := range []*clusterNode{a, b} {
		got, raw := listed(t, n.URL, tokenA)
		if !slices.Equal(ids(got), want) {
			t.Errorf("token A's sessions through %s: %v, want %v", n.node.ID(), ids(got), want)
		}
		if len(raw) == 2 && !slices.Equal(keys(raw[0]), keys(raw[1])) {
			t.Errorf("the two sessions list in different shapes: %v and %v", keys(raw[0]), keys(raw[1]))
		}
		if got, _ := listed(t, n.URL, tokenB); !slices.Equal(ids(got), []string{otherB}) {
			t.Errorf("token B's sessions through %s: %v", n.node.ID(), ids(got))
		}
	}
}
