package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/store"
)

// TestServeDrain runs serve as a node over PostgreSQL: its log lines carry
// the node id, its session's lease names it and its address, and on
// SIGTERM (the context's end) it drains: /readyz turns 503, the process
// exits 0, and the lease is released at once rather than after its TTL.
func TestServeDrain(t *testing.T) {
	testenv.RequirePython(t)
	pg := testenv.StartPostgres(t)
	const token = "drain-token"
	t.Setenv("WASMEVAL_TOKENS", token)
	srv := testenv.StartServe(t, doMain, "--store", pg.URL, "--node-id", "drain-node", "--lease-ttl", "1m")
	addr := srv.Addr
	if !strings.Contains(srv.Log(), `"msg":"listening","node":"drain-node"`) {
		t.Fatalf("no listening line with the node id in %s", srv.Log())
	}
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/sessions", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	st, err := store.Open(pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	leases := st.(store.Leaser)
	l, err := leases.Get(context.Background(), v.ID)
	if err != nil || !l.Live || l.Holder != "drain-node" || l.Addr != addr {
		t.Fatalf("the new session's lease: %+v, %v; want held by drain-node at %s", l, err, addr)
	}
	if r, err := http.Get("http://" + addr + "/readyz"); err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("readyz before the drain: %v %v", r, err)
	}
	// Stop ends its context, as SIGTERM does.
	if code := srv.Stop(t); code != exitOK {
		t.Fatalf("serve exited %d after SIGTERM, want 0: %s", code, srv.Log())
	}
	l, err = leases.Get(context.Background(), v.ID)
	if err != nil || l.Live || l.Holder != "" {
		t.Fatalf("the lease after the drain: %+v, %v; want released", l, err)
	}
	if !strings.Contains(srv.Log(), `"msg":"leases released","node":"drain-node"`) {
		t.Errorf("no release in the log:\n%s", srv.Log())
	}
	// The state is in the store for the next node.
	if ids, err := st.List(context.Background()); err != nil || len(ids) != 1 || ids[0] != v.ID {
		t.Errorf("stored sessions: %v, %v", ids, err)
	}
}

func TestNodeFlagErrors(t *testing.T) {
	t.Setenv("WASMEVAL_TOKENS", "t")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--lease-ttl", "10ms"}, "--lease-ttl 10ms: give at least 300ms"},
		{[]string{"--advertise", "nohostport"}, `--advertise "nohostport": want HOST:PORT`},
	} {
		var out, errb bytes.Buffer
		if code := doMain(context.Background(), append([]string{"serve"}, tt.args...), strings.NewReader(""), &out, &errb); code != exitInvalid || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tt.args, code, errb.String(), tt.want)
		}
	}
	var out, errb bytes.Buffer
	doMain(context.Background(), []string{"serve", "-h"}, strings.NewReader(""), &out, &errb)
	for _, f := range []string{"--node-id", "--advertise", "--lease-ttl"} {
		if !strings.Contains(out.String(), "\n  "+f) {
			t.Errorf("serve -h does not explain %s", f)
		}
	}
}
