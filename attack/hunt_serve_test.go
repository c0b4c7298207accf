package attack_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

// Two tenants of one server.
const (
	aliceToken = "attack-hunt-alice"
	bobToken   = "attack-hunt-bob"
)

// huntServer is serve (server.Serve, as the command runs it, on a loopback
// port) over the suite's sandbox with two tenants, and its workspace.
type huntServer struct {
	url, ws string
	t       *testing.T
}

func startHuntServer(t *testing.T) *huntServer {
	t.Helper()
	return startHuntServerWith(t, sandbox.ManagerOptions{})
}

// startHuntServerWith is startHuntServer with the manager's options mo
// (RecordDir, ...); it sets the workspace and the suite's session caps.
func startHuntServerWith(t *testing.T, mo sandbox.ManagerOptions) *huntServer {
	t.Helper()
	sb := sharedSandbox(t)
	ws := t.TempDir()
	mo.Workspace = ws
	mo.Session = sandbox.SessionOptions{MemoryLimitBytes: memoryCap, DiskQuotaBytes: diskCap, DiskQuotaFiles: diskFiles}
	mgr, err := sandbox.NewManager(sb, mo)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Sandbox: sb, Manager: mgr, Tokens: []string{aliceToken, bobToken}, TempDir: t.TempDir(), BodyTimeout: 5 * time.Second})
	if err != nil {
		mgr.Close(context.Background())
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Serve(ctx, ln, srv, mgr, time.Second) }()
	t.Cleanup(func() { cancel(); <-done })
	return &huntServer{url: "http://" + ln.Addr().String(), ws: ws, t: t}
}

// do sends one request as token (none when empty) and returns the status
// and body; the request must get an answer (not a dropped connection).
func (h *huntServer) do(token, method, path, body string, header ...string) (int, string) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.url+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{Timeout: testenv.Stretch(60 * time.Second)}
	resp, err := client.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return resp.StatusCode, string(b)
}

// create makes a session of token's tenant.
func (h *huntServer) create(token string) string {
	h.t.Helper()
	code, body := h.do(token, "POST", "/v1/sessions", "{}")
	var m struct{ ID string }
	if code != http.StatusCreated || json.Unmarshal([]byte(body), &m) != nil || m.ID == "" {
		h.t.Fatalf("create: %d %s", code, body)
	}
	return m.ID
}

// eval runs a JavaScript cell in session id as token and returns the answer.
func (h *huntServer) eval(token, id, code string) (int, string) {
	h.t.Helper()
	b, _ := json.Marshal(map[string]any{"cells": []map[string]any{{"language": "js", "code": code, "timeout": 5}}})
	return h.do(token, "POST", "/v1/sessions/"+id+"/eval", string(b))
}

// alive checks that session id of token still runs a cell and that the
// server still answers its health check.
func (h *huntServer) alive(token, id string) {
	h.t.Helper()
	if code, body := h.eval(token, id, "print(40 + 2)"); code != 200 || !strings.Contains(body, `42`) {
		h.t.Fatalf("the session no longer evaluates: %d %.500s", code, body)
	}
	if code, _ := h.do("", "GET", "/healthz", ""); code != 200 {
		h.t.Fatalf("healthz: %d", code)
	}
}

// noLeak fails when body holds a host secret.
func noLeak(t *testing.T, what, body string) {
	t.Helper()
	for _, bad := range never {
		if strings.Contains(body, bad) {
			t.Errorf("%s: the answer holds the host's %q: %.500s", what, bad, body)
		}
	}
}

