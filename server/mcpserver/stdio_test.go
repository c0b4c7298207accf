package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/server/mcpserver"
)

// TestLineTransportSurvivesBadLines: lines that are not JSON, not JSON-RPC,
// a batch, or too long each get a JSON-RPC error, and the connection still
// answers a valid request after them (the SDK's IOTransport ends the
// connection at the first such line).
func TestLineTransportSurvivesBadLines(t *testing.T) {
	srv, _ := newServer(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- srv.MCP().Run(ctx, &mcpserver.LineTransport{Reader: inR, Writer: outW, MaxLineBytes: 4 << 10})
		outW.Close()
	}()
	answers := make(chan map[string]any, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("the server wrote a line that is not JSON: %q", sc.Text())
			}
			answers <- m
		}
		close(answers)
	}()
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatalf("writing %.40q: %v", line, err)
		}
	}
	next := func() map[string]any {
		t.Helper()
		select {
		case m, ok := <-answers:
			if !ok {
				t.Fatal("the server closed its output")
			}
			return m
		case <-ctx.Done():
			t.Fatal("no answer")
		}
		return nil
	}
	expectError := func(what string, id any, code float64, text string) {
		t.Helper()
		m := next()
		e, _ := m["error"].(map[string]any)
		if m["id"] != id || e == nil || e["code"] != code || !strings.Contains(e["message"].(string), text) {
			t.Errorf("%s: answered %v, want error %v %q with id %v", what, m, code, text, id)
		}
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := next(); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	send(`{"jsonrpc": "2.0", "id": 2, "method": "tools/list"`) // cut short
	expectError("invalid JSON", nil, -32700, "not valid JSON")
	send(`{"hello": "world"}`)
	expectError("not JSON-RPC", nil, -32600, "not a JSON-RPC 2.0 message")
	send(`{"jsonrpc":"2.0","id":"x9","method":12}`)
	expectError("not JSON-RPC, with an id", "x9", -32600, "not a JSON-RPC 2.0 message")
	send(`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`)
	expectError("batch", nil, -32600, "batches are not supported")
	send(`{"jsonrpc":"2.0","id":4,"method":"ping","params":{"pad":"` + strings.Repeat("x", 64<<10) + `"}}`)
	expectError("oversized", nil, -32700, "longer than 4096 bytes")
	send("")
	send(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	m := next()
	if m["id"] != float64(5) || m["result"] == nil {
		t.Fatalf("tools/list after the bad lines: %v", m)
	}
	if tools, _ := m["result"].(map[string]any)["tools"].([]any); len(tools) == 0 {
		t.Errorf("tools/list: no tools in %v", m)
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil && err != io.EOF && !strings.Contains(err.Error(), "EOF") {
			t.Errorf("Run: %v", err)
		}
	case <-ctx.Done():
		t.Error("Run did not end at the end of the input")
	}
}
