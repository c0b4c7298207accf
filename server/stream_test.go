package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

// TestSSECellEvents: a streamed eval brackets each cell with cell_start
// and cell_end, its last-expression value is a result event, and the
// stream ends with done; a streamed run does the same for its one cell.
// Every event's data is an Event as openapi.json describes it, with no
// field the document leaves out.
func TestSSECellEvents(t *testing.T) {
	ts := newServer(t, server.Config{})
	id := ts.create(t, tokenA)
	schema := eventSchema(t)
	req := sandbox.Request{Cells: []sandbox.Cell{
		{Language: "js", Title: "first", Code: "print('a'); log('step'); 6*7"},
		{Language: "js", Code: "throw new Error('boom')"},
		{Language: "js", Code: "print('never')"},
	}}
	tests := []struct {
		name, path string
		body       any
		want       string
	}{
		{"eval", "/v1/sessions/" + id + "/eval", req,
			"cell_start:0:first: stdout:0:: status:0:: result:0:: cell_end:0:first:complete " +
				"cell_start:1:js: stderr:1:: cell_end:1:js:error done"},
		{"run", "/v1/run", map[string]any{"language": "js", "code": "print('a'); log('step'); 6*7"},
			"cell_start:0:js: stdout:0:: status:0:: result:0:: cell_end:0:js:complete done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, "POST", ts.URL+tt.path, tokenA, tt.body, "Accept", "text/event-stream")
			wantStatus(t, r, http.StatusOK)
			events := readSSE(t, strings.NewReader(string(r.body)))
			var got []string
			for _, e := range events {
				if e.name == "done" {
					got = append(got, "done")
					continue
				}
				var ev sandbox.Event
				if err := json.Unmarshal([]byte(e.data), &ev); err != nil {
					t.Fatalf("event %s: %v", e.name, err)
				}
				if string(ev.Kind) != e.name {
					t.Errorf("event %s carries type %s", e.name, ev.Kind)
				}
				checkEventSchema(t, schema, e.data)
				s := e.name + ":" + itoa(ev.Cell) + ":" + ev.Title + ":"
				switch ev.Kind {
				case sandbox.EventCellEnd:
					s += ev.Status
					if ev.DurationMs == nil {
						t.Errorf("cell_end without durationMs: %s", e.data)
					}
				case sandbox.EventCellStart:
					if ev.Language != "js" {
						t.Errorf("cell_start without its language: %s", e.data)
					}
				}
				got = append(got, s)
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Errorf("events\n%s\nwant\n%s", g, tt.want)
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// eventSchema is openapi.json's Event schema.
func eventSchema(t *testing.T) *openapi3.Schema {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(server.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	ref, ok := doc.Components.Schemas["Event"]
	if !ok {
		t.Fatal("openapi.json has no Event schema")
	}
	return ref.Value
}

// checkEventSchema checks one event's data against the Event schema: its
// values, and that it declares every field the data has.
func checkEventSchema(t *testing.T, schema *openapi3.Schema, data string) {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatal(err)
	}
	if err := schema.VisitJSON(v); err != nil {
		t.Errorf("event %s does not match openapi.json's Event: %v", data, err)
	}
	for k := range v {
		if _, ok := schema.Properties[k]; !ok {
			t.Errorf("event %s has a field %q that openapi.json's Event does not declare", data, k)
		}
	}
}

// TestMCPProgressOverHTTP: /mcp (streamable HTTP) sends a call's progress
// and log notifications on the call's own stream, before its answer.
func TestMCPProgressOverHTTP(t *testing.T) {
	ts := newServer(t, server.Config{})
	var mu sync.Mutex
	var progress strings.Builder
	var logs []string
	opts := &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			progress.WriteString(r.Params.Message)
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			defer mu.Unlock()
			d, _ := r.Params.Data.(map[string]any)
			logs = append(logs, fmt.Sprintf("%s %v", r.Params.Level, d["message"]))
		},
	}
	tr := &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{tokenA, http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	params := &mcp.CallToolParams{Name: "eval", Arguments: map[string]any{"cells": []any{
		map[string]any{"language": "js", "code": "print('a'); log('halfway'); print('b')"}}}}
	params.SetProgressToken(7)
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("eval: %v %v", err, res)
	}
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		p, l := progress.String(), strings.Join(logs, "|")
		mu.Unlock()
		if p == "a\nb\n" && l == "info halfway" {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("progress %q and logs %q, want a, b and one info log", p, l)
		}
	}
}
