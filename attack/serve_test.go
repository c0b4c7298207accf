package attack_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

const serveToken = "attack-serve-token"

// serveWith starts serve's HTTP face on a loopback port over the suite's
// sandbox, with a manager of its own.
func serveWith(t *testing.T, cfg server.Config) string {
	t.Helper()
	sb := sharedSandbox(t)
	mgr, err := sandbox.NewManager(sb, sandbox.ManagerOptions{Workspace: t.TempDir(),
		Session: sandbox.SessionOptions{MemoryLimitBytes: memoryCap, DiskQuotaBytes: diskCap, DiskQuotaFiles: diskFiles}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mgr.Close(context.Background()) })
	cfg.Sandbox, cfg.Manager = sb, mgr
	if cfg.Tokens == nil {
		cfg.Tokens = []string{serveToken}
	}
	cfg.TempDir = t.TempDir()
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestServeSlowBodies: a client that declares a request body and sends it
// a byte at a time (slowloris) holds its connection no longer than the
// body timeout on any endpoint: also those that answer without reading
// the body (a missing token, an unknown path, a wrong method), on which
// net/http would otherwise wait for the rest of the body for ever before
// it answers, and /mcp, whose body the MCP SDK reads. Those that need no
// body answer at once.
func TestServeSlowBodies(t *testing.T) {
	const bodyTimeout = 2 * time.Second
	url := serveWith(t, server.Config{BodyTimeout: bodyTimeout})
	addr := strings.TrimPrefix(url, "http://")
	for _, tc := range []struct {
		name, head string
		within     time.Duration // the answer (or the close) must come by then
		status     string        // the answer's status code, when one must come
	}{
		{"no token", "POST /v1/sessions HTTP/1.1\r\nHost: x\r\n", time.Second, "401"},
		{"a bad token", "POST /v1/run HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nope\r\n", time.Second, "401"},
		{"an unknown path", "POST /v1/nothing HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + serveToken + "\r\n", time.Second, "404"},
		{"a wrong method", "PATCH /v1/run HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + serveToken + "\r\n", time.Second, "405"},
		{"an unknown session's eval", "POST /v1/sessions/nope/eval HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + serveToken + "\r\n", bodyTimeout + 3*time.Second, ""},
		{"run", "POST /v1/run HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + serveToken + "\r\n", bodyTimeout + 3*time.Second, "408"},
		{"mcp", "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + serveToken + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", bodyTimeout + 3*time.Second, ""},
	} {
		for _, framing := range []string{"Content-Length: 100000\r\n\r\n", "Transfer-Encoding: chunked\r\n\r\n"} {
			t.Run(tc.name+"/"+strings.Fields(framing)[0], func(t *testing.T) {
				t.Parallel()
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				if _, err := conn.Write([]byte(tc.head + framing)); err != nil {
					t.Fatal(err)
				}
				// Trickle the body until the server answers or hangs up.
				stop := make(chan struct{})
				defer close(stop)
				go func() {
					byteOf := " "
					if strings.HasPrefix(framing, "Transfer") {
						byteOf = "1\r\n \r\n"
					}
					for {
						select {
						case <-stop:
							return
						case <-time.After(200 * time.Millisecond):
							if _, err := conn.Write([]byte(byteOf)); err != nil {
								return
							}
						}
					}
				}()
				start := time.Now()
				conn.SetReadDeadline(start.Add(tc.within))
				line, err := bufio.NewReader(conn).ReadString('\n')
				took := time.Since(start)
				if took >= tc.within {
					t.Fatalf("the server still held the connection after %v without an answer (a slow body must not hold it past the body timeout, %v)", took.Round(time.Millisecond), bodyTimeout)
				}
				if tc.status != "" && (err != nil || !strings.Contains(line, " "+tc.status+" ")) {
					t.Errorf("answer %q (%v) after %v, want status %s", line, err, took.Round(time.Millisecond), tc.status)
				}
			})
		}
	}
	// The server still serves.
	resp, err := http.Get(url + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz after the slow bodies: %v %v", resp, err)
	}
	resp.Body.Close()
}

type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestServeLongCallsOutliveTheBodyTimeout: the body timeout bounds the
// body only: an eval on the JSON API (one-shot and in a session) and an MCP
// tool call whose bodies came at once run well past it, to their end, on
// a context nobody cancelled.
//
// What fails it is a read deadline left armed once the body is in:
// net/http reads the connection in the background while a handler runs
// (to see the client go) and cancels the request's context when that read
// fails, so a deadline that outlives the body cancels the call. (Merely
// not lifting the deadline is not enough to break it: net/http clears the
// deadline itself when a body is read to its end. Re-arming it after the
// body, in readBody or in bodydeadline.go's deadlineBody, fails it.) Each
// call must also last past the timeout, or it proves nothing.
func TestServeLongCallsOutliveTheBodyTimeout(t *testing.T) {
	testenv.RequirePython(t)
	const bodyTimeout = time.Second
	const sleep = "import time; time.sleep(3); print('slept')" // 3 s: three body timeouts
	url := serveWith(t, server.Config{BodyTimeout: bodyTimeout})
	post := func(path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+serveToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		name string
		call func() (ok bool, answer string)
	}{
		{"POST /v1/run", func() (bool, string) {
			code, body := post("/v1/run", `{"language":"py","code":"`+sleep+`"}`)
			return code == 200 && strings.Contains(body, "slept"), fmt.Sprint(code, " ", body)
		}},
		{"a session's eval", func() (bool, string) {
			code, body := post("/v1/sessions", "")
			var v struct{ ID string }
			if err := json.Unmarshal([]byte(body), &v); code != 201 || err != nil {
				return false, fmt.Sprint("creating a session: ", code, " ", body)
			}
			code, body = post("/v1/sessions/"+v.ID+"/eval", `{"cells":[{"language":"py","code":"`+sleep+`"}]}`)
			return code == 200 && strings.Contains(body, "slept"), fmt.Sprint(code, " ", body)
		}},
		{"an MCP eval", func() (bool, string) {
			tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1,
				HTTPClient: &http.Client{Transport: bearerTransport{serveToken, http.DefaultTransport}}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "attack", Version: "1"}, nil).Connect(context.Background(), tr, nil)
			if err != nil {
				return false, "connecting: " + err.Error()
			}
			defer cs.Close()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "eval", Arguments: map[string]any{
				"cells": []any{map[string]any{"language": "py", "code": sleep}}}})
			if err != nil {
				return false, err.Error()
			}
			text := res.Content[0].(*mcp.TextContent).Text
			return !res.IsError && strings.Contains(text, "slept"), text
		}},
	} {
		start := time.Now()
		ok, answer := tc.call()
		took := time.Since(start)
		if !ok {
			t.Errorf("%s of a 3 s cell with a %v body timeout was cut after %v: %s", tc.name, bodyTimeout, took.Round(time.Millisecond), answer)
		} else if took < 3*bodyTimeout {
			t.Errorf("%s of a 3 s cell answered after %v, within three body timeouts (%v): it did not run past the timeout, so it shows nothing", tc.name, took.Round(time.Millisecond), bodyTimeout)
		}
	}
}

// TestServeMCPQueuedEvalHoldsNoSlot: with one in-flight slot, an MCP eval
// queued behind its session's running eval waits for its turn without a
// slot (it would otherwise be refused, the slot being the running
// eval's, or hold one that another session needs), runs once the first
// ends (cancelled by its client), and another session's eval runs after.
func TestServeMCPQueuedEvalHoldsNoSlot(t *testing.T) {
	testenv.RequirePython(t)
	url := serveWith(t, server.Config{MaxInFlight: 1, Tokens: []string{serveToken, serveToken + "-b"}})
	connect := func(token string) *mcp.ClientSession {
		tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearerTransport{token, http.DefaultTransport}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "attack", Version: "1"}, nil).Connect(context.Background(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	evalIn := func(ctx context.Context, cs *mcp.ClientSession, code string) (string, error) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "eval", Arguments: map[string]any{
			"cells": []any{map[string]any{"language": "py", "code": code}}}})
		if err != nil {
			return "", err
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError {
			return "", errors.New(text)
		}
		return text, nil
	}
	evalText := func(cs *mcp.ClientSession, code string) (string, error) {
		return evalIn(context.Background(), cs, code)
	}
	gauge := func(name string) string {
		req, _ := http.NewRequest("GET", url+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+serveToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				return v
			}
		}
		return ""
	}
	gaugeWithin := func(name, want string, what string) {
		t.Helper()
		deadline := time.Now().Add(testenv.Stretch(10 * time.Second))
		for gauge(name) != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s is %s, never %s", what, name, gauge(name), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	a, b := connect(serveToken), connect(serveToken+"-b")
	if _, err := evalText(a, "x = 1"); err != nil { // a's session exists
		t.Fatal(err)
	}
	type result struct {
		text string
		err  error
	}
	first, queued := make(chan result, 1), make(chan result, 1)
	// The first eval runs until the test cancels it (the MCP client sends
	// notifications/cancelled), not for a fixed time: on a loaded machine
	// a fixed one could end before the check below.
	ctx, cancelFirst := context.WithCancel(context.Background())
	defer cancelFirst()
	go func() {
		text, err := evalIn(ctx, a, "import time\nwhile True: time.sleep(0.05)")
		first <- result{text, err}
	}()
	gaugeWithin("wasmeval_evals_in_flight", "1", "the first eval never ran")
	go func() { text, err := evalText(a, "print('queued', x)"); queued <- result{text, err} }()
	// Once the queued eval waits for its session (not before: the check
	// would then pass whatever the server does), one slot is held.
	gaugeWithin("wasmeval_evals_waiting", "1", "the queued eval never waited for its session")
	if n := gauge("wasmeval_evals_in_flight"); n != "1" {
		t.Errorf("%s evals hold slots while one runs and one waits for its session", n)
	}
	cancelFirst()
	select {
	case r := <-first:
		if r.err == nil {
			t.Errorf("the first eval, cancelled, answered %q", r.text)
		}
	case <-time.After(testenv.Stretch(30 * time.Second)):
		t.Fatal("the first eval's call did not end when cancelled")
	}
	// The cancel stops the running cell: the queued eval then runs, in the
	// same session (x is still 1).
	select {
	case r := <-queued:
		if r.err != nil || !strings.Contains(r.text, "queued 1") {
			t.Errorf("the queued eval: %v %q", r.err, r.text)
		}
	case <-time.After(testenv.Stretch(30 * time.Second)):
		t.Fatal("the queued eval did not end once the first was cancelled")
	}
	gaugeWithin("wasmeval_evals_waiting", "0", "after both evals ended")
	if text, err := evalText(b, "print('other session')"); err != nil || !strings.Contains(text, "other session") {
		t.Errorf("another session's eval after both: %v %q", err, text)
	}
}
