package server_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

// newServerWith is newServer over a manager made with mo.
func newServerWith(t *testing.T, cfg server.Config, mo sandbox.ManagerOptions) *testServer {
	t.Helper()
	sb, mgr := newSandbox(t, mo)
	cfg.Sandbox, cfg.Manager = sb, mgr
	if cfg.Tokens == nil {
		cfg.Tokens = []string{tokenA, tokenB}
	}
	cfg.TempDir = t.TempDir()
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &testServer{URL: hs.URL, mgr: mgr, sb: sb, logs: &syncBuffer{}}
}

func TestListAndInfo(t *testing.T) {
	testenv.RequirePython(t)
	ts := newServer(t, server.Config{})
	a1, a2, b1 := ts.create(t, tokenA), ts.create(t, tokenA), ts.create(t, tokenB)

	var list server.SessionList
	r := do(t, "GET", ts.URL+"/v1/sessions", tokenA, nil)
	wantStatus(t, r, http.StatusOK)
	r.json(t, &list)
	var ids []string
	for _, s := range list.Sessions {
		ids = append(ids, s.ID)
	}
	if len(ids) != 2 || !slices.Contains(ids, a1) || !slices.Contains(ids, a2) || slices.Contains(ids, b1) {
		t.Fatalf("token A lists %v, want exactly %s and %s", ids, a1, a2)
	}

	before := time.Now()
	wantStatus(t, do(t, "POST", ts.URL+"/v1/sessions/"+a1+"/eval", tokenA, cells("py", "open('out.txt', 'w').write('x' * 1000)\nsum(range(10000))")), http.StatusOK)
	wantStatus(t, do(t, "POST", ts.URL+"/v1/sessions/"+a1+"/eval", tokenA, cells("js", "1")), http.StatusOK)
	var info sandbox.SessionInfo
	r = do(t, "GET", ts.URL+"/v1/sessions/"+a1, tokenA, nil)
	wantStatus(t, r, http.StatusOK)
	r.json(t, &info)
	if info.ID != a1 || !slices.Equal(info.Languages, []string{"js", "py"}) || info.FuelUsed <= 0 || info.Busy {
		t.Errorf("info %+v: want id %s, languages [js py], fuel used, not busy", info, a1)
	}
	if info.RootBytes < 1000 || info.RootFiles < 1 {
		t.Errorf("info %+v: the root holds a 1000-byte file", info)
	}
	if info.Created.After(before) || info.LastUsed.Before(before) {
		t.Errorf("info %+v: created before the evals at %v, last used after", info, before)
	}
	// Another token's session is not there for A.
	wantStatus(t, do(t, "GET", ts.URL+"/v1/sessions/"+b1, tokenA, nil), http.StatusNotFound)
}

