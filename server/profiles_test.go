package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"

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
	if status != http.StatusNotFound || !strings.Contains(string(body), `no profile tool \"asteval\"; the tools here are python, evaluate_python, run_code, create_code_context, run_in_code_context, delete_code_context`) {
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
	if status != http.StatusOK || !strings.Contains(got, "event: stdout\n") || !strings.Contains(got, `"text":"hi\n"`) ||
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

// httpTool is a profiletest.Face's Tool over the profile endpoints at
// base (base + "/" + tool): a 400 invalid_request is a refusal.
func httpTool(t *testing.T, base string) func(ctx context.Context, name string, args []byte) ([]byte, string, error) {
	return func(ctx context.Context, name string, args []byte) ([]byte, string, error) {
		status, body := postJSON(t, base+"/"+name, tokenA, string(args))
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
	}
}

// newHTTPSession makes a session of tokenA and returns its id and root.
func newHTTPSession(t *testing.T, ts *testServer) (id, root string) {
	t.Helper()
	status, body := postJSON(t, ts.URL+"/v1/sessions", tokenA, "")
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	var created struct{ ID string }
	json.Unmarshal(body, &created)
	sess, err := ts.mgr.Session(server.Owner(tokenA), created.ID)
	if err != nil {
		t.Fatal(err)
	}
	return created.ID, sess.Root()
}

// TestPythonHTTP runs the python conformance table on POST
// /v1/sessions/{id}/profiles/python, and checks that the eval endpoint
// shares its session.
func TestPythonHTTP(t *testing.T) {
	testenv.RequirePython(t)
	ts := newServer(t, server.Config{})
	id, root := newHTTPSession(t, ts)
	base := ts.URL + "/v1/sessions/" + id + "/profiles"
	profiletest.RunPython(t, profiletest.Face{Tool: httpTool(t, base), Root: func() string { return root }})
	postJSON(t, base+"/python", tokenA, `{"cells": [{"code": "shared = 6 * 7"}]}`)
	status, body := postJSON(t, ts.URL+"/v1/sessions/"+id+"/eval", tokenA, `{"cells": [{"language": "py", "code": "print(shared)"}]}`)
	if status != http.StatusOK || !strings.Contains(string(body), `"output":"42\n"`) {
		t.Errorf("eval after python: %d %s", status, body)
	}
}

// TestCodeInterpreterHTTP runs the code_interpreter conformance table on
// the profile endpoints, with a session and without one (POST
// /v1/profiles/{tool}).
func TestCodeInterpreterHTTP(t *testing.T) {
	testenv.RequirePython(t)
	ts := newServer(t, server.Config{})
	id, _ := newHTTPSession(t, ts)
	t.Run("session", func(t *testing.T) {
		profiletest.RunCodeInterpreter(t, profiletest.Face{Tool: httpTool(t, ts.URL+"/v1/sessions/"+id+"/profiles")})
	})
	t.Run("stateless", func(t *testing.T) {
		profiletest.RunCodeInterpreter(t, profiletest.Face{Tool: httpTool(t, ts.URL+"/v1/profiles")})
	})
	// A context belongs to its token.
	_, body := postJSON(t, ts.URL+"/v1/profiles/create_code_context", tokenA, `{"language": "python"}`)
	var created struct{ ContextID string }
	json.Unmarshal(body, &created)
	status, body := postJSON(t, ts.URL+"/v1/profiles/run_in_code_context", tokenB, `{"contextId": "`+created.ContextID+`", "code": "1"}`)
	if status != http.StatusBadRequest || !strings.Contains(string(body), "no such code context") {
		t.Errorf("another token's run: %d %s", status, body)
	}
}

// TestProfilesHTTPStateless checks POST /v1/profiles/{tool} for the
// session's tools: each call runs in a temporary session of its own.
func TestProfilesHTTPStateless(t *testing.T) {
	testenv.RequirePython(t)
	ts := newServer(t, server.Config{})
	url := ts.URL + "/v1/profiles/"
	status, body := postJSON(t, url+"evaluate_python", tokenA, `{"code": "x = 6\nwrite_text('f.txt', 'kept?')\nx * 7"}`)
	if status != http.StatusOK || !strings.Contains(string(body), `"value_repr":"42"`) {
		t.Errorf("evaluate_python: %d %s", status, body)
	}
	status, body = postJSON(t, url+"evaluate_python", tokenA, `{"code": "read_text('f.txt')"}`)
	if status != http.StatusOK || !strings.Contains(string(body), "FileNotFoundError") {
		t.Errorf("evaluate_python saw an earlier call's file: %d %s", status, body)
	}
	status, body = postJSON(t, url+"python", tokenA, `{"cells": [{"code": "y = 1"}, {"code": "print(y + 1)"}]}`)
	if status != http.StatusOK || !strings.Contains(string(body), `"output":"2\n"`) {
		t.Errorf("python: %d %s", status, body)
	}
	status, body = postJSON(t, url+"python", tokenA, `{"cells": [{"code": "y"}]}`)
	if status != http.StatusOK || !strings.Contains(string(body), "NameError") {
		t.Errorf("python kept state between stateless calls: %d %s", status, body)
	}
	status, body = postJSON(t, url+"python", tokenA, `{"cells": [{"code": "1", "language": "py"}]}`)
	if status != http.StatusBadRequest || !strings.Contains(string(body), "python: cells[0]") {
		t.Errorf("an invalid call: %d %s", status, body)
	}
	status, body = postJSON(t, url+"eval", tokenA, `{}`)
	if status != http.StatusNotFound || !strings.Contains(string(body), "POST /v1/run") {
		t.Errorf("eval: %d %s", status, body)
	}
	if n := ts.mgr.Len(); n != 0 {
		t.Errorf("%d sessions left in the manager; the stateless calls' sessions are temporary", n)
	}
}

// TestOpenAPIDescribesProfiles checks real answers of the profile
// endpoints (python, code_interpreter's tools, with a session and without)
// against openapi.json with kin-openapi.
func TestOpenAPIDescribesProfiles(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	doc, err := openapi3.NewLoader().LoadFromData(server.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(ctx); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI document: %v", err)
	}
	ts := newServer(t, server.Config{})
	doc.Servers = openapi3.Servers{{URL: ts.URL}}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	check := func(path, body string, wantStatus int) []byte {
		t.Helper()
		req, _ := http.NewRequest("POST", ts.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tokenA)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != wantStatus {
			t.Fatalf("POST %s: status %d, want %d: %s", path, resp.StatusCode, wantStatus, got)
		}
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Fatalf("POST %s: the document has no such operation: %v", path, err)
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
			Body: io.NopCloser(bytes.NewReader(got))}
		if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
			t.Errorf("POST %s answered %d %s, which openapi.json does not describe: %v", path, resp.StatusCode, got, err)
		}
		return got
	}
	id, _ := newHTTPSession(t, ts)
	for _, base := range []string{"/v1/sessions/" + id + "/profiles/", "/v1/profiles/"} {
		check(base+"python", `{"cells":[{"code":"print(1)\ndisplay({'a': 1})","title":"t"},{"code":"1/0"},{"code":"2"}],"timeout":5}`, http.StatusOK)
		check(base+"python", `{"cells":[{"code":"input()"}]}`, http.StatusOK)
		check(base+"python", `{"cells":[{"code":"1"}],"cwd":"missing"}`, http.StatusBadRequest)
		check(base+"evaluate_python", `{"code":"6 * 7"}`, http.StatusOK)
		check(base+"run_code", `{"language":"python","code":"print(1)\ndisplay({'a': 1})\n[1, 2]"}`, http.StatusOK)
		check(base+"run_code", `{"language":"javascript","code":"throw new Error('x')"}`, http.StatusOK)
		check(base+"run_code", `{"language":"ruby","code":"1"}`, http.StatusBadRequest)
		var created struct{ ContextID string }
		json.Unmarshal(check(base+"create_code_context", `{"language":"python"}`, http.StatusOK), &created)
		check(base+"run_in_code_context", `{"contextId":"`+created.ContextID+`","code":"x = 1\nx"}`, http.StatusOK)
		check(base+"delete_code_context", `{"contextId":"`+created.ContextID+`"}`, http.StatusOK)
		check(base+"delete_code_context", `{"contextId":"`+created.ContextID+`"}`, http.StatusBadRequest)
	}
	check("/v1/sessions/nosuch/profiles/python", `{"cells":[{"code":"1"}]}`, http.StatusNotFound)
}

