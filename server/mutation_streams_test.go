package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

// These tests kill mutants of docs/mutations.md that the other tests of
// the package let live.

// TestStalledStreamStopsItsCell: a streaming client that stops reading
// ends its stream and stops its cell long before the cell's own timeout:
// the session's next request is answered within seconds, with its state
// kept. TestSlowReaderDoesNotFreezeCell gives its flood a 2 s timeout, so
// it passed with the event queue unbounded (the cell never stalled, and
// its output piled up in host memory until a write timed out); here the
// timeout is 300 s, and the stream must end on its full queue.
func TestStalledStreamStopsItsCell(t *testing.T) {
	ts := newServer(t, server.Config{})
	id := ts.create(t, tokenA)
	ts.eval(t, tokenA, id, cells("js", "var kept = 41"))
	start := time.Now()
	rawEval(t, ts, tokenA, id, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "for (;;) print('x'.repeat(1000))", TimeoutSeconds: 300}}}, true)
	time.Sleep(200 * time.Millisecond) // the flood starts first
	client := &http.Client{Timeout: testenv.Stretch(20 * time.Second)}
	body, _ := json.Marshal(cells("js", "print(kept + 1)"))
	hr, _ := http.NewRequest("POST", ts.URL+"/v1/sessions/"+id+"/eval", bytes.NewReader(body))
	hr.Header.Set("Authorization", "Bearer "+tokenA)
	resp, err := client.Do(hr)
	if err != nil {
		t.Fatalf("the session's next request, %v after a stream stopped being read: %v (its cell was not stopped)", time.Since(start), err)
	}
	defer resp.Body.Close()
	var res sandbox.Result
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	if got := output(&res); got != "42\n" {
		t.Errorf("the session's state after the stalled stream: %q, want %q", got, "42\n")
	}
	// The stream ended because its bounded queue stayed full, not because
	// a write finally timed out with everything the cell printed queued.
	// The flood's handler logs it as it returns, which may come after the
	// next request's answer: wait for it a while.
	ended := func(logs string) bool {
		return strings.Contains(logs, "stream ended early") && strings.Contains(logs, "KiB of events waiting")
	}
	for wait := time.Now().Add(testenv.Stretch(10 * time.Second)); !ended(ts.logs.String()) && time.Now().Before(wait); {
		time.Sleep(20 * time.Millisecond)
	}
	if logs := ts.logs.String(); !ended(logs) {
		t.Errorf("the stalled stream did not end on its full queue; the server logged:\n%s", logs)
	}
	t.Logf("the next request answered %v after the flood began", time.Since(start))
}

// TestBodyTimeoutOnMCP: the body timeout holds for /mcp too, whose body
// the MCP SDK reads rather than the server's own handlers: a trickled body
// is refused once the timeout passes.
// (TestBodyTimeout's paths read their bodies with a deadline of their own,
// so it passed without the server-wide one.)
func TestBodyTimeoutOnMCP(t *testing.T) {
	ts := newServer(t, server.Config{BodyTimeout: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":", strings.TrimPrefix(ts.URL, "http://"), tokenA)
	limit := testenv.Stretch(10 * time.Second)
	conn.SetReadDeadline(time.Now().Add(limit))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("a trickled /mcp body held its connection for %v with no answer: no body timeout", limit)
	}
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("a trickled /mcp body was answered %s, want a refusal", resp.Status)
		}
	}
	t.Logf("answered %v after the trickle began (%v)", time.Since(start), err)
}