// TestHuntServeFiles: the files API of serve, tried with path tricks: '..'
// in encoded forms, NUL bytes, very long names, trailing slashes, writes
// over folders, the root itself, an operator's links that lead out and a
// named pipe in the root, many ranges. Each is refused with a 4xx that
// says why (never a 5xx, never a hang), nothing outside the root is read
// or written, and the session goes on.
func TestHuntServeFiles(t *testing.T) {
	h := startHuntServer(t)
	id := h.create(aliceToken)
	root := filepath.Join(h.ws, id)
	outside := filepath.Join(h.ws, "..", "hunt-outside-"+id)
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte(canaryFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "oplink")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, body := h.do(aliceToken, "PUT", "/v1/sessions/"+id+"/files/dir/inside.txt", insideText); code/100 != 2 {
		t.Fatalf("PUT of a plain file: %d %s", code, body)
	}
	files := "/v1/sessions/" + id + "/files/"
	for _, tc := range []struct {
		name, method, path, body string
		header                   []string
		want                     []int // acceptable statuses
	}{
		{"GET of encoded ..", "GET", files + "%2e%2e/%2e%2e/%2e%2e/etc/passwd", "", nil, []int{400, 403, 404}},
		{"GET of ..%2f", "GET", files + "..%2f..%2f..%2fetc%2fpasswd", "", nil, []int{400, 403, 404}},
		{"GET of dir/../../", "GET", files + "dir/..%2f..%2f" + filepath.Base(outside) + "/secret.txt", "", nil, []int{400, 403, 404}},
		{"GET of an absolute path", "GET", files + "%2fetc%2fpasswd", "", nil, []int{400, 403, 404}},
		{"GET of a backslashed ..", "GET", files + "..%5c..%5cetc%5cpasswd", "", nil, []int{400, 403, 404}},
		{"GET of a NUL byte", "GET", files + "dir/inside.txt%00.png", "", nil, []int{400, 404}},
		{"PUT of a NUL byte", "PUT", files + "a%00b", "x", nil, []int{400}},
		{"PUT of a 300-byte name", "PUT", files + strings.Repeat("n", 300), "x", nil, []int{400}},
		{"PUT of a 5000-byte path", "PUT", files + strings.Repeat("d/", 2500) + "x", "x", nil, []int{400}},
		{"PUT with a trailing slash", "PUT", files + "dir/", "x", nil, []int{400, 409}},
		{"PUT over a folder", "PUT", files + "dir", "x", nil, []int{400, 409}},
		{"PUT past the disk quota", "PUT", files + "big.bin", strings.Repeat("x", diskCap+1), nil, []int{413}},
		{"DELETE of the root", "DELETE", files + ".", "", nil, []int{400, 403, 404, 409}},
		{"DELETE of the root by an empty path", "DELETE", "/v1/sessions/" + id + "/files/", "", nil, []int{400, 403, 404, 405, 409}},
		{"GET through an operator's link", "GET", files + "oplink/secret.txt", "", nil, []int{400, 403, 404}},
		{"PUT through an operator's link", "PUT", files + "oplink/planted.txt", "x", nil, []int{400, 403, 404}},
		{"GET of a named pipe", "GET", files + "fifo", "", nil, []int{400, 403, 404, 409}},
		{"PUT to a named pipe", "PUT", files + "fifo", "x", nil, []int{200, 400, 403, 409}},
		{"GET with ten thousand ranges", "GET", files + "dir/inside.txt", "", []string{"Range", "bytes=" + strings.Repeat("0-1,", 9999) + "0-1"}, []int{200, 206, 416}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, body := h.do(aliceToken, tc.method, tc.path, tc.body, tc.header...)
			if took := time.Since(start); took > testenv.Stretch(10*time.Second) {
				t.Errorf("the answer took %v", took.Round(time.Millisecond))
			}
			okCode := false
			for _, w := range tc.want {
				okCode = okCode || code == w
			}
			if !okCode {
				t.Errorf("status %d, want one of %v: %.500s", code, tc.want, body)
			}
			if code/100 == 4 && !strings.Contains(body, `"message"`) {
				t.Errorf("a refusal that does not say why: %d %.300s", code, body)
			}
			if len(body) > 64<<10 {
				t.Errorf("a %d-byte answer", len(body))
			}
			noLeak(t, tc.name, body)
		})
	}
	if _, err := os.Lstat(filepath.Join(outside, "planted.txt")); err == nil {
		t.Error("a PUT through the operator's link wrote outside the root")
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != canaryFile {
		t.Errorf("the secret outside the root changed: %q %v", b, err)
	}
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("the root is gone: %v", err)
	}
	// A PUT that answered 200 for the pipe replaced it with a file (the
	// write helper writes a new file and renames it into place): it never
	// wrote into the pipe, which would block for a reader.
	if fi, err := os.Lstat(filepath.Join(root, "fifo")); err == nil && fi.Mode()&os.ModeNamedPipe == 0 {
		if b, _ := os.ReadFile(filepath.Join(root, "fifo")); string(b) != "x" {
			t.Errorf("the pipe's place holds %q", b)
		}
	}
	h.alive(aliceToken, id)
}

