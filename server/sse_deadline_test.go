package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

// TestBlockedWriteStopsItsCell: a streaming client that reads the headers
// and then nothing, with small socket buffers on both sides, while its
// cell prints a few hundred KiB (enough to fill the kernel's buffers, not
// the 1 MiB event queue) and then goes quiet. The writer is then blocked
// in a write with the queue not full, so the stall timer never fires:
// only the per-write deadline ends the stream and stops the cell, well
// within the cell's own 120 s timeout. Another tenant's session answers
// meanwhile, and the session's next request gets its state.
func TestBlockedWriteStopsItsCell(t *testing.T) {
	defer server.SetWriteTimeout(2 * time.Second)()
	sb, mgr := newSandbox(t, sandbox.ManagerOptions{})
	logs := &syncBuffer{}
	srv, err := server.New(server.Config{Sandbox: sb, Manager: mgr, Tokens: []string{tokenA, tokenB},
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(srv)
	hs.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.(*net.TCPConn).SetWriteBuffer(8 << 10) // the server's half
		}
	}
	hs.Start()
	t.Cleanup(hs.Close)
	ts := &testServer{URL: hs.URL, mgr: mgr, sb: sb, logs: logs}

	id := ts.create(t, tokenA)
	other := ts.create(t, tokenB)
	ts.eval(t, tokenA, id, cells("js", "var kept = 41"))

	// The client's half: a receive buffer set before connecting, so the
	// window it offers stays small.
	d := net.Dialer{Control: func(network, address string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	code := `for (let i = 0; i < 300; i++) print(String(i).padEnd(1000, 'x'));
await new Promise(r => setTimeout(r, 600000))`
	body, _ := json.Marshal(sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: code, TimeoutSeconds: 120}}})
	fmt.Fprintf(conn, "POST /v1/sessions/%s/eval HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		id, tokenA, len(body), body)
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(testenv.Stretch(30 * time.Second)))
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 512), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("the stream's answer: %s %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	// From here the client reads nothing.

	// Another tenant is answered while the stream is blocked.
	if res := ts.eval(t, tokenB, other, cells("js", "print(6 * 7)")); output(res) != "42\n" {
		t.Errorf("another tenant's session during the blocked stream: %q", output(res))
	}

	client := &http.Client{Timeout: testenv.Stretch(30 * time.Second)}
	b, _ := json.Marshal(cells("js", "print(kept + 1)"))
	hr, _ := http.NewRequest("POST", ts.URL+"/v1/sessions/"+id+"/eval", bytes.NewReader(b))
	hr.Header.Set("Authorization", "Bearer "+tokenA)
	r, err := client.Do(hr)
	if err != nil {
		t.Fatalf("the session's next request, %v after the blocked stream began: %v (its cell was not stopped)", time.Since(start), err)
	}
	defer r.Body.Close()
	var res sandbox.Result
	if err := json.NewDecoder(r.Body).Decode(&res); err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("status %d, %v", r.StatusCode, err)
	}
	if got := output(&res); got != "42\n" {
		t.Errorf("the session's state after the blocked stream: %q, want %q", got, "42\n")
	}
	took := time.Since(start)
	t.Logf("the next request answered %v after the stream began", took)
	// The stream ended on its write deadline, not its full queue.
	ended := func(logs string) bool {
		return strings.Contains(logs, "stream ended early") && strings.Contains(logs, "writing an event") && strings.Contains(logs, "timeout")
	}
	for wait := time.Now().Add(testenv.Stretch(10 * time.Second)); !ended(logs.String()) && time.Now().Before(wait); {
		time.Sleep(20 * time.Millisecond)
	}
	if l := logs.String(); !ended(l) {
		t.Errorf("the blocked stream did not end on a write's deadline; the server logged:\n%s", l)
	}
}
