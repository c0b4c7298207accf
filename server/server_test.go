package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

const (
	tokenA = "token-a-0123456789"
	tokenB = "token-b-9876543210"
)

type testServer struct {
	URL  string
	mgr  *sandbox.Manager
	sb   *sandbox.Sandbox
	logs *syncBuffer
}

type syncBuffer = testenv.LockedBuffer

// newSandbox returns a sandbox and a manager closed with the test.
func newSandbox(t testing.TB, mo sandbox.ManagerOptions) (*sandbox.Sandbox, *sandbox.Manager) {
	t.Helper()
	sb, err := sandbox.New(context.Background(), sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(context.Background()) })
	if mo.Workspace == "" {
		mo.Workspace = t.TempDir()
	}
	mgr, err := sandbox.NewManager(sb, mo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mgr.Close(context.Background()) })
	return sb, mgr
}

func newServer(t testing.TB, cfg server.Config) *testServer {
	t.Helper()
	sb, mgr := newSandbox(t, sandbox.ManagerOptions{})
	logs := &syncBuffer{}
	cfg.Sandbox, cfg.Manager = sb, mgr
	if cfg.Tokens == nil {
		cfg.Tokens = []string{tokenA, tokenB}
	}
	cfg.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	cfg.TempDir = t.TempDir()
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &testServer{URL: hs.URL, mgr: mgr, sb: sb, logs: logs}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

func (r response) errorMessage(t testing.TB) string {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	r.json(t, &e)
	return e.Error.Message
}

func do(t testing.TB, method, url, token string, body any, header ...string) response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, data}
}

func wantStatus(t testing.TB, r response, status int) {
	t.Helper()
	if r.status != status {
		body := r.body
		if len(body) > 500 {
			body = append(body[:500:500], "..."...)
		}
		t.Fatalf("status %d, want %d; body %s", r.status, status, body)
	}
}

func (ts *testServer) create(t testing.TB, token string) string {
	t.Helper()
	r := do(t, "POST", ts.URL+"/v1/sessions", token, nil)
	wantStatus(t, r, http.StatusCreated)
	var v struct{ ID string }
	r.json(t, &v)
	if v.ID == "" {
		t.Fatalf("no id in %s", r.body)
	}
	return v.ID
}

// root is the folder of the session id of token.
func (ts *testServer) root(t testing.TB, token, id string) string {
	t.Helper()
	sess, err := ts.mgr.Session(server.Owner(token), id)
	if err != nil {
		t.Fatal(err)
	}
	return sess.Root()
}

func cells(lang string, code ...string) sandbox.Request {
	var req sandbox.Request
	for _, c := range code {
		req.Cells = append(req.Cells, sandbox.Cell{Language: lang, Code: c})
	}
	return req
}

func (ts *testServer) eval(t testing.TB, token, id string, req sandbox.Request) *sandbox.Result {
	t.Helper()
	r := do(t, "POST", ts.URL+"/v1/sessions/"+id+"/eval", token, req)
	wantStatus(t, r, http.StatusOK)
	var res sandbox.Result
	r.json(t, &res)
	return &res
}

func output(res *sandbox.Result) string {
	var b strings.Builder
	for _, c := range res.Details.Cells {
		b.WriteString(c.Output)
	}
	return b.String()
}

// needPython skips when the CPython artifact is not built, or fails when
// WASMEVAL_REQUIRE_PYTHON is set.
func needPython(t *testing.T, _ *testServer) {
	t.Helper()
	testenv.RequirePython(t)
}

