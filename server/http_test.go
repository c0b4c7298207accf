package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/server"
)

// TestBearerSchemeIsCaseInsensitive: RFC 9110 makes the scheme name
// case-insensitive; clients that send "bearer" must get in.
func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	ts := newServer(t, server.Config{})
	for _, h := range []string{"Bearer " + tokenA, "bearer " + tokenA, "BEARER " + tokenA, "Bearer  " + tokenA} {
		r := do(t, "POST", ts.URL+"/v1/sessions", "", nil, "Authorization", h)
		wantStatus(t, r, http.StatusCreated)
	}
	for _, h := range []string{"Basic " + tokenA, "Bearer", "Bearer ", tokenA, "Bearerx " + tokenA} {
		r := do(t, "POST", ts.URL+"/v1/sessions", "", nil, "Authorization", h)
		if r.status != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", h, r.status)
		}
	}
}

// TestWrongMethodIs405: an endpoint asked with a method it does not take
// answers 405 with Allow, not 404 (the catch-all route must not hide it).
func TestWrongMethodIs405(t *testing.T) {
	ts := newServer(t, server.Config{})
	id := ts.create(t, tokenA)
	for _, tc := range []struct{ method, path, allow string }{
		{"GET", "/v1/sessions/" + id + "/eval", "POST"},
		{"PUT", "/v1/run", "POST"},
		{"POST", "/healthz", "GET, HEAD"},
		{"PATCH", "/v1/sessions/" + id, "DELETE"},
	} {
		r := do(t, tc.method, ts.URL+tc.path, tokenA, nil)
		if r.status != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: status %d, want 405; body %s", tc.method, tc.path, r.status, r.body)
			continue
		}
		if got := r.header.Get("Allow"); !strings.Contains(got, tc.allow) {
			t.Errorf("%s %s: Allow %q, want it to hold %q", tc.method, tc.path, got, tc.allow)
		}
		if msg := r.errorMessage(t); !strings.Contains(msg, "this endpoint takes") {
			t.Errorf("%s %s: message %q", tc.method, tc.path, msg)
		}
	}
	wantStatus(t, do(t, "GET", ts.URL+"/v1/nothing-here", tokenA, nil), http.StatusNotFound)
}

// TestSSEEncodingAndKeepalive: the stream's JSON is the plain API's (no
// HTML escaping), its last event is named done, and a silent stream gets
// keepalive comments.
func TestSSEEncodingAndKeepalive(t *testing.T) {
	defer server.SetSSEKeepalive(50 * time.Millisecond)()
	ts := newServer(t, server.Config{})
	id := ts.create(t, tokenA)
	body, _ := json.Marshal(cells("js", "console.log('<b>&</b>'); var end = Date.now() + 400; while (Date.now() < end) {}; '<i>'"))
	req, _ := http.NewRequest("POST", ts.URL+"/v1/sessions/"+id+"/eval", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tokenA)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	if !strings.Contains(text, "\n: keepalive\n\n") && !strings.HasPrefix(text, ": keepalive\n\n") {
		t.Errorf("a stream silent for 400 ms with a 50 ms keepalive has no keepalive comment:\n%s", text)
	}
	if strings.Contains(text, `\u003c`) || strings.Contains(text, `\u0026`) {
		t.Errorf("the stream HTML-escapes its JSON:\n%s", text)
	}
	if !strings.Contains(text, "<b>&</b>") {
		t.Errorf("the stream lacks the output as printed:\n%s", text)
	}
	events := readSSE(t, strings.NewReader(text))
	if last := events[len(events)-1]; last.name != "done" {
		t.Errorf("last event %q, want done", last.name)
	}
	// The plain answer and the done event carry the same JSON.
	plain := do(t, "POST", ts.URL+"/v1/sessions/"+id+"/eval", tokenA, cells("js", "'<i>&'"))
	wantStatus(t, plain, http.StatusOK)
	if !bytes.Contains(plain.body, []byte("<i>&")) {
		t.Errorf("the plain answer escapes HTML: %s", plain.body)
	}
}
