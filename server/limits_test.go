package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

// startEval posts req to session id as token without waiting for the
// answer; cancel disconnects the client.
func startEval(t *testing.T, ts *testServer, token, id string, req sandbox.Request, stream bool) (cancel func()) {
	t.Helper()
	body, _ := json.Marshal(req)
	ctx, cancel := context.WithCancel(context.Background())
	hr, err := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/sessions/"+id+"/eval", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Authorization", "Bearer "+token)
	if stream {
		hr.Header.Set("Accept", "text/event-stream")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(hr); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return cancel
}

// rawEval sends an eval request on a connection of its own whose receive
// buffer is small, and never reads the answer: a client that stopped
// reading but did not go away.
func rawEval(t *testing.T, ts *testServer, token, id string, req sandbox.Request, stream bool) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	body, _ := json.Marshal(req)
	accept := "application/json"
	if stream {
		accept = "text/event-stream"
	}
	fmt.Fprintf(conn, "POST /v1/sessions/%s/eval HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nAccept: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		id, token, accept, len(body), body)
}

// waitFile waits until the file name exists.
func waitFile(t *testing.T, name string, limit time.Duration) {
	t.Helper()
	limit = testenv.Stretch(limit) // a loaded machine starts cells late
	start := time.Now()
	for {
		if _, err := os.Stat(name); err == nil {
			return
		}
		if time.Since(start) > limit {
			t.Fatalf("no %s after %v: the cell did not start", name, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// inFlightWithin waits until n evals hold in-flight slots.
func inFlightWithin(t *testing.T, ts *testServer, n int, limit time.Duration) {
	t.Helper()
	gaugeWithin(t, ts, "wasmeval_evals_in_flight", n, limit)
}

// waitingWithin waits until /metrics shows n evals waiting for their
// session's turn, failing the test after limit (stretched).
func waitingWithin(t *testing.T, ts *testServer, n int, limit time.Duration) {
	t.Helper()
	gaugeWithin(t, ts, "wasmeval_evals_waiting", n, limit)
}

func gaugeWithin(t *testing.T, ts *testServer, name string, n int, limit time.Duration) {
	t.Helper()
	limit = testenv.Stretch(limit) // a loaded machine stops cells late
	want := fmt.Sprintf("\n%s %d\n", name, n)
	start := time.Now()
	for {
		r := do(t, "GET", ts.URL+"/metrics", tokenB, nil)
		if strings.Contains(string(r.body), want) {
			return
		}
		if time.Since(start) > limit {
			t.Fatalf("%s never %d within %v", name, n, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestGoneClientsFreeSlots: evals whose clients disconnect (one plain,
// one streaming) stop their cells and free their in-flight slots well
// within the cells' timeout (30 s), even for a cell that swallows its
// KeyboardInterrupt; evals whose clients stop reading free them within
// the cell's own (short) timeout.
func TestGoneClientsFreeSlots(t *testing.T) {
	// Each cell marks that it runs with a file "started" first.
	swallow := "import signal\nsignal.signal(signal.SIGINT, lambda s, f: None)\nopen('started', 'w').close()\nwhile True: pass"
	tests := []struct {
		name, lang, code string
		timeout          int
		disconnect       bool
		limit            time.Duration // from giving up to a third request admitted
	}{
		{"js spin, disconnected", "js", "await write('started', ''); while (true) {}", 30, true, 3 * time.Second},
		{"py spin, disconnected", "py", "open('started', 'w').close()\nwhile True: pass", 30, true, 3 * time.Second},
		// The grace before a hard stop is 2 s.
		{"py swallows its interrupt, disconnected", "py", swallow, 30, true, 6 * time.Second},
		// Clients that stop reading (and stay connected) while the cell
		// floods them: the cell ends at its 2 s timeout all the same.
		{"js flood, not read", "js", "await write('started', ''); for (;;) print('x'.repeat(1000))", 2, false, 8 * time.Second},
		{"py flood, not read", "py", "open('started', 'w').close()\nwhile True: print('x' * 1000)", 2, false, 8 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.lang == "py" {
				testenv.RequirePython(t)
			}
			ts := newServer(t, server.Config{MaxInFlight: 2})
			req := sandbox.Request{Cells: []sandbox.Cell{{Language: tt.lang, Code: tt.code, TimeoutSeconds: tt.timeout}}}
			var cancels []func()
			var roots []string
			for _, stream := range []bool{false, true} {
				id := ts.create(t, tokenA)
				sess, err := ts.mgr.Session(server.Owner(tokenA), id)
				if err != nil {
					t.Fatal(err)
				}
				roots = append(roots, sess.Root())
				if tt.disconnect {
					cancels = append(cancels, startEval(t, ts, tokenA, id, req, stream))
				} else {
					rawEval(t, ts, tokenA, id, req, stream)
				}
			}
			inFlightWithin(t, ts, 2, 5*time.Second)
			for _, root := range roots {
				waitFile(t, filepath.Join(root, "started"), 10*time.Second)
			}
			wantStatus(t, do(t, "POST", ts.URL+"/v1/run", tokenB, `{"language":"js","code":"1"}`), http.StatusTooManyRequests)
			if !tt.disconnect {
				time.Sleep(300 * time.Millisecond) // the flood fills the connections
			}
			for _, c := range cancels {
				c()
			}
			start := time.Now()
			inFlightWithin(t, ts, 0, tt.limit)
			wantStatus(t, do(t, "POST", ts.URL+"/v1/run", tokenB, `{"language":"js","code":"1"}`), http.StatusOK)
			t.Logf("both slots free %v after the clients gave up", time.Since(start))
		})
	}
}

// TestSlowReaderDoesNotFreezeCell: a streaming client that never reads
// while its cell prints a lot loses its stream, not the session: the cell
// ends at its timeout and the next request of the session runs, with the
// session's state.
func TestSlowReaderDoesNotFreezeCell(t *testing.T) {
	tests := []struct{ lang, setup, flood, check, want string }{
		{"js", "var kept = 41", "for (;;) print('x'.repeat(1000))", "print(kept + 1)", "42\n"},
		{"py", "kept = 41", "while True: print('x' * 1000)", "print(kept + 1)", "42\n"},
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			if tt.lang == "py" {
				testenv.RequirePython(t)
			}
			ts := newServer(t, server.Config{})
			id := ts.create(t, tokenA)
			ts.eval(t, tokenA, id, cells(tt.lang, tt.setup))
			start := time.Now()
			rawEval(t, ts, tokenA, id, sandbox.Request{Cells: []sandbox.Cell{{Language: tt.lang, Code: tt.flood, TimeoutSeconds: 2}}}, true)
			time.Sleep(200 * time.Millisecond) // the flood starts first
			client := &http.Client{Timeout: testenv.Stretch(20 * time.Second)}
			body, _ := json.Marshal(cells(tt.lang, tt.check))
			hr, _ := http.NewRequest("POST", ts.URL+"/v1/sessions/"+id+"/eval", bytes.NewReader(body))
			hr.Header.Set("Authorization", "Bearer "+tokenA)
			resp, err := client.Do(hr)
			if err != nil {
				t.Fatalf("the session's next request: %v (the flooding cell froze it)", err)
			}
			defer resp.Body.Close()
			var res sandbox.Result
			if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, %v", resp.StatusCode, err)
			}
			took := time.Since(start)
			if got := output(&res); got != tt.want {
				t.Errorf("the session's state after the flood: %q, want %q", got, tt.want)
			}
			// 2 s timeout, 1 s at most waiting on the full queue, slack.
			if took > testenv.Stretch(6*time.Second) {
				t.Errorf("the next request ran %v after the flood began; want the flood stopped at its 2 s timeout", took)
			}
			t.Logf("the next request answered %v after the flood began", took)
		})
	}
}

// TestBodyTimeout: a client that trickles its body gets 408 and its
// connection closed once the body timeout passes, before any slot is
// taken.
func TestBodyTimeout(t *testing.T) {
	ts := newServer(t, server.Config{BodyTimeout: 300 * time.Millisecond})
	id := ts.create(t, tokenA)
	for _, path := range []string{"/v1/sessions/" + id + "/eval", "/v1/run", "/v1/sessions"} {
		t.Run(path, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			start := time.Now()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: 1000\r\n\r\n{\"cells\":", path, tokenA)
			conn.SetReadDeadline(time.Now().Add(testenv.Stretch(10 * time.Second)))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer to a trickled body: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout {
				t.Errorf("status %d, want 408", resp.StatusCode)
			}
			if took := time.Since(start); took > testenv.Stretch(5*time.Second) {
				t.Errorf("answered after %v", took)
			}
			conn.SetReadDeadline(time.Now().Add(testenv.Stretch(3 * time.Second)))
			if _, err := conn.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("the connection stays open after a body timeout: %v", err)
			}
		})
	}
}

// TestWaitingEvalHoldsNoSlot: evals queued behind a session's running
// cell hold no in-flight slot, so queueing on one busy session cannot
// starve another tenant; past maxWaiting, more are refused.
func TestWaitingEvalHoldsNoSlot(t *testing.T) {
	ts := newServer(t, server.Config{MaxInFlight: 2})
	id := ts.create(t, tokenA)
	hang := sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "while (true) {}", TimeoutSeconds: 30}}}
	startEval(t, ts, tokenA, id, hang, false)
	inFlightWithin(t, ts, 1, 5*time.Second)
	// Eight more wait for the session (its limit); none takes a slot.
	for range 8 {
		startEval(t, ts, tokenA, id, cells("js", "1"), false)
	}
	waitingWithin(t, ts, 8, 10*time.Second)
	r := do(t, "POST", ts.URL+"/v1/sessions/"+id+"/eval", tokenA, cells("js", "1"))
	wantStatus(t, r, http.StatusTooManyRequests)
	if msg := r.errorMessage(t); !strings.Contains(msg, "wait for this session") {
		t.Errorf("message %q", msg)
	}
	r = do(t, "GET", ts.URL+"/metrics", tokenB, nil)
	if !strings.Contains(string(r.body), "wasmeval_evals_in_flight 1\n") {
		t.Error("evals waiting for their session hold in-flight slots")
	}
	wantStatus(t, do(t, "POST", ts.URL+"/v1/run", tokenB, `{"language":"js","code":"1"}`), http.StatusOK)
}