func TestAuth(t *testing.T) {
	ts := newServer(t, server.Config{})
	tests := []struct {
		name, method, path, auth string
		want                     int
	}{
		{"no token", "POST", "/v1/sessions", "", http.StatusUnauthorized},
		{"wrong token", "POST", "/v1/sessions", "Bearer nope", http.StatusUnauthorized},
		{"not bearer", "POST", "/v1/sessions", "Basic " + tokenA, http.StatusUnauthorized},
		{"prefix of a token", "POST", "/v1/sessions", "Bearer " + tokenA[:5], http.StatusUnauthorized},
		{"run without token", "POST", "/v1/run", "", http.StatusUnauthorized},
		{"metrics without token", "GET", "/metrics", "", http.StatusUnauthorized},
		{"good token", "POST", "/v1/sessions", "Bearer " + tokenA, http.StatusCreated},
		{"second token", "POST", "/v1/sessions", "Bearer " + tokenB, http.StatusCreated},
		{"healthz is public", "GET", "/healthz", "", http.StatusOK},
		{"openapi is public", "GET", "/openapi.json", "", http.StatusOK},
		{"unknown path", "GET", "/nope", "", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r response
			if tt.auth == "" {
				r = do(t, tt.method, ts.URL+tt.path, "", nil)
			} else {
				r = do(t, tt.method, ts.URL+tt.path, "", nil, "Authorization", tt.auth)
			}
			wantStatus(t, r, tt.want)
			if tt.want == http.StatusUnauthorized && r.header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}

func TestNewRefusesNoTokens(t *testing.T) {
	sb, mgr := newSandbox(t, sandbox.ManagerOptions{})
	if _, err := server.New(server.Config{Sandbox: sb, Manager: mgr, Tokens: []string{" ", ""}}); err == nil {
		t.Fatal("New without tokens succeeded")
	}
}

// TestIsolation: every per-session endpoint answers 404 to another token
// and succeeds for the owner, on things that exist: a real cut output, a
// real pending call, a session that can be forked.
func TestIsolation(t *testing.T) {
	ts := newServer(t, server.Config{})
	id := ts.create(t, tokenA)
	// Over the 50 KB a cell shows: the full text is kept as a cut output.
	res := ts.eval(t, tokenA, id, cells("js", "var secret = 'a-only'; print('x'.repeat(60000))"))
	if len(res.Details.Meta.Truncated) != 1 {
		t.Fatalf("the output was not cut: %+v", res.Details.Meta)
	}
	outputID := res.Details.Meta.Truncated[0].OutputID
	fresh := ts.create(t, tokenA) // no JavaScript state: it can be forked

	// A pending call of A's, answered through the calls endpoint.
	calling := ts.create(t, tokenA)
	body, _ := json.Marshal(cells("js", "print(JSON.stringify(await tool.lookup({q: 1})))"))
	hr, _ := http.NewRequest("POST", ts.URL+"/v1/sessions/"+calling+"/eval", bytes.NewReader(body))
	hr.Header.Set("Authorization", "Bearer "+tokenA)
	hr.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var call server.CallEvent
	for call.CallID == "" && sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, `"callId"`) {
			json.Unmarshal([]byte(data), &call)
		}
	}
	if call.CallID == "" {
		t.Fatalf("no call event: %v", sc.Err())
	}

	for _, tt := range []struct {
		name, method, path string
		body               any
		ok                 int
	}{
		{"eval", "POST", "/v1/sessions/" + id + "/eval", cells("js", "print(secret)"), http.StatusOK},
		{"output", "GET", "/v1/sessions/" + id + "/outputs/" + outputID, nil, http.StatusOK},
		{"fork", "POST", "/v1/sessions/" + fresh + "/fork", nil, http.StatusCreated},
		{"call", "POST", "/v1/sessions/" + calling + "/calls/" + call.CallID, map[string]any{"result": "found"}, http.StatusNoContent},
		{"delete", "DELETE", "/v1/sessions/" + id, nil, http.StatusNoContent},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, tt.method, ts.URL+tt.path, tokenB, tt.body)
			wantStatus(t, r, http.StatusNotFound)
			r = do(t, tt.method, ts.URL+tt.path, tokenA, tt.body)
			wantStatus(t, r, tt.ok)
			switch tt.name {
			case "eval":
				var res sandbox.Result
				r.json(t, &res)
				if got := output(&res); got != "a-only\n" {
					t.Errorf("A's state after B's attempts: %q", got)
				}
			case "output":
				var v struct{ Output string }
				r.json(t, &v)
				if len(v.Output) != 60001 {
					t.Errorf("A's output is %d bytes, want 60001", len(v.Output))
				}
			}
		})
	}
	// The call was answered by A, not B.
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, "found") {
			return
		}
	}
	t.Error("the guest never got A's answer")
}