// TestHuntServeProtocol: malformed requests on serve's JSON API and MCP
// endpoint: deep nesting, duplicate keys, invalid UTF-8, huge numbers, a
// huge header, an unknown language, MCP notifications without an id, the
// cancellation of an id nobody sent, an unknown method. Each gets a clear
// 4xx (or a JSON-RPC error), never a 5xx or a dropped connection, and the
// server and the session go on.
func TestHuntServeProtocol(t *testing.T) {
	h := startHuntServer(t)
	id := h.create(aliceToken)
	eval := "/v1/sessions/" + id + "/eval"
	for _, tc := range []struct {
		name, body string
		want       []int
		says       string // what the answer must hold
	}{
		{"deep nesting", `{"cells":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, []int{400}, "message"},
		{"deep nesting in a cell's field", `{"cells":[{"language":"js","code":` + strings.Repeat(`{"a":`, 50000) + `1` + strings.Repeat("}", 50000) + `}]}`, []int{400}, "message"},
		{"duplicate keys", `{"cells":[{"language":"js","code":"print('first')","code":"print('second')"}]}`, []int{200, 400}, ""},
		{"invalid UTF-8 in the code", "{\"cells\":[{\"language\":\"js\",\"code\":\"print('\xff\xfe')\"}]}", []int{200, 400}, ""},
		{"a timeout of 1e400", `{"cells":[{"language":"js","code":"1","timeout":1e400}]}`, []int{400}, "timeout"},
		{"a timeout of -1", `{"cells":[{"language":"js","code":"1","timeout":-1}]}`, []int{400}, "timeout"},
		{"a timeout of 2^63", `{"cells":[{"language":"js","code":"1","timeout":9223372036854775808}]}`, []int{400}, "timeout"},
		{"an unknown language", `{"cells":[{"language":"bash","code":"id"}]}`, []int{400}, "bash"},
		{"a language given as a number", `{"cells":[{"language":7,"code":"1"}]}`, []int{400}, "language"},
		{"cells given as an object", `{"cells":{"language":"js","code":"1"}}`, []int{400}, "cells"},
		{"a million empty cells", `{"cells":[` + strings.Repeat(`{},`, 999999) + `{}]}`, []int{400, 413}, "message"},
		{"not JSON", `cells=1`, []int{400}, "message"},
		{"a trailing second object", `{"cells":[{"language":"js","code":"1"}]}{"cells":[]}`, []int{400}, "message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := h.do(aliceToken, "POST", eval, tc.body)
			okCode := false
			for _, w := range tc.want {
				okCode = okCode || code == w
			}
			if !okCode || !strings.Contains(body, tc.says) {
				t.Errorf("status %d, want one of %v and an answer that says %q: %.500s", code, tc.want, tc.says, body)
			}
		})
	}
	t.Run("a 1 MiB header", func(t *testing.T) {
		code, _ := h.do(aliceToken, "GET", "/v1/sessions", "", "X-Pad", strings.Repeat("p", 1<<20))
		if code != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("status %d, want 431", code)
		}
	})
	t.Run("a thousand headers", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(h.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var req strings.Builder
		req.WriteString("GET /v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + aliceToken + "\r\n")
		for i := range 1000 {
			fmt.Fprintf(&req, "X-H%d: %s\r\n", i, strings.Repeat("v", 100))
		}
		req.WriteString("\r\n")
		conn.Write([]byte(req.String()))
		conn.SetReadDeadline(time.Now().Add(testenv.Stretch(10 * time.Second)))
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil || !strings.Contains(line, " 431 ") {
			t.Errorf("answer %q (%v), want 431", line, err)
		}
	})
	h.alive(aliceToken, id)
}

// mcpHTTP is a client of serve's /mcp endpoint speaking raw JSON-RPC: it
// reads answers sent as JSON or as a stream of events.
type mcpHTTP struct {
	h       *huntServer
	token   string
	session string
}

func (c *mcpHTTP) post(body string) (int, []map[string]any, string) {
	c.h.t.Helper()
	header := []string{"Accept", "application/json, text/event-stream", "Mcp-Protocol-Version", "2025-06-18"}
	if c.session != "" {
		header = append(header, "Mcp-Session-Id", c.session)
	}
	req, _ := http.NewRequest("POST", c.h.url+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := (&http.Client{Timeout: testenv.Stretch(60 * time.Second)}).Do(req)
	if err != nil {
		c.h.t.Fatalf("POST /mcp: %v", err)
	}
	defer resp.Body.Close()
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" && c.session == "" {
		c.session = s
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	var msgs []map[string]any
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "data:")
		var m map[string]any
		if json.Unmarshal([]byte(strings.TrimSpace(line)), &m) == nil {
			msgs = append(msgs, m)
		}
	}
	return resp.StatusCode, msgs, string(raw)
}

func (c *mcpHTTP) initialize() {
	c.h.t.Helper()
	code, msgs, raw := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attack","version":"1"}}}`)
	if code != 200 || len(msgs) == 0 || msgs[0]["result"] == nil {
		c.h.t.Fatalf("initialize: %d %.500s", code, raw)
	}
	if code, _, raw := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); code/100 != 2 {
		c.h.t.Fatalf("initialized: %d %.300s", code, raw)
	}
}

// TestHuntServeMCP: serve's MCP endpoint, tried as a hostile client would:
// notifications without an id, cancellations of ids nobody sent, unknown
// methods, tool calls with arguments of the wrong shape, and another
// tenant's MCP session id. Each is answered (a JSON-RPC error, or nothing
// for a notification) and the connection's session goes on; bob cannot
// use alice's MCP session.
func TestHuntServeMCP(t *testing.T) {
	h := startHuntServer(t)
	c := &mcpHTTP{h: h, token: aliceToken}
	c.initialize()
	for _, tc := range []struct {
		name, body string
		code       int    // the HTTP status; 0: any 2xx
		rpcCode    int    // the JSON-RPC error code wanted, or a 4xx naming the method; 0: none
		says       string // what the answer must hold
	}{
		{"a notification of an unknown method", `{"jsonrpc":"2.0","method":"notifications/whatever"}`, 0, 0, ""},
		{"a notification with params of the wrong shape", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1,2,3]}`, 0, 0, ""},
		{"the cancellation of an id nobody sent", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":987654,"reason":"x"}}`, 0, 0, ""},
		{"the cancellation of an id of another type", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"a":1}}}`, 0, 0, ""},
		{"an unknown method", `{"jsonrpc":"2.0","id":5,"method":"tools/explode"}`, 0, -32601, ""},
		{"an unknown tool", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"rm","arguments":{}}}`, 0, 0, "rm"},
		{"eval with cells of the wrong type", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"eval","arguments":{"cells":"print(1)"}}}`, 0, 0, "cells"},
		{"eval with a huge timeout", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"language":"js","code":"1","timeout":1e300}]}}}`, 0, 0, "timeout"},
		{"an id that is an object", `{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}`, 0, 0, ""},
		{"a response nobody asked for", `{"jsonrpc":"2.0","id":424242,"result":{}}`, 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, msgs, raw := c.post(tc.body)
			if code >= 500 || (tc.code != 0 && code != tc.code) {
				t.Fatalf("status %d: %.500s", code, raw)
			}
			if tc.rpcCode != 0 {
				// The MCP SDK answers an unknown method of protocol versions
				// before 2026-07-28 with a 400 naming it, not a JSON-RPC error.
				e, _ := firstMsg(msgs)["error"].(map[string]any)
				if (e == nil || e["code"] != float64(tc.rpcCode)) && (code/100 != 4 || !strings.Contains(raw, "tools/explode")) {
					t.Errorf("want JSON-RPC error %d or a 4xx naming the method: %d %.500s", tc.rpcCode, code, raw)
				}
			}
			if tc.says != "" && !strings.Contains(raw, tc.says) {
				t.Errorf("the answer does not name %q: %.500s", tc.says, raw)
			}
		})
	}
	// The session still runs a cell.
	_, msgs, raw := c.post(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"language":"js","code":"print(6 * 7)"}]}}}`)
	if !strings.Contains(raw, "42") || firstMsg(msgs)["result"] == nil {
		t.Fatalf("eval after the attacks: %.500s", raw)
	}
	// bob with alice's MCP session id: refused, and nothing of hers.
	b := &mcpHTTP{h: h, token: bobToken, session: c.session}
	code, _, raw := b.post(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"language":"js","code":"print(6 * 7)"}]}}}`)
	if code/100 == 2 || strings.Contains(raw, "42") {
		t.Errorf("bob used alice's MCP session: %d %.500s", code, raw)
	}
}

