package server_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
	"github.com/wasmeval/wasmeval/store"
)

// clusterNode is one in-process node of a test cluster.
type clusterNode struct {
	*testServer
	node *server.Node
	srv  *server.Server
	hs   *httptest.Server
}

func startNode(t *testing.T, id, storeURL string, ttl time.Duration) *clusterNode {
	t.Helper()
	st, err := store.Open(storeURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	node, err := server.NewNode(server.NodeConfig{ID: id, Addr: ln.Addr().String(), Store: st, LeaseTTL: ttl,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)).With("node", id)})
	if err != nil {
		t.Fatal(err)
	}
	sb, mgr := newSandbox(t, sandbox.ManagerOptions{Store: node.Store()})
	srv, err := server.New(server.Config{Sandbox: sb, Manager: mgr, Tokens: []string{tokenA, tokenB}, Node: node,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	t.Cleanup(func() { node.Close(context.Background()) })
	return &clusterNode{testServer: &testServer{URL: hs.URL, mgr: mgr, sb: sb, logs: logs}, node: node, srv: srv, hs: hs}
}

// TestClusterRouting runs two nodes over one PostgreSQL store: a session
// made on A is reached through B (passed on to A), another token gets 404
// through either, and with A gone B answers 503 until A's lease runs out.
func TestClusterRouting(t *testing.T) {
	pg := testenv.StartPostgres(t)
	// Long enough that no renewal is late on a loaded machine: nothing
	// here expires.
	const ttl = 10 * time.Second
	a := startNode(t, "node-a", pg.URL, ttl)
	b := startNode(t, "node-b", pg.URL, ttl)

	id := a.create(t, tokenA)
	res := b.eval(t, tokenA, id, cells("js", "var n = 41", "n + 1"))
	if out := output(res); !strings.Contains(out, "42") {
		t.Fatalf("an eval through B: %q", out)
	}
	if b.mgr.Len() != 0 || a.mgr.Len() != 1 {
		t.Fatalf("sessions: A holds %d, B %d; want 1 and 0 (B passes requests on)", a.mgr.Len(), b.mgr.Len())
	}
	// The state is A's: a second eval through B sees it.
	if out := output(b.eval(t, tokenA, id, cells("js", "n"))); !strings.Contains(out, "41") {
		t.Fatalf("state through B: %q", out)
	}
	for _, n := range []*clusterNode{a, b} {
		r := do(t, "POST", n.URL+"/v1/sessions/"+id+"/eval", tokenB, cells("js", "1"))
		wantStatus(t, r, http.StatusNotFound)
	}
	// Without a valid token nothing is passed on: B answers 401 itself.
	r := do(t, "POST", b.URL+"/v1/sessions/"+id+"/eval", "wrong", cells("js", "1"))
	wantStatus(t, r, http.StatusUnauthorized)

	m := do(t, "GET", b.URL+"/metrics", tokenA, nil)
	for _, want := range []string{`wasmeval_proxied_requests_total{node="node-b",outcome="ok"} 3`, `wasmeval_node_info{node="node-b"} 1`} {
		if !strings.Contains(string(m.body), want) {
			t.Errorf("B's metrics lack %s", want)
		}
	}
	m = do(t, "GET", a.URL+"/metrics", tokenA, nil)
	if !strings.Contains(string(m.body), `wasmeval_sessions_owned{node="node-a"} 1`) {
		t.Errorf("A's metrics lack its owned session:\n%s", grepLines(string(m.body), "wasmeval_sessions_owned"))
	}

	// A dies (its listener closes; its lease is not released).
	a.hs.Close()
	r = do(t, "POST", b.URL+"/v1/sessions/"+id+"/eval", tokenA, cells("js", "1"))
	wantStatus(t, r, http.StatusServiceUnavailable)
	if !strings.Contains(string(r.body), "node-a") || r.header.Get("Retry-After") == "" {
		t.Errorf("the answer for an unreachable holder: %s (Retry-After %q)", r.body, r.header.Get("Retry-After"))
	}
}

// TestClusterTakeover: a lease that ran out is taken by the node the
// request reaches, at a higher epoch; that node loads the session's state
// from the store, and the old holder's copy is unloaded when it learns of
// it.
func TestClusterTakeover(t *testing.T) {
	testenv.RequirePython(t)
	pg := testenv.StartPostgres(t)
	a := startNode(t, "node-a", pg.URL, 900*time.Millisecond)
	// B's leases outlast the test, so that A cannot take the session
	// back while its own eval below is refused.
	b := startNode(t, "node-b", pg.URL, time.Minute)
	id := a.create(t, tokenA)
	a.eval(t, tokenA, id, cells("py", "x = 41", "open('f.txt', 'w').write('kept')"))
	st, err := store.Open(pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	leases := st.(store.Leaser)
	l1, err := leases.Get(context.Background(), id)
	if err != nil || l1.Holder != "node-a" {
		t.Fatalf("lease after create: %+v, %v", l1, err)
	}
	// A stops renewing (as if paused); its lease runs out.
	a.node.Close(context.Background())
	if _, err := leases.Acquire(context.Background(), id, "node-a", a.hs.Listener.Addr().String(), 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	// B takes it over and loads it.
	res := b.eval(t, tokenA, id, cells("py", "print(x + 1, open('f.txt').read())"))
	if out := output(res); out != "42 kept\n" {
		t.Fatalf("after the takeover: %q", out)
	}
	if !b.mgr.Holds(id) {
		t.Error("B does not hold the session it took over")
	}
	l2, err := leases.Get(context.Background(), id)
	if err != nil || l2.Holder != "node-b" || l2.Epoch <= l1.Epoch {
		t.Fatalf("lease after takeover: %+v (was %+v), %v", l2, l1, err)
	}
	m := do(t, "GET", b.URL+"/metrics", tokenA, nil)
	for _, want := range []string{`wasmeval_session_takeovers_total{node="node-b"} 1`, `wasmeval_session_loads_total{node="node-b"} 1`,
		`wasmeval_persists_total{node="node-b",outcome="ok"} 1`, `wasmeval_persist_duration_seconds_count{node="node-b"} 1`} {
		if !strings.Contains(string(m.body), want) {
			t.Errorf("B's metrics lack %s:\n%s", want, grepLines(string(m.body), "node-b"))
		}
	}
	// A's save at its old epoch is refused, through A's own store too.
	err = a.node.Store().Save(context.Background(), &store.State{ID: id, Artifact: "x", FullFiles: true}, 1)
	if !errors.Is(err, store.ErrStaleEpoch) {
		t.Fatalf("the old holder's save: %v", err)
	}
	// An eval that reaches A directly (as if its renewal had not yet
	// told it) fails at its save, and A drops its stale copy.
	r := do(t, "POST", a.URL+"/v1/sessions/"+id+"/eval", tokenA, cells("py", "x = 0"), "X-Wasmeval-Forwarded-By", "test")
	if r.status == http.StatusOK {
		t.Fatalf("an eval on the old holder after the takeover answered 200: %s", r.body)
	}
	if out := output(b.eval(t, tokenA, id, cells("py", "print(x)"))); out != "41\n" {
		t.Fatalf("the old holder's eval reached the state: %q", out)
	}
	time.Sleep(100 * time.Millisecond)
	if a.mgr.Holds(id) {
		t.Error("A still holds its stale copy after its save was refused")
	}
}

// TestClusterStoreOutage: with the database gone, an eval answers 503
// saying so, and once it is back the session is as of its last answered
// eval (the failed eval's change is not kept) and takes evals again.
func TestClusterStoreOutage(t *testing.T) {
	testenv.RequirePython(t)
	pg := testenv.StartPostgres(t)
	a := startNode(t, "node-a", pg.URL, 5*time.Second)
	id := a.create(t, tokenA)
	a.eval(t, tokenA, id, cells("py", "x = 1"))
	pg.Stop()
	r := do(t, "POST", a.URL+"/v1/sessions/"+id+"/eval", tokenA, cells("py", "x += 1"))
	wantStatus(t, r, http.StatusServiceUnavailable)
	if !strings.Contains(string(r.body), "unavailable") || r.header.Get("Retry-After") == "" {
		t.Errorf("the answer during the outage: %s", r.body)
	}
	r = do(t, "POST", a.URL+"/v1/sessions/"+id+"/eval", tokenA, cells("py", "print(x)"))
	wantStatus(t, r, http.StatusServiceUnavailable)
	pg.Start()
	if out := output(a.eval(t, tokenA, id, cells("py", "print(x)"))); out != "1\n" {
		t.Fatalf("after the outage: %q, want the state of the last answered eval", out)
	}
	if out := output(a.eval(t, tokenA, id, cells("py", "x += 1; print(x)"))); out != "2\n" {
		t.Fatalf("an eval after the outage: %q", out)
	}
}

// TestReadyz: /readyz follows the store and the drain; /healthz does not.
func TestReadyz(t *testing.T) {
	ts := newServer(t, server.Config{})
	wantStatus(t, do(t, "GET", ts.URL+"/readyz", "", nil), http.StatusOK)

	pg := testenv.StartPostgres(t)
	n := startNode(t, "node-r", pg.URL, time.Second)
	r := do(t, "GET", n.URL+"/readyz", "", nil)
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(string(r.body), `"node":"node-r"`) {
		t.Errorf("readyz: %s", r.body)
	}
	pg.Stop()
	r = do(t, "GET", n.URL+"/readyz", "", nil)
	wantStatus(t, r, http.StatusServiceUnavailable)
	if !strings.Contains(string(r.body), "the session store cannot be reached") {
		t.Errorf("readyz during an outage: %s", r.body)
	}
	wantStatus(t, do(t, "GET", n.URL+"/healthz", "", nil), http.StatusOK)
	// A session made during the outage is refused with 503, not half made.
	r = do(t, "POST", n.URL+"/v1/sessions", tokenA, nil)
	wantStatus(t, r, http.StatusServiceUnavailable)
	if n.mgr.Len() != 0 {
		t.Errorf("the refused session stayed: %d sessions", n.mgr.Len())
	}
	pg.Start()
	wantStatus(t, do(t, "GET", n.URL+"/readyz", "", nil), http.StatusOK)
	n.srv.Drain()
	r = do(t, "GET", n.URL+"/readyz", "", nil)
	wantStatus(t, r, http.StatusServiceUnavailable)
	if !strings.Contains(string(r.body), "draining") {
		t.Errorf("readyz while draining: %s", r.body)
	}
}

// TestNodeCloseReleasesLeases: a drained node's sessions are free at
// once, not after the TTL.
func TestNodeCloseReleasesLeases(t *testing.T) {
	pg := testenv.StartPostgres(t)
	a := startNode(t, "node-a", pg.URL, time.Minute)
	id := a.create(t, tokenA)
	st, err := store.Open(pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	leases := st.(store.Leaser)
	if l, err := leases.Get(context.Background(), id); err != nil || !l.Live {
		t.Fatalf("before: %+v, %v", l, err)
	}
	if err := a.node.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l, err := leases.Get(context.Background(), id); err != nil || l.Live || l.Holder != "" {
		t.Fatalf("after Close: %+v, %v (want released)", l, err)
	}
}

// TestMovedSession: a session the manager does not hold but the store
// holds for the caller moved while the request was on its way (503,
// retry); another owner's, or one never stored, is a 404.
func TestMovedSession(t *testing.T) {
	pg := testenv.StartPostgres(t)
	a := startNode(t, "node-a", pg.URL, 10*time.Second)
	id := a.create(t, tokenA)
	for _, tc := range []struct {
		name, token, id string
		want            int
	}{
		{"the owner's session", tokenA, id, http.StatusServiceUnavailable},
		{"another owner's", tokenB, id, http.StatusNotFound},
		{"never stored", tokenA, "000000000000000000000000", http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/v1/sessions/"+tc.id+"/eval", nil)
			r.Header.Set("Authorization", "Bearer "+tc.token)
			w := httptest.NewRecorder()
			a.srv.AnswerNoSession(w, r)
			if w.Code != tc.want {
				t.Fatalf("%d %s, want %d", w.Code, w.Body, tc.want)
			}
			if tc.want == http.StatusServiceUnavailable && (!strings.Contains(w.Body.String(), "session_moved") || w.Header().Get("Retry-After") == "") {
				t.Errorf("answer %s (Retry-After %q)", w.Body, w.Header().Get("Retry-After"))
			}
		})
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
