package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/internal/benchreport/cputime"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

// BenchmarkEvalRoundTrip: one client, one session, a trivial Python cell
// (x = 1) a request, back to back over loopback, checkpoints on as serve
// runs sessions: the JSON API's POST /v1/sessions/{id}/eval and MCP's
// eval tool at /mcp. ns/op is the client's round trip; cpu-ns/op is the
// process's CPU (client and server) per cell. The session's work between
// cells (the checkpoint) runs after each answer, off the next request's
// path (issue 15).
func BenchmarkEvalRoundTrip(b *testing.B) {
	testenv.RequirePython(b)
	sb, mgr := newSandbox(b, sandbox.ManagerOptions{Session: sandbox.SessionOptions{Checkpoints: true}})
	srv, err := server.New(server.Config{Sandbox: sb, Manager: mgr, Tokens: []string{tokenA}, TempDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	b.Cleanup(hs.Close)
	ts := &testServer{URL: hs.URL, mgr: mgr, sb: sb}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	b.Cleanup(client.CloseIdleConnections)

	b.Run("face=http", func(b *testing.B) {
		id := ts.create(b, tokenA)
		body, _ := json.Marshal(cells("py", "x = 1"))
		cell := func() {
			req, _ := http.NewRequest("POST", ts.URL+"/v1/sessions/"+id+"/eval", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tokenA)
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			data, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(data, []byte(`"status":"complete"`)) {
				b.Fatalf("status %d, %v: %s", resp.StatusCode, err, data)
			}
		}
		roundTrips(b, cell)
	})
	b.Run("face=mcp", func(b *testing.B) {
		tr := &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1, DisableStandaloneSSE: true,
			HTTPClient: &http.Client{Transport: bearer{tokenA, client.Transport}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), tr, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		args := map[string]any{"cells": []any{map[string]any{"language": "py", "code": "x = 1"}}}
		cell := func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "eval", Arguments: args})
			if err != nil || res.IsError {
				b.Fatalf("%v %+v", err, res)
			}
		}
		roundTrips(b, cell)
	})
}

// roundTrips runs cell b.N times after a warm-up, reporting the CPU per op.
func roundTrips(b *testing.B, cell func()) {
	for range 100 {
		cell()
	}
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cputime.Self()
	for b.Loop() {
		cell()
	}
	b.ReportMetric(float64((cputime.Self()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
