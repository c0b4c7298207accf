package mcpserver_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server/mcpserver"
)

// TestEvalSettlesAfterAnswer: the session of an eval call does its work
// between cells (sandbox.Session.Settle) once the call's answer is
// written, over stdio (Server.Run with a LineTransport) and over HTTP, so
// that its next eval does not wait for it (issue 15); a settle, however
// slow, delays no answer: not its own (over HTTP, read to its end), nor
// the next of its session, nor, over HTTP, that of another MCP session's
// call sent next on the same connection. (The SDK's client would not
// tell: it drops a connection whose answer it has, before its end.)
func TestEvalSettlesAfterAnswer(t *testing.T) {
	for _, face := range []string{"stdio", "http"} {
		t.Run(face, func(t *testing.T) {
			srv, _ := newServer(t)
			settled := make(chan *sandbox.Session, 10)
			slow := make(chan struct{}) // the settles wait for it: slow ones
			t.Cleanup(mcpserver.SetSettleForTest(func(s *sandbox.Session) {
				settled <- s
				<-slow
				s.Settle()
			}))
			defer close(slow) // before the cleanups, which wait for the handlers
			ctx, cancel := context.WithTimeout(context.Background(), testenv.Stretch(time.Minute))
			defer cancel()

			var open func() *mcp.ClientSession
			var post func(sid, body string) (newSID, answer string) // HTTP
			switch face {
			case "stdio":
				open = func() *mcp.ClientSession { return stdioClient(t, ctx, srv) }
			case "http":
				h := srv.HTTPHandler(time.Minute, 1<<20)
				hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					h.ServeHTTP(w, r.WithContext(mcpserver.WithOwner(r.Context(), "owner")))
				}))
				t.Cleanup(hs.Close)
				// One connection for all, each answer read to its end: a
				// request waits for the handler of the one before.
				tr := &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}
				t.Cleanup(tr.CloseIdleConnections)
				client := &http.Client{Transport: tr, Timeout: testenv.Stretch(10 * time.Second)}
				open = func() *mcp.ClientSession {
					return &mcp.ClientSession{} // not used over HTTP: see post
				}
				post = func(sid, body string) (string, string) {
					t.Helper()
					req, _ := http.NewRequest("POST", hs.URL, strings.NewReader(body))
					req.Header.Set("Authorization", "Bearer t")
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					if sid != "" {
						req.Header.Set("Mcp-Session-Id", sid)
						req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
					}
					resp, err := client.Do(req)
					if err != nil {
						t.Fatalf("POST %.60s: %v", body, err)
					}
					defer resp.Body.Close()
					data, err := io.ReadAll(resp.Body) // to its end
					if err != nil || resp.StatusCode >= 300 {
						t.Fatalf("POST %.60s: status %d, %v: %s", body, resp.StatusCode, err, data)
					}
					return resp.Header.Get("Mcp-Session-Id"), string(data)
				}
			}
			sids := map[*mcp.ClientSession]string{}
			eval := func(cs *mcp.ClientSession, code, want string) {
				t.Helper()
				if post != nil {
					sid := sids[cs]
					if sid == "" {
						sid, _ = post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
						post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
						sids[cs] = sid
					}
					_, got := post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"language":"js","code":`+strconv.Quote(code)+`}]}}}`)
					if !strings.Contains(got, `"text":"`+want+`"`) {
						t.Fatalf("eval %q: %s, want the text %q", code, got, want)
					}
					return
				}
				cctx, cancel := context.WithTimeout(ctx, testenv.Stretch(10*time.Second))
				defer cancel()
				res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "eval", Arguments: map[string]any{
					"cells": []any{map[string]any{"language": "js", "code": code}}}})
				if err != nil {
					t.Fatalf("eval %q: %v", code, err)
				}
				if got := text(res); res.IsError || !strings.Contains(got, want) {
					t.Fatalf("eval %q: isError %v, %q, want %q", code, res.IsError, got, want)
				}
			}
			nextSettle := func(what string) *sandbox.Session {
				t.Helper()
				return awaitSettle(t, settled, what)
			}

			a := open()
			eval(a, "var n = 1; n", "1")
			first := nextSettle("the first answer")
			// That settle has not ended: the session's next eval is
			// answered all the same, and settles again.
			eval(a, "n + 1", "2")
			if s := nextSettle("the second answer"); s != first {
				t.Fatalf("the second eval settled session %s, the first %s", s.Root(), first.Root())
			}
			if face == "http" {
				// Another MCP session, on the same HTTP connection.
				b := open()
				eval(b, "6 * 7", "42")
				if s := nextSettle("the other session's answer"); s == first {
					t.Fatal("the other MCP session's eval settled the first one's session")
				}
			}
		})
	}
}

// TestProfileToolsSettleAfterAnswer: the profile tools' calls settle, once
// their answer is written, the sessions they ran cells in, as eval's do: a
// code context's (run_in_code_context) and, for the tools of the
// connection's session (evaluate_python), that session (issue 15).
func TestProfileToolsSettleAfterAnswer(t *testing.T) {
	srv, _ := newServer(t)
	settled := make(chan *sandbox.Session, 10)
	t.Cleanup(mcpserver.SetSettleForTest(func(s *sandbox.Session) {
		settled <- s
		s.Settle()
	}))
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Stretch(time.Minute))
	defer cancel()
	cs := stdioClient(t, ctx, srv)
	callOK := func(name string, args map[string]any, want string) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := text(res); res.IsError || !strings.Contains(got, want) {
			t.Fatalf("%s: isError %v, %q, want %q", name, res.IsError, got, want)
		}
		return text(res)
	}
	// A settle runs on a goroutine of its own, started once the answer is
	// written: it may reach settled after the client has read that answer,
	// and after the next call has been sent. So each check waits for the
	// session it expects, passing over late settles of sessions that
	// earlier calls settled, and fails on any other.
	earlier := map[*sandbox.Session]bool{}
	settleOf := func(what string, want func(*sandbox.Session) bool) *sandbox.Session {
		t.Helper()
		for {
			s := awaitSettle(t, settled, what)
			if want(s) {
				earlier[s] = true
				return s
			}
			if !earlier[s] {
				t.Fatalf("%s settled a session (root %s) that is neither its own nor one an earlier call settled", what, s.Root())
			}
		}
	}

	callOK("eval", map[string]any{"cells": []any{map[string]any{"language": "js", "code": "1"}}}, "1")
	evalSess := settleOf("eval", func(*sandbox.Session) bool { return true })
	isContext := func(s *sandbox.Session) bool {
		return s != evalSess && s.Label(profiles.ContextLanguageLabel) == "js"
	}
	cid := strings.TrimSpace(callOK("create_code_context", map[string]any{"language": "js"}, ""))
	// Its warm-up ran in the new context: that session settles.
	ctxSess := settleOf("create_code_context", isContext)
	callOK("run_in_code_context", map[string]any{"contextId": cid, "code": "6 * 7"}, "42")
	// create_code_context's settle was taken above; a session is noted
	// once per answer (settle.go), so this one is run_in_code_context's.
	if s := settleOf("run_in_code_context", isContext); s != ctxSess {
		t.Fatalf("run_in_code_context settled a context (root %s) other than its own (root %s)", s.Root(), ctxSess.Root())
	}

	if err := testenv.PythonAvailable(); err != nil {
		if testenv.PythonRequired() {
			t.Fatal(err)
		}
		t.Logf("evaluate_python not tried: %v", err)
		return
	}
	callOK("evaluate_python", map[string]any{"code": "6 * 7"}, "42")
	settleOf("evaluate_python", func(s *sandbox.Session) bool { return s == evalSess })
}

// stdioClient is an MCP client connected to srv over stdio (a
// LineTransport, as `wasmeval mcp` serves it, over pipes), closed when
// the test ends.
func stdioClient(t *testing.T, ctx context.Context, srv *mcpserver.Server) *mcp.ClientSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		srv.Run(ctx, &mcpserver.LineTransport{Reader: inR, Writer: outW})
		outW.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); inW.Close() })
	return cs
}

// awaitSettle is the next session settled, or a failure that says none
// came after what.
func awaitSettle(t *testing.T, settled <-chan *sandbox.Session, what string) *sandbox.Session {
	t.Helper()
	select {
	case s := <-settled:
		return s
	case <-time.After(testenv.Stretch(10 * time.Second)):
		t.Fatalf("no settle after %s", what)
	}
	return nil
}
