package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/server"
)

// TestOpenAPIDescribesResponses checks real answers of the session, eval
// and files endpoints against openapi.json with kin-openapi: every status
// and body a client gets must be one the document declares.
func TestOpenAPIDescribesResponses(t *testing.T) {
	ctx := context.Background()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(server.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(ctx); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI document: %v", err)
	}
	ts := newServer(t, server.Config{})
	// The router matches on the server URL the document names; serve it
	// under the test server's.
	doc.Servers = openapi3.Servers{{URL: ts.URL}}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}

	check := func(method, path string, body string, wantStatus int) []byte {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tokenA)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
			if strings.Contains(path, "/files/") {
				req.Header.Set("Content-Type", "application/octet-stream")
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != wantStatus {
			t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, wantStatus, got)
		}
		// OpenAPI path parameters hold one segment: look the route up
		// with the file path's slashes escaped (which serve takes too).
		lookup := req
		if before, file, ok := strings.Cut(path, "/files/"); ok {
			lookup = req.Clone(ctx)
			lookup.URL, _ = url.Parse(ts.URL + before + "/files/" + url.PathEscape(file))
		}
		route, params, err := router.FindRoute(lookup)
		if err != nil {
			if err == routers.ErrPathNotFound || err == routers.ErrMethodNotAllowed {
				t.Fatalf("%s %s: the document has no such operation", method, path)
			}
			t.Fatal(err)
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		out := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
			Body: io.NopCloser(bytes.NewReader(got)),
		}
		if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
			t.Errorf("%s %s answered %d %s, which openapi.json does not describe: %v", method, path, resp.StatusCode, got, err)
		}
		return got
	}

	created := check("POST", "/v1/sessions", "", http.StatusCreated)
	id := string(bytes.TrimSpace(created))
	id = id[strings.Index(id, `"id":"`)+6:]
	id = id[:strings.IndexByte(id, '"')]
	check("POST", "/v1/sessions/"+id+"/eval", `{"cells":[{"language":"js","code":"console.log('hi'); 6 * 7"}]}`, http.StatusOK)
	check("POST", "/v1/sessions/"+id+"/eval", `{"cells":[{"language":"js","code":"throw new Error('no')"}]}`, http.StatusOK)
	check("GET", "/v1/sessions", "", http.StatusOK)
	check("GET", "/v1/sessions/"+id, "", http.StatusOK)
	check("GET", "/v1/sessions/nosuch", "", http.StatusNotFound)
	check("POST", "/v1/sessions/"+id+"/interrupt", "", http.StatusOK)
	check("PUT", "/v1/sessions/"+id+"/files/dir/a.txt", "content", http.StatusCreated)
	check("PUT", "/v1/sessions/"+id+"/files/dir/a.txt", "content 2", http.StatusOK)
	check("GET", "/v1/sessions/"+id+"/files/dir/a.txt", "", http.StatusOK)
	check("GET", "/v1/sessions/"+id+"/files/dir", "", http.StatusOK)
	check("GET", "/v1/sessions/"+id+"/files", "", http.StatusOK)
	check("GET", "/v1/sessions/"+id+"/files/missing", "", http.StatusNotFound)
	check("DELETE", "/v1/sessions/"+id+"/files/dir", "", http.StatusConflict)
	check("DELETE", "/v1/sessions/"+id+"/files/dir/a.txt", "", http.StatusNoContent)
	check("POST", "/v1/sessions/"+id+"/fork", "", http.StatusCreated)
	check("POST", "/v1/run", `{"language":"js","code":"1 + 1"}`, http.StatusOK)
	if testenv.PythonAvailable() == nil || testenv.PythonRequired() {
		ep := "/v1/sessions/" + id + "/profiles/evaluate_python"
		check("POST", ep, `{"code":"print('hi')\nx = {1}\n6 * 7","globals":{"n":"3"},"writes":[{"path":"ep.txt","content":"{n}"}]}`, http.StatusOK)
		check("POST", ep, `{"code":"1 / 0"}`, http.StatusOK)
		check("POST", ep, `{"code":"1","writes":[{"path":"ep.txt","content":"again"}]}`, http.StatusBadRequest)
		check("POST", ep, `{"code":"1","mode":"x"}`, http.StatusBadRequest)
		check("POST", "/v1/sessions/nosuch/profiles/evaluate_python", `{"code":"1"}`, http.StatusNotFound)
	}
	check("DELETE", "/v1/sessions/"+id, "", http.StatusNoContent)
}