func TestPersistenceAndDelete(t *testing.T) {
	ts := newServer(t, server.Config{})
	id := ts.create(t, tokenA)
	ts.eval(t, tokenA, id, cells("js", "var n = 41"))
	res := ts.eval(t, tokenA, id, cells("js", "n += 1; print('n=' + n)"))
	if got := output(res); !strings.Contains(got, "n=42") {
		t.Fatalf("output %q, want n=42", got)
	}
	wantStatus(t, do(t, "DELETE", ts.URL+"/v1/sessions/"+id, tokenA, nil), http.StatusNoContent)
	wantStatus(t, do(t, "POST", ts.URL+"/v1/sessions/"+id+"/eval", tokenA, cells("js", "n")), http.StatusNotFound)
	wantStatus(t, do(t, "DELETE", ts.URL+"/v1/sessions/"+id, tokenA, nil), http.StatusNotFound)
}

func TestPersistencePython(t *testing.T) {
	ts := newServer(t, server.Config{})
	needPython(t, ts)
	id := ts.create(t, tokenA)
	ts.eval(t, tokenA, id, cells("py", "import math\nx = math.factorial(5)"))
	if got := output(ts.eval(t, tokenA, id, cells("py", "print('x =', x)"))); !strings.Contains(got, "x = 120") {
		t.Fatalf("output %q, want x = 120", got)
	}
}

func TestBadRequest(t *testing.T) {
	ts := newServer(t, server.Config{})
	id := ts.create(t, tokenA)
	tests := []struct {
		name, path, body, want string
	}{
		{"not JSON", "/v1/sessions/" + id + "/eval", "print(1)", "not JSON"},
		{"no cells", "/v1/sessions/" + id + "/eval", `{"cells":[]}`, "cells"},
		{"bad language", "/v1/sessions/" + id + "/eval", `{"cells":[{"language":"rb","code":"1"}]}`, "cells[0].language"},
		{"bad timeout", "/v1/sessions/" + id + "/eval", `{"cells":[{"language":"js","code":"1","timeout":9000}]}`, "cells[0].timeout"},
		{"run not an object", "/v1/run", `[1]`, "JSON object"},
		{"run bad language", "/v1/run", `{"language":"rb","code":"1"}`, "language"},
		{"run unknown field", "/v1/run", `{"language":"js","code":"1","cells":[]}`, "cells"},
		// A body that is not valid JSON was wrapped into an eval request
		// that failed to encode, and answered "empty request".
		{"run cut short", "/v1/run", `{"language":"js","code": [`, `not valid JSON: unexpected end of JSON input; send one JSON object like {"language":"py","code":"print(1)"}`},
		{"run nested too deep", "/v1/run", `{"code": ` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, "exceeded max depth"},
		{"run two objects", "/v1/run", `{"language":"js","code":"1"} {}`, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, "POST", ts.URL+tt.path, tokenA, tt.body)
			wantStatus(t, r, http.StatusBadRequest)
			if msg := r.errorMessage(t); !strings.Contains(msg, tt.want) || strings.HasPrefix(msg, "sandbox:") {
				t.Errorf("message %q, want it to contain %q without the package prefix", msg, tt.want)
			}
		})
	}
}

type sseEvent struct {
	name string
	data string
}

func readSSE(t testing.TB, body io.Reader) []sseEvent {
	t.Helper()
	var events []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, ":"):
			// a comment (": keepalive"): not an event
		case line == "" && cur == (sseEvent{}):
			// the blank line closing a comment
		case line == "":
			if cur.name == "" || cur.data == "" {
				t.Fatalf("incomplete event %+v", cur)
			}
			events = append(events, cur)
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if cur.data != "" {
				t.Fatalf("two data lines in one event")
			}
			cur.data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if cur != (sseEvent{}) {
		t.Fatalf("stream ended inside an event: %+v", cur)
	}
	return events
}

