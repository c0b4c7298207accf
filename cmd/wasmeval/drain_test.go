package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb lockedBuffer
	exited := make(chan int, 1)
	go func() {
		exited <- doMain(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--store", pg.URL, "--node-id", "drain-node",
			"--lease-ttl", "1m", "--log-format", "json"}, strings.NewReader(""), &out, &errb)
	}()
	addrRE := regexp.MustCompile(`"msg":"listening","node":"drain-node","addr":"([^"]+)"`)
	var addr string
	for deadline := time.Now().Add(90 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := addrRE.FindStringSubmatch(errb.String()); m != nil {
			addr = m[1]
		}
		select {
		case code := <-exited:
			t.Fatalf("serve exited %d: %s", code, errb.String())
		default:
		}
	}
	if addr == "" {
		t.Fatalf("no listening line with the node id in %s", errb.String())
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
	cancel()
	select {
	case code := <-exited:
		if code != exitOK {
			t.Fatalf("serve exited %d after SIGTERM, want 0: %s", code, errb.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not exit within 60s of SIGTERM")
	}
	l, err = leases.Get(context.Background(), v.ID)
	if err != nil || l.Live || l.Holder != "" {
		t.Fatalf("the lease after the drain: %+v, %v; want released", l, err)
	}
	if !strings.Contains(errb.String(), `"msg":"leases released","node":"drain-node"`) {
		t.Errorf("no release in the log:\n%s", errb.String())
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
