package server_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
	"github.com/wasmeval/wasmeval/tape"
)

// TestSessionTape fetches a recorded session's tape while the session
// lives and replays it.
func TestSessionTape(t *testing.T) {
	ts := newServerWith(t, server.Config{}, sandbox.ManagerOptions{RecordDir: t.TempDir()})
	var created struct{ ID string }
	do(t, "POST", ts.URL+"/v1/sessions", tokenA, nil).json(t, &created)
	for _, code := range []string{"var n = 6", "console.log(n * 7, Math.random() < 1)"} {
		if r := do(t, "POST", ts.URL+"/v1/sessions/"+created.ID+"/eval", tokenA, map[string]any{"cells": []any{map[string]any{"language": "js", "code": code}}}); r.status != 200 {
			t.Fatalf("eval: %d %s", r.status, r.body)
		}
	}
	r := do(t, "GET", ts.URL+"/v1/sessions/"+created.ID+"/tape", tokenA, nil)
	if r.status != 200 || r.header.Get("Content-Type") != "application/zstd" {
		t.Fatalf("tape: %d %s", r.status, r.body)
	}
	tp, err := tape.Read(bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := replay.Run(context.Background(), tp, replay.Options{})
	if err != nil || !rep.Identical || rep.Requests != 2 {
		t.Fatalf("replay of the fetched tape: %v %+v", err, rep)
	}
	if r := do(t, "GET", ts.URL+"/v1/sessions/"+created.ID+"/tape", tokenB, nil); r.status != 404 {
		t.Errorf("another token's tape: %d", r.status)
	}

	plain := newServer(t, server.Config{})
	do(t, "POST", plain.URL+"/v1/sessions", tokenA, nil).json(t, &created)
	if r := do(t, "GET", plain.URL+"/v1/sessions/"+created.ID+"/tape", tokenA, nil); r.status != 404 || !strings.Contains(string(r.body), "--record-dir") {
		t.Errorf("a tape of a server that does not record: %d %s", r.status, r.body)
	}
}