func TestSSE(t *testing.T) {
	ts := newServer(t, server.Config{})
	id := ts.create(t, tokenA)
	req, _ := json.Marshal(cells("js", "print('one'); console.error('two'); log('step'); display({'text/plain': 'shown'}); 6*7"))
	hreq, _ := http.NewRequest("POST", ts.URL+"/v1/sessions/"+id+"/eval", bytes.NewReader(req))
	hreq.Header.Set("Authorization", "Bearer "+tokenA)
	hreq.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	events := readSSE(t, resp.Body)
	var names []string
	for _, e := range events {
		names = append(names, e.name)
		if !json.Valid([]byte(e.data)) {
			t.Errorf("event %s: data is not JSON: %s", e.name, e.data)
		}
	}
	got := strings.Join(names, ",")
	for _, want := range []string{"stdout", "stderr", "status", "display", "result"} {
		if !strings.Contains(got, want) {
			t.Errorf("events %s, want a %s event", got, want)
		}
	}
	last := events[len(events)-1]
	if last.name != "done" {
		t.Fatalf("last event %q, want done", last.name)
	}
	var res sandbox.Result
	if err := json.Unmarshal([]byte(last.data), &res); err != nil {
		t.Fatal(err)
	}
	if out := output(&res); !strings.Contains(out, "one") || !strings.Contains(out, "42") {
		t.Errorf("final result output %q, want one and 42", out)
	}
	var first sandbox.Event
	json.Unmarshal([]byte(events[1].data), &first) // after cell_start
	if first.Kind != sandbox.EventStdout || first.Text != "one\n" {
		t.Errorf("first output event %+v, want stdout one", first)
	}
}

func TestSSEInvalidRequestIsPlain400(t *testing.T) {
	ts := newServer(t, server.Config{})
	id := ts.create(t, tokenA)
	r := do(t, "POST", ts.URL+"/v1/sessions/"+id+"/eval", tokenA, `{}`, "Accept", "text/event-stream")
	wantStatus(t, r, http.StatusBadRequest)
}

func TestRun(t *testing.T) {
	ts := newServer(t, server.Config{})
	tests := []struct {
		name      string
		body      string
		wantExit  int
		wantTypes string
		wantErr   string
	}{
		{"outputs", `{"language":"js","code":"print('a'); print('b'); display({'text/html':'<b>x</b>'}); 1+1"}`, 0, "stdout,display,result", ""},
		{"error", `{"language":"js","code":"print('before'); throw new TypeError('boom')"}`, 1, "stdout,stderr", "TypeError"},
		{"timeout", `{"language":"js","code":"while(true){}","timeout":1}`, 1, "", "TimeoutError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, "POST", ts.URL+"/v1/run", tokenA, tt.body)
			wantStatus(t, r, http.StatusOK)
			var res server.RunResult
			r.json(t, &res)
			if res.ExitCode != tt.wantExit {
				t.Errorf("exitCode %d, want %d: %s", res.ExitCode, tt.wantExit, r.body)
			}
			var types []string
			for _, o := range res.Outputs {
				types = append(types, string(o.Type))
			}
			if tt.wantTypes != "" && strings.Join(types, ",") != tt.wantTypes {
				t.Errorf("output types %v, want %s: %s", types, tt.wantTypes, r.body)
			}
			if tt.wantErr == "" && res.Error != nil || tt.wantErr != "" && (res.Error == nil || res.Error.Name != tt.wantErr) {
				t.Errorf("error %+v, want name %q", res.Error, tt.wantErr)
			}
		})
	}
	// Stateless: nothing persists, no session is left behind.
	r := do(t, "POST", ts.URL+"/v1/run", tokenA, `{"language":"js","code":"typeof a1"}`)
	if !strings.Contains(string(r.body), "undefined") {
		t.Errorf("run saw earlier state: %s", r.body)
	}
	if n := ts.mgr.Len(); n != 0 {
		t.Errorf("%d sessions left after runs", n)
	}
}

func TestForkPython(t *testing.T) {
	ts := newServer(t, server.Config{})
	needPython(t, ts)
	id := ts.create(t, tokenA)
	ts.eval(t, tokenA, id, cells("py", "x = 1\nopen('f.txt', 'w').write('hello')"))
	r := do(t, "POST", ts.URL+"/v1/sessions/"+id+"/fork", tokenA, nil)
	wantStatus(t, r, http.StatusCreated)
	var v struct{ ID string }
	r.json(t, &v)
	ts.eval(t, tokenA, id, cells("py", "x = 2"))
	got := output(ts.eval(t, tokenA, v.ID, cells("py", "print(x, open('f.txt').read())")))
	if !strings.Contains(got, "1 hello") {
		t.Errorf("fork sees %q, want 1 hello", got)
	}
	wantStatus(t, do(t, "POST", ts.URL+"/v1/sessions/"+v.ID+"/eval", tokenB, cells("py", "x")), http.StatusNotFound)
}

