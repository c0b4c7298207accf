package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

// TestEvalSettlesAfterAnswer: an eval's session does its work between
// cells (sandbox.Session.Settle: the trim and the checkpoint the cell left)
// once the answer is out, JSON or stream, so that its next eval does not
// wait for it (issue 15); and a settle, however slow, delays no answer:
// neither its own nor that of another session's eval sent on the same
// connection meanwhile.
func TestEvalSettlesAfterAnswer(t *testing.T) {
	ts := newServer(t, server.Config{})
	settled := make(chan *sandbox.Session, 10)
	slow := make(chan struct{}) // the settles wait for it: slow ones
	t.Cleanup(server.SetSettleForTest(func(s *sandbox.Session) {
		settled <- s
		<-slow
		s.Settle()
	}))
	t.Cleanup(func() { close(slow) })
	// One connection: a request waits for the handler of the one before.
	client := &http.Client{
		Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1},
		Timeout:   testenv.Stretch(10 * time.Second),
	}
	t.Cleanup(client.CloseIdleConnections)
	eval := func(id string, sse bool) string {
		t.Helper()
		body, _ := json.Marshal(cells("js", "print('"+id+"')"))
		req, _ := http.NewRequest("POST", ts.URL+"/v1/sessions/"+id+"/eval", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tokenA)
		if sse {
			req.Header.Set("Accept", "text/event-stream")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("eval in %s (stream %v): %v", id, sse, err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("eval in %s (stream %v): status %d, %v: %s", id, sse, resp.StatusCode, err, data)
		}
		return string(data)
	}
	wantSettle := func(id string) {
		t.Helper()
		want, err := ts.mgr.Session(server.Owner(tokenA), id)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case s := <-settled:
			if s != want {
				t.Fatalf("after an eval in %s, a settle of another session (root %s)", id, s.Root())
			}
		case <-time.After(testenv.Stretch(10 * time.Second)):
			t.Fatalf("no settle of %s after its answer", id)
		}
	}

	a, b := ts.create(t, tokenA), ts.create(t, tokenA)
	if out := eval(a, false); !strings.Contains(out, a) {
		t.Fatalf("eval in a: %s", out)
	}
	wantSettle(a)
	// a's settle has not ended: b's eval, on the same connection, is
	// answered all the same, and b is settled too.
	if out := eval(b, false); !strings.Contains(out, b) {
		t.Fatalf("eval in b: %s", out)
	}
	wantSettle(b)
	out := eval(a, true)
	if !strings.Contains(out, "event: done") {
		t.Fatalf("stream of a has no done event: %s", out)
	}
	wantSettle(a)
}

// TestProfileToolsSettleAfterAnswer: the profile tools' calls settle the
// sessions they ran cells in once the answer is out, as eval's do: a code
// context's (run_in_code_context) and, for the tools of a session
// (evaluate_python), the session's own (issue 15).
func TestProfileToolsSettleAfterAnswer(t *testing.T) {
	ts := newServer(t, server.Config{})
	settled := make(chan *sandbox.Session, 10)
	t.Cleanup(server.SetSettleForTest(func(s *sandbox.Session) {
		settled <- s
		s.Settle()
	}))
	wantSettle := func(what, id string) {
		t.Helper()
		want, err := ts.mgr.Session(server.Owner(tokenA), id)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.After(testenv.Stretch(10 * time.Second))
		for {
			select {
			case s := <-settled:
				if s == want {
					return
				}
			case <-deadline:
				t.Fatalf("no settle of %s's session after its answer", what)
			}
		}
	}
	status, body := postJSON(t, ts.URL+"/v1/profiles/create_code_context", tokenA, `{"language": "js"}`)
	var created struct{ ContextID string }
	if err := json.Unmarshal(body, &created); err != nil || status != http.StatusOK || created.ContextID == "" {
		t.Fatalf("create_code_context: %d %s", status, body)
	}
	status, body = postJSON(t, ts.URL+"/v1/profiles/run_in_code_context", tokenA, `{"contextId": "`+created.ContextID+`", "code": "6 * 7"}`)
	if status != http.StatusOK || !strings.Contains(string(body), "42") {
		t.Fatalf("run_in_code_context: %d %s", status, body)
	}
	wantSettle("run_in_code_context", created.ContextID)

	if err := testenv.PythonAvailable(); err != nil {
		if testenv.PythonRequired() {
			t.Fatal(err)
		}
		t.Logf("evaluate_python not tried: %v", err)
		return
	}
	a := ts.create(t, tokenA)
	status, body = postJSON(t, ts.URL+"/v1/sessions/"+a+"/profiles/evaluate_python", tokenA, `{"code": "6 * 7"}`)
	if status != http.StatusOK || !strings.Contains(string(body), "42") {
		t.Fatalf("evaluate_python: %d %s", status, body)
	}
	wantSettle("evaluate_python", a)
}
