package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

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
