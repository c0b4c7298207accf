package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/profiles/profiletest"
	"github.com/wasmeval/wasmeval/server"
)

func postJSON(t *testing.T, url, token, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestEvaluatePythonHTTP runs the evaluate_python conformance table on
// POST /v1/sessions/{id}/profiles/evaluate_python.
func TestEvaluatePythonHTTP(t *testing.T) {
	testenv.RequirePython(t)
	ts := newServer(t, server.Config{})
	status, body := postJSON(t, ts.URL+"/v1/sessions", tokenA, "")
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	var created struct{ ID string }
	json.Unmarshal(body, &created)
	url := ts.URL + "/v1/sessions/" + created.ID + "/profiles/evaluate_python"
	profiletest.RunEvaluatePython(t, profiletest.Face{
		Call: func(ctx context.Context, args []byte) ([]byte, string, error) {
			status, body := postJSON(t, url, tokenA, string(args))
			switch status {
			case http.StatusOK:
				return body, "", nil
			case http.StatusBadRequest:
				var e struct {
					Error struct{ Code, Message string }
				}
				json.Unmarshal(body, &e)
				if e.Error.Code != "invalid_request" {
					return nil, "", fmt.Errorf("400 with code %q", e.Error.Code)
				}
				return nil, e.Error.Message, nil
			}
			return nil, "", fmt.Errorf("status %d: %s", status, body)
		},
		Root: func() string {
			sess, err := ts.mgr.Session(server.Owner(tokenA), created.ID)
			if err != nil {
				t.Fatal(err)
			}
			return sess.Root()
		},
	})
	// Another token's session is not found.
	if status, body := postJSON(t, url, tokenB, `{"code": "1"}`); status != http.StatusNotFound {
		t.Errorf("another token: %d %s, want 404", status, body)
	}
}

// TestEvaluatePythonHTTPToolsOff checks that a server whose Tools leave
// evaluate_python out answers 404 saying which tools it serves.
func TestEvaluatePythonHTTPToolsOff(t *testing.T) {
	tools, err := profiles.ParseTools("eval")
	if err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, server.Config{Tools: tools})
	_, body := postJSON(t, ts.URL+"/v1/sessions", tokenA, "")
	var created struct{ ID string }
	json.Unmarshal(body, &created)
	status, body := postJSON(t, ts.URL+"/v1/sessions/"+created.ID+"/profiles/evaluate_python", tokenA, `{"code": "1"}`)
	if status != http.StatusNotFound || !strings.Contains(string(body), "the evaluate_python profile is off on this server; it serves --tools eval") {
		t.Errorf("got %d %s", status, body)
	}
	status, body = postJSON(t, ts.URL+"/v1/sessions/"+created.ID+"/profiles/asteval", tokenA, `{"code": "1"}`)
	if status != http.StatusNotFound || !strings.Contains(string(body), `no profile tool \"asteval\"; the tools here are evaluate_python`) {
		t.Errorf("an unknown tool: got %d %s", status, body)
	}
	// /mcp serves the same tools.
	cs, err := mcpClient(t, ts.URL, tokenA)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 || list.Tools[0].Name != "eval" {
		t.Errorf("/mcp lists %d tools, want eval alone", len(list.Tools))
	}
}

// TestEvaluatePythonHTTPStream checks the endpoint's SSE stream: the
// code's output as events, then done with the result; an invalid call is
// still a 400.
func TestEvaluatePythonHTTPStream(t *testing.T) {
	testenv.RequirePython(t)
	ts := newServer(t, server.Config{})
	_, body := postJSON(t, ts.URL+"/v1/sessions", tokenA, "")
	var created struct{ ID string }
	json.Unmarshal(body, &created)
	url := ts.URL + "/v1/sessions/" + created.ID + "/profiles/evaluate_python"
	stream := func(args string) (int, string) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(args))
		req.Header.Set("Authorization", "Bearer "+tokenA)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, got := stream(`{"code": "print('hi')\n6 * 7"}`)
	if status != http.StatusOK || !strings.Contains(got, "event: stdout\n") || !strings.Contains(got, `"text":"hi"`) ||
		!strings.Contains(got, "event: done\ndata: {\"value_repr\":\"42\",\"stdout\":\"hi\\n\"") || strings.Contains(got, "vnd.wasmeval") {
		t.Errorf("stream: %d\n%s", status, got)
	}
	if status, got := stream(`{"code": "1", "writes": [{"path": "x", "content": "", "mode": "replace"}]}`); status != http.StatusBadRequest || !strings.Contains(got, "evaluate_python: writes[0].mode") {
		t.Errorf("an invalid streamed call: %d %s", status, got)
	}
	if status, got := stream(`{"code": "1", "reads": [{"path": "missing.txt"}]}`); status != http.StatusOK || !strings.Contains(got, "event: error\n") || !strings.Contains(got, "reads[0].path") {
		t.Errorf("a missing read, streamed: %d %s", status, got)
	}
}
