package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
	"github.com/wasmeval/wasmeval/store"
)

// TestClusterStreamFollowsMove: a streaming eval that waits on node A for
// its session's turn while the session moves to node B is passed on to B
// (as an eval arriving then would be) and streams B's answer, on the
// state the store holds, instead of ending in an error event. One that
// another node passed on to A already (it hops at most once) ends in an
// error event session_moved that names B.
func TestClusterStreamFollowsMove(t *testing.T) {
	testenv.RequirePython(t)
	t.Run("passed on", func(t *testing.T) { streamDuringMove(t, false) })
	t.Run("already passed on once", func(t *testing.T) { streamDuringMove(t, true) })
}

func streamDuringMove(t *testing.T, forwarded bool) {
	pg := testenv.StartPostgres(t)
	const ttl = 20 * time.Second // nothing here expires
	a := startNode(t, "node-a", pg.URL, ttl)
	b := startNode(t, "node-b", pg.URL, ttl)
	id := a.create(t, tokenA)
	a.eval(t, tokenA, id, cells("py", "x = 1"))

	st, err := store.Open(pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	leases := st.(store.Leaser)
	ctx := context.Background()

	// A long eval holds the session's turn on A, until the test writes
	// "go" into the session's folder on A or its 30 s timeout (not for a
	// fixed 3 s: on a loaded machine B's eval below could take longer)...
	sess, err := a.mgr.Session(server.Owner(tokenA), id)
	if err != nil {
		t.Fatal(err)
	}
	long := make(chan response, 1)
	go func() {
		long <- do(t, "POST", a.URL+"/v1/sessions/"+id+"/eval", tokenA, cells("py",
			"import os, time\nwhile not os.path.exists('go'): time.sleep(0.02)\nx = 2"))
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if info, err := a.mgr.Info(ctx, server.Owner(tokenA), id); err == nil && info.Busy {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the long eval did not start")
		}
	}
	// ...while a streaming eval waits behind it...
	streamed := make(chan response, 1)
	hdr := []string{"Accept", "text/event-stream"}
	if forwarded {
		hdr = append(hdr, "X-Wasmeval-Forwarded-By", "node-c")
	}
	go func() {
		streamed <- do(t, "POST", a.URL+"/v1/sessions/"+id+"/eval", tokenA, cells("py", "print(x)"), hdr...)
	}()
	time.Sleep(500 * time.Millisecond)
	// ...and the session moves to B (A's lease is let go, as when it ran
	// out, and B takes it over with an eval of its own): A learns of it
	// when the long eval's save is refused.
	if err := leases.Release(ctx, id, "node-a"); err != nil {
		t.Fatal(err)
	}
	if out := output(b.eval(t, tokenA, id, cells("py", "print(x)"))); out != "1\n" {
		t.Fatalf("B's eval after it took the session over: %q", out)
	}
	if err := os.WriteFile(filepath.Join(sess.Root(), "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := <-long; r.status == http.StatusOK {
		t.Errorf("the long eval, whose save the move refused, answered 200: %s", r.body)
	}
	r := <-streamed
	wantStatus(t, r, http.StatusOK)
	events := readSSE(t, strings.NewReader(string(r.body)))
	last := events[len(events)-1]
	if forwarded {
		if last.name != "error" || !strings.Contains(last.data, `"session_moved"`) || !strings.Contains(last.data, "node-b") || !strings.Contains(last.data, "retry") {
			t.Fatalf("the stream ended with %s %s, want an error session_moved naming node-b", last.name, last.data)
		}
		return
	}
	if last.name != "done" {
		t.Fatalf("the stream ended with %s %s, want done", last.name, last.data)
	}
	var res sandbox.Result
	if err := json.Unmarshal([]byte(last.data), &res); err != nil {
		t.Fatal(err)
	}
	// The state the store holds: the long eval's change was not kept.
	if out := res.Details.Cells[0].Output; out != "1\n" {
		t.Errorf("the streamed eval printed %q, want the stored state's 1", out)
	}
	if !b.mgr.Holds(id) || a.mgr.Holds(id) {
		t.Errorf("after the move: A holds it %v, B %v; want B only", a.mgr.Holds(id), b.mgr.Holds(id))
	}
}