func firstMsg(msgs []map[string]any) map[string]any {
	for _, m := range msgs {
		if m["id"] != nil {
			return m
		}
	}
	return map[string]any{}
}

var outputRef = regexp.MustCompile(`"outputId":"([A-Za-z0-9_-]+)"`)

// TestHuntServeTenants: bob, a second tenant of the server, tries every
// door to alice's session by its id: its info, eval, fork, files, tape,
// outputs (a real one), interrupt, host-call answers, delete, the listing;
// and guesses ids. Each answer is the one an unknown id gets (no oracle);
// alice's session is untouched.
func TestHuntServeTenants(t *testing.T) {
	h := startHuntServer(t)
	id := h.create(aliceToken)
	if code, body := h.do(aliceToken, "PUT", "/v1/sessions/"+id+"/files/alice.txt", canaryFile); code/100 != 2 {
		t.Fatalf("PUT: %d %s", code, body)
	}
	// A cut output: its id is in the answer.
	code, body := h.eval(aliceToken, id, "globalThis.mine = 'alice-global'; print('o'.repeat(400000))")
	m := outputRef.FindStringSubmatch(body)
	if code != 200 || m == nil {
		t.Fatalf("a long output gave no output id: %d %.500s", code, body)
	}
	out := m[1]
	if code, _ := h.do(aliceToken, "GET", "/v1/sessions/"+id+"/outputs/"+out, ""); code != 200 {
		t.Fatalf("alice cannot read her own output: %d", code)
	}
	ghost := "s_" + strings.Repeat("0", len(id)-2)
	if len(id) < 3 {
		ghost = "nope"
	}
	for _, tc := range []struct{ name, method, path, body string }{
		{"info", "GET", "/v1/sessions/{id}", ""},
		{"eval", "POST", "/v1/sessions/{id}/eval", `{"cells":[{"language":"js","code":"print(mine)"}]}`},
		{"fork", "POST", "/v1/sessions/{id}/fork", ""},
		{"file", "GET", "/v1/sessions/{id}/files/alice.txt", ""},
		{"listing of files", "GET", "/v1/sessions/{id}/files", ""},
		{"file write", "PUT", "/v1/sessions/{id}/files/bob.txt", "x"},
		{"file delete", "DELETE", "/v1/sessions/{id}/files/alice.txt", ""},
		{"tape", "GET", "/v1/sessions/{id}/tape", ""},
		{"output", "GET", "/v1/sessions/{id}/outputs/" + out, ""},
		{"interrupt", "POST", "/v1/sessions/{id}/interrupt", ""},
		{"a call's answer", "POST", "/v1/sessions/{id}/calls/c1", `{"result":"x"}`},
		{"profile", "POST", "/v1/sessions/{id}/profiles/x", "{}"},
		{"delete", "DELETE", "/v1/sessions/{id}", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := h.do(bobToken, tc.method, strings.ReplaceAll(tc.path, "{id}", id), tc.body)
			gcode, gbody := h.do(bobToken, tc.method, strings.ReplaceAll(tc.path, "{id}", ghost), tc.body)
			if code != 404 {
				t.Errorf("bob's %s of alice's session: %d %.300s, want 404", tc.name, code, body)
			}
			if code != gcode || strings.ReplaceAll(body, id, "ID") != strings.ReplaceAll(gbody, ghost, "ID") {
				t.Errorf("bob tells alice's session from an unknown one: %d %.200s / %d %.200s", code, body, gcode, gbody)
			}
			for _, bad := range []string{canaryFile, "alice-global", "ooooo"} {
				if strings.Contains(body, bad) {
					t.Errorf("bob's %s holds alice's %q", tc.name, bad)
				}
			}
		})
	}
	if code, body := h.do(bobToken, "GET", "/v1/sessions", ""); code != 200 || strings.Contains(body, id) {
		t.Errorf("bob's listing: %d %.300s", code, body)
	}
	// Alice's session is as she left it.
	if code, body := h.eval(aliceToken, id, "print(mine, require('fs').readFileSync('alice.txt', 'utf8'))"); code != 200 || !strings.Contains(body, "alice-global "+canaryFile) {
		t.Fatalf("alice's session after bob: %d %.500s", code, body)
	}
	if _, err := os.Stat(filepath.Join(h.ws, id, "bob.txt")); err == nil {
		t.Error("bob wrote a file into alice's root")
	}
}