func TestForkJavaScriptStartsFresh(t *testing.T) {
	ts := newServer(t, server.Config{})
	id := ts.create(t, tokenA)
	ts.eval(t, tokenA, id, cells("js", "var a = 1"))
	if err := os.WriteFile(filepath.Join(ts.root(t, tokenA, id), "kept.txt"), []byte("file"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := do(t, "POST", ts.URL+"/v1/sessions/"+id+"/fork", tokenA, nil)
	wantStatus(t, r, http.StatusCreated)
	var fa server.ForkAnswer
	r.json(t, &fa)
	if !slices.Equal(fa.FreshLanguages, []string{"js"}) || !strings.Contains(fa.Note, "js state cannot be copied, so it starts afresh") {
		t.Errorf("fork answer %+v: want js named as fresh, and a note", fa)
	}
	got := strings.TrimSpace(output(ts.eval(t, tokenA, fa.ID, cells("js", "typeof a + ' ' + (await read('kept.txt'))"))))
	if got != "'undefined file'" {
		t.Errorf("the copy: %q, want a fresh JS state and the files", got)
	}
	if got := strings.TrimSpace(output(ts.eval(t, tokenA, id, cells("js", "a")))); got != "1" {
		t.Errorf("the source after fork: %q", got)
	}
}

func TestBodyCap(t *testing.T) {
	ts := newServer(t, server.Config{MaxBodyBytes: 1024})
	id := ts.create(t, tokenA)
	big := fmt.Sprintf(`{"cells":[{"language":"js","code":"//%s"}]}`, strings.Repeat("x", 2048))
	for _, path := range []string{"/v1/sessions/" + id + "/eval", "/v1/run", "/v1/sessions"} {
		r := do(t, "POST", ts.URL+path, tokenA, big)
		wantStatus(t, r, http.StatusRequestEntityTooLarge)
	}
}

func TestInFlightLimit(t *testing.T) {
	ts := newServer(t, server.Config{MaxInFlight: 1})
	id1, id2 := ts.create(t, tokenA), ts.create(t, tokenA)
	// Hold the only slot with a streamed cell, known to run once its first
	// output arrives.
	body, _ := json.Marshal(cells("js", "print('started'); var end = Date.now() + 1000; while (Date.now() < end) {}"))
	hreq, _ := http.NewRequest("POST", ts.URL+"/v1/sessions/"+id1+"/eval", bytes.NewReader(body))
	hreq.Header.Set("Authorization", "Bearer "+tokenA)
	hreq.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	wantStatus(t, response{status: resp.StatusCode}, http.StatusOK)
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("no stdout event: %v", err)
		}
		if line == "event: stdout\n" {
			break
		}
	}
	r := do(t, "POST", ts.URL+"/v1/sessions/"+id2+"/eval", tokenA, cells("js", "1"))
	wantStatus(t, r, http.StatusTooManyRequests)
	if r.header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	if rest, _ := io.ReadAll(br); !strings.Contains(string(rest), "event: done") {
		t.Errorf("the held eval did not end with a result: %s", rest)
	}
	wantStatus(t, do(t, "POST", ts.URL+"/v1/sessions/"+id2+"/eval", tokenA, cells("js", "1")), http.StatusOK)
}

func TestSessionQuota(t *testing.T) {
	ts := newServer(t, server.Config{MaxSessionsPerToken: 2})
	a1 := ts.create(t, tokenA)
	ts.create(t, tokenA)
	r := do(t, "POST", ts.URL+"/v1/sessions", tokenA, nil)
	wantStatus(t, r, http.StatusTooManyRequests)
	ts.create(t, tokenB) // another token has its own quota
	wantStatus(t, do(t, "DELETE", ts.URL+"/v1/sessions/"+a1, tokenA, nil), http.StatusNoContent)
	ts.create(t, tokenA)
}