// TestProfilesHTTPStream checks the SSE stream of the python and run_code
// endpoints: the code's output as events, then done with the result.
func TestProfilesHTTPStream(t *testing.T) {
	testenv.RequirePython(t)
	ts := newServer(t, server.Config{KernelMode: "per-call"})
	id, _ := newHTTPSession(t, ts)
	stream := func(url, args string) string {
		req, _ := http.NewRequest("POST", url, strings.NewReader(args))
		req.Header.Set("Authorization", "Bearer "+tokenA)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", url, resp.StatusCode, b)
		}
		return string(b)
	}
	got := stream(ts.URL+"/v1/sessions/"+id+"/profiles/python", `{"cells": [{"code": "print('hi')"}, {"code": "6 * 7"}]}`)
	if !strings.Contains(got, "event: stdout\n") || !strings.Contains(got, `"text":"hi\n"`) || !strings.Contains(got, "event: done\ndata: {\"content\":[{\"type\":\"text\",\"text\":\"[1/2]\\nhi\\n\\n[2/2]\\n42\"}]") ||
		!strings.Contains(got, `"kernelMode":"per-call"`) || strings.Contains(got, "vnd.wasmeval") {
		t.Errorf("python stream (serve's kernel mode per-call):\n%s", got)
	}
	got = stream(ts.URL+"/v1/profiles/run_code", `{"language": "python", "code": "print('hi')\n6 * 7"}`)
	if !strings.Contains(got, "event: stdout\n") || !strings.Contains(got, "event: done\ndata: {\"outputs\":[{\"type\":\"stdout\",\"text\":\"hi\\n\"},{\"type\":\"result\",\"value\":42}],\"exitCode\":0}") || strings.Contains(got, "vnd.wasmeval") {
		t.Errorf("run_code stream:\n%s", got)
	}
}