func TestInterrupt(t *testing.T) {
	ts := newServer(t, server.Config{})
	id := ts.create(t, tokenA)
	wantStatus(t, do(t, "POST", ts.URL+"/v1/sessions/"+id+"/eval", tokenA, cells("js", "var kept = 'still here'")), http.StatusOK)

	var idle server.Interrupted
	r := do(t, "POST", ts.URL+"/v1/sessions/"+id+"/interrupt", tokenA, nil)
	wantStatus(t, r, http.StatusOK)
	if r.json(t, &idle); idle.Interrupted {
		t.Error("an idle session reports an interrupted cell")
	}

	done := make(chan response, 1)
	go func() {
		done <- do(t, "POST", ts.URL+"/v1/sessions/"+id+"/eval", tokenA, cells("js", "while (true) {}", "'not run'"))
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var info sandbox.SessionInfo
		do(t, "GET", ts.URL+"/v1/sessions/"+id, tokenA, nil).json(t, &info)
		if info.Busy {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the eval never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The other token cannot interrupt it.
	wantStatus(t, do(t, "POST", ts.URL+"/v1/sessions/"+id+"/interrupt", tokenB, nil), http.StatusNotFound)
	// Busy covers the moment between the eval's arrival and its cell's
	// start, when there is nothing to interrupt yet: ask until a cell runs.
	for {
		var got server.Interrupted
		r = do(t, "POST", ts.URL+"/v1/sessions/"+id+"/interrupt", tokenA, nil)
		wantStatus(t, r, http.StatusOK)
		if r.json(t, &got); got.Interrupted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("interrupting a running cell never reported it stopped")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var res sandbox.Result
	select {
	case r := <-done:
		wantStatus(t, r, http.StatusOK)
		r.json(t, &res)
	case <-time.After(testenv.Stretch(10 * time.Second)):
		t.Fatal("the interrupted eval did not end")
	}
	if c := res.Details.Cells; len(c) != 2 || c[0].Status != "cancelled" || c[1].Status != "pending" || !strings.Contains(res.Content[0].Text, "interrupted") {
		t.Errorf("interrupted eval: %+v, want cancelled (interrupted) then pending", res)
	}
	// The session keeps its state.
	r = do(t, "POST", ts.URL+"/v1/sessions/"+id+"/eval", tokenA, cells("js", "kept"))
	wantStatus(t, r, http.StatusOK)
	r.json(t, &res)
	if out := output(&res); !strings.Contains(out, "still here") {
		t.Errorf("after the interrupt: %q", out)
	}
}

func TestFiles(t *testing.T) {
	ts := newServerWith(t, server.Config{MaxBodyBytes: 1 << 16}, sandbox.ManagerOptions{
		Session: sandbox.SessionOptions{DiskQuotaBytes: 1 << 16},
	})
	id := ts.create(t, tokenA)
	base := ts.URL + "/v1/sessions/" + id + "/files/"

	var w server.Written
	r := do(t, "PUT", base+"notes/a.txt", tokenA, "first")
	wantStatus(t, r, http.StatusCreated)
	if r.json(t, &w); w.Path != "notes/a.txt" || w.Size != 5 {
		t.Errorf("PUT answered %+v", w)
	}
	wantStatus(t, do(t, "PUT", base+"notes/a.txt", tokenA, "second\x00\xff"), http.StatusOK)
	r = do(t, "GET", base+"notes/a.txt", tokenA, nil)
	wantStatus(t, r, http.StatusOK)
	if string(r.body) != "second\x00\xff" || r.header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("GET = %q (%s)", r.body, r.header.Get("Content-Type"))
	}
	// The guest sees what the API wrote, and the API what the guest wrote.
	r = do(t, "POST", ts.URL+"/v1/sessions/"+id+"/eval", tokenA, cells("js", "write('notes/b.txt', 'from the guest'); read('notes/a.txt').length"))
	wantStatus(t, r, http.StatusOK)
	if r = do(t, "GET", base+"notes/b.txt", tokenA, nil); string(r.body) != "from the guest" {
		t.Errorf("GET of a guest's file = %q", r.body)
	}

	var l server.Listing
	r = do(t, "GET", base+"notes", tokenA, nil)
	wantStatus(t, r, http.StatusOK)
	r.json(t, &l)
	if len(l.Entries) != 2 || l.Entries[0].Name != "a.txt" || l.Entries[0].Type != "file" || l.Entries[0].Size != 8 || l.Entries[1].Name != "b.txt" {
		t.Errorf("listing %+v", l)
	}
	for _, root := range []string{ts.URL + "/v1/sessions/" + id + "/files", base} {
		r = do(t, "GET", root, tokenA, nil)
		wantStatus(t, r, http.StatusOK)
		if r.json(t, &l); l.Path != "." || len(l.Entries) != 1 || l.Entries[0].Type != "directory" {
			t.Errorf("root listing %+v", l)
		}
	}

	// Links that lead out are refused, as the guest's helpers refuse them.
	sess, err := ts.mgr.Session(server.Owner(tokenA), id)
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("host secret"), 0o600)
	os.Symlink(secret, filepath.Join(sess.Root(), "leak"))
	os.Symlink(filepath.Dir(secret), filepath.Join(sess.Root(), "hostdir"))
	for _, p := range []string{"leak", "hostdir/secret.txt"} {
		r = do(t, "GET", base+p, tokenA, nil)
		if r.status == http.StatusOK || strings.Contains(string(r.body), "host secret") {
			t.Errorf("GET %s through a link that leads out: %d %s", p, r.status, r.body)
		}
		r = do(t, "PUT", base+p, tokenA, "overwrite")
		if r.status < 400 {
			t.Errorf("PUT %s through a link that leads out: %d", p, r.status)
		}
	}
	if b, _ := os.ReadFile(secret); string(b) != "host secret" {
		t.Errorf("the host file was changed: %q", b)
	}
	// Encoded '..' is cleaned by the router before it reaches the root.
	r = do(t, "GET", base+"notes/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd", tokenA, nil)
	if r.status == http.StatusOK {
		t.Errorf("GET through encoded .. answered 200: %s", r.body)
	}

	// Caps: the body cap, then the disk quota.
	wantStatus(t, do(t, "PUT", base+"big", tokenA, strings.Repeat("x", 1<<16+1)), http.StatusRequestEntityTooLarge)
	for i := 0; ; i++ {
		r = do(t, "PUT", base+"fill/"+strings.Repeat("f", i+1), tokenA, strings.Repeat("x", 1<<15))
		if r.status == http.StatusRequestEntityTooLarge {
			if msg := r.errorMessage(t); !strings.Contains(msg, "quota") {
				t.Errorf("quota refusal says %q", msg)
			}
			break
		}
		wantStatus(t, r, http.StatusCreated)
		if i > 4 {
			t.Fatal("the disk quota of 64 KiB let more than 160 KiB in")
		}
	}

	// Removal.
	wantStatus(t, do(t, "DELETE", base+"notes", tokenA, nil), http.StatusConflict)
	wantStatus(t, do(t, "DELETE", base+"notes/a.txt", tokenA, nil), http.StatusNoContent)
	wantStatus(t, do(t, "GET", base+"notes/a.txt", tokenA, nil), http.StatusNotFound)
	wantStatus(t, do(t, "DELETE", base+"notes/a.txt", tokenA, nil), http.StatusNotFound)
	// Another token sees none of it.
	wantStatus(t, do(t, "GET", base+"notes/b.txt", tokenB, nil), http.StatusNotFound)
	wantStatus(t, do(t, "PUT", base+"x", tokenB, "x"), http.StatusNotFound)
}