func TestMetrics(t *testing.T) {
	ts := newServer(t, server.Config{})
	id := ts.create(t, tokenA)
	ts.eval(t, tokenA, id, cells("js", "1"))
	ts.eval(t, tokenA, id, cells("js", "throw new Error('x')"))
	r := do(t, "GET", ts.URL+"/metrics", tokenA, nil)
	wantStatus(t, r, http.StatusOK)
	for _, want := range []string{
		`wasmeval_evals_total{status="complete"} 1`,
		`wasmeval_evals_total{status="error"} 1`,
		"wasmeval_sessions 1",
		"wasmeval_eval_duration_seconds_count 2",
	} {
		if !strings.Contains(string(r.body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestOpenAPIMatchesDocs(t *testing.T) {
	docs, err := os.ReadFile("../docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(docs, server.OpenAPI) {
		t.Error("docs/openapi.json differs from server/openapi.json; copy one onto the other")
	}
	var doc struct {
		OpenAPI string                     `json:"openapi"`
		Paths   map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(server.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/v1/sessions", "/v1/sessions/{id}/eval", "/v1/sessions/{id}/fork", "/v1/sessions/{id}", "/v1/sessions/{id}/calls/{callId}", "/v1/run", "/healthz", "/metrics"} {
		if _, ok := doc.Paths[p]; !ok {
			t.Errorf("openapi.json lacks %s", p)
		}
	}
	ts := newServer(t, server.Config{})
	r := do(t, "GET", ts.URL+"/openapi.json", "", nil)
	if !bytes.Equal(r.body, server.OpenAPI) {
		t.Error("/openapi.json serves something else")
	}
}

func TestLogsKeepSecrets(t *testing.T) {
	ts := newServer(t, server.Config{})
	id := ts.create(t, tokenA)
	long := "var z = 1; //" + strings.Repeat("y", 500)
	ts.eval(t, tokenA, id, cells("js", long))
	do(t, "POST", ts.URL+"/v1/sessions", tokenB+"x", nil)
	logs := ts.logs.String()
	if strings.Contains(logs, "token-") {
		t.Errorf("logs carry a token:\n%s", logs)
	}
	if strings.Contains(logs, strings.Repeat("y", 201)) {
		t.Error("logs carry code past 200 characters")
	}
	if !strings.Contains(logs, server.Owner(tokenA)) || !strings.Contains(logs, `"code":"var z = 1;`) {
		t.Errorf("logs lack the owner or the code:\n%s", logs)
	}
}

func TestGracefulShutdown(t *testing.T) {
	for _, tt := range []struct {
		name       string
		code       string
		grace      time.Duration
		wantStatus sandbox.CellStatus
	}{
		{"in-flight cell finishes", "var end = Date.now() + 500; while (Date.now() < end) {} print('finished')", 10 * time.Second, sandbox.StatusComplete},
		{"stuck cell is cancelled", "while (true) {}", 300 * time.Millisecond, sandbox.StatusCancelled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sb, mgr := newSandbox(t, sandbox.ManagerOptions{})
			srv, err := server.New(server.Config{Sandbox: sb, Manager: mgr, Tokens: []string{tokenA}})
			if err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			url := "http://" + ln.Addr().String()
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- server.Serve(ctx, ln, srv, mgr, tt.grace) }()
			r := do(t, "POST", url+"/v1/sessions", tokenA, nil)
			wantStatus(t, r, http.StatusCreated)
			var v struct{ ID string }
			r.json(t, &v)
			done := make(chan response, 1)
			go func() { done <- do(t, "POST", url+"/v1/sessions/"+v.ID+"/eval", tokenA, cells("js", tt.code)) }()
			time.Sleep(150 * time.Millisecond) // let the cell start
			cancel()
			r = <-done
			wantStatus(t, r, http.StatusOK)
			var res sandbox.Result
			r.json(t, &res)
			if st := res.Details.Cells[0].Status; st != tt.wantStatus {
				t.Errorf("cell %s, want %s", st, tt.wantStatus)
			}
			select {
			case err := <-served:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(testenv.Stretch(10 * time.Second)):
				t.Fatal("Serve did not return")
			}
			if _, err := http.Get(url + "/healthz"); err == nil {
				t.Error("the server still answers after shutdown")
			}
			if _, err := mgr.Create(context.Background(), "x"); !errors.Is(err, sandbox.ErrClosed) {
				t.Errorf("manager after shutdown: %v, want ErrClosed", err)
			}
		})
	}
}
