package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestFrozenResultCopiesAll: a recorded result is encoded after Eval
// returned it (when the tape's frame ends), from frozenResult's copy, so
// the copy must share nothing its caller could change. The known list
// below is every slice, map and pointer reachable in a Result; a field
// added to Result fails the test until frozenResult copies it too.
func TestFrozenResultCopiesAll(t *testing.T) {
	copied := []string{
		"Content", "Details.Cells", "Details.Cells[].ExitCode", "Details.Cells[].StatusEvents",
		"Details.Languages", "Details.JSONOutputs", "Details.JSONOutputs[]", "Details.Images",
		"Details.StatusEvents", "Details.Meta.Truncated", "Details.Meta.Dropped",
	}
	var found []string
	var walk func(typ reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		switch typ.Kind() {
		case reflect.Struct:
			for f := range typ.Fields() {
				if f.IsExported() {
					p := f.Name
					if path != "" {
						p = path + "." + f.Name
					}
					walk(f.Type, p)
				}
			}
		case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface, reflect.Array:
			found = append(found, path)
			if typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array {
				walk(typ.Elem(), path+"[]")
			}
			if typ.Kind() == reflect.Pointer {
				walk(typ.Elem(), path)
			}
		}
	}
	walk(reflect.TypeFor[Result](), "")
	for _, f := range found {
		if !slices.Contains(copied, f) {
			t.Errorf("Result's %s is a slice, map or pointer that frozenResult does not copy: copy it there and list it here", f)
		}
	}

	code := 1
	res := &Result{
		Content: []Content{{Type: "text", Text: "a"}},
		Details: Details{
			Cells:        []CellResult{{Output: "out", ExitCode: &code, StatusEvents: []StatusEvent{{Kind: "k"}}}},
			Languages:    []string{"py"},
			JSONOutputs:  []json.RawMessage{json.RawMessage(`1`)},
			Images:       []Image{{Data: "d"}},
			StatusEvents: []StatusEvent{{Kind: "k"}},
			Meta:         Meta{Truncated: []Truncation{{Cell: 1}}, Dropped: &Dropped{}},
		},
	}
	want, err := MarshalResult(res)
	if err != nil {
		t.Fatal(err)
	}
	cp := frozenResult(res)
	// What a caller might do with its result afterwards.
	res.Content[0].Text = "changed"
	res.Details.Cells[0].Output, *res.Details.Cells[0].ExitCode = "changed", 9
	res.Details.Cells[0].StatusEvents[0].Kind = "changed"
	res.Details.Languages[0] = "changed"
	res.Details.JSONOutputs[0] = json.RawMessage(`2`)
	res.Details.Images[0].Data = "changed"
	res.Details.StatusEvents[0].Kind = "changed"
	res.Details.Meta.Truncated[0].Cell = 9
	*res.Details.Meta.Dropped = Dropped{Images: 9}
	got, err := MarshalResult(cp)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the frozen copy changed with the result:\n got %s\nwant %s", got, want)
	}
	// Empty stays empty ([] in JSON) and nil stays nil (null).
	empty := &Result{Content: []Content{}, Details: Details{Cells: []CellResult{}, Languages: nil}}
	want, _ = MarshalResult(empty)
	if got, _ = MarshalResult(frozenResult(empty)); !bytes.Equal(got, want) {
		t.Errorf("an empty result, frozen:\n got %s\nwant %s", got, want)
	}
}

// TestRecordJSONMatchesMarshal: the hand encoders of a recorded request
// and result (record_json.go) write what json.Marshal does, byte for byte,
// for every field and for strings of any bytes; a field added to one of
// the types they encode fails here until they encode it; and a result
// with JSON display outputs is left to json.Marshal.
func TestRecordJSONMatchesMarshal(t *testing.T) {
	known := map[string]string{
		"Request":     "Cells:cells",
		"Cell":        "Language:language Code:code Title:title,omitempty TimeoutSeconds:timeout,omitempty Reset:reset,omitempty Fuel:fuel,omitempty",
		"Result":      "Content:content Details:details",
		"Content":     "Type:type Text:text,omitempty Data:data,omitempty MIMEType:mimeType,omitempty",
		"Details":     "Cells:cells Language:language Languages:languages JSONOutputs:jsonOutputs Images:images StatusEvents:statusEvents Meta:meta IsError:isError",
		"CellResult":  "Index:index Title:title Language:language Code:code Status:status Output:output DurationMs:durationMs ExitCode:exitCode StatusEvents:statusEvents Markdown:markdown",
		"Image":       "Data:data MIMEType:mimeType",
		"StatusEvent": "Cell:cell Kind:kind Message:message",
		"Meta":        "Truncated:truncated,omitempty Dropped:dropped,omitempty",
		"Truncation":  "Cell:cell OutputID:outputId Bytes:bytes Lines:lines OmittedBytes:omittedBytes OmittedLines:omittedLines Capped:capped,omitempty",
		"Dropped":     "Images:images,omitempty JSONOutputs:jsonOutputs,omitempty StatusEvents:statusEvents,omitempty",
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[Request](), reflect.TypeFor[Cell](), reflect.TypeFor[Result](), reflect.TypeFor[Content](), reflect.TypeFor[Details](),
		reflect.TypeFor[CellResult](), reflect.TypeFor[Image](), reflect.TypeFor[StatusEvent](), reflect.TypeFor[Meta](), reflect.TypeFor[Truncation](), reflect.TypeFor[Dropped]()} {
		var fs []string
		for f := range typ.Fields() {
			fs = append(fs, f.Name+":"+f.Tag.Get("json"))
		}
		if got := strings.Join(fs, " "); got != known[typ.Name()] {
			t.Errorf("%s's fields are %q; record_json.go encodes %q: encode the new ones there and list them here", typ.Name(), got, known[typ.Name()])
		}
	}
	if !fastJSON() {
		t.Fatal("the hand encoders do not match json.Marshal on their samples")
	}
	check := func(what string, fast []byte, ok bool, v, wrapped any) {
		t.Helper()
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if ok && !bytes.Equal(fast, want) {
			t.Errorf("%s:\n fast %s\n want %s", what, fast, want)
		}
		if w, _ := json.Marshal(wrapped); !bytes.Equal(w, want) {
			t.Errorf("%s, as the tape's deferred value:\n got %s\nwant %s", what, w, want)
		}
	}
	req, res := jsonSamples()
	fr := func(q *Request) *frozenRequest { return &frozenRequest{Request: *q} }
	fz := func(r *Result) *frozen { return &frozen{Result: *r} }
	fast, ok := fr(req).AppendJSON(nil)
	check("the sample request", fast, ok, req, fr(req))
	fast, ok = fz(res).AppendJSON(nil)
	check("the sample result", fast, ok, res, fz(res))
	empty := &Result{}
	fast, ok = fz(empty).AppendJSON(nil)
	check("an empty result", fast, ok, empty, fz(empty))
	withJSON := &Result{Details: Details{JSONOutputs: []json.RawMessage{json.RawMessage(`{ "a" : 1 }`)}}}
	if _, ok := fz(withJSON).AppendJSON(nil); ok {
		t.Error("a result with JSON outputs was encoded by hand; json.Marshal compacts them")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		const pieces = "a\"\\<>&\x00\n\x7f\xe2\x80\xa8\xc3\xa9\xff\xf0\x9f\x98\x80"
		buf := make([]byte, rng.IntN(12))
		for j := range buf {
			buf[j] = pieces[rng.IntN(len(pieces))]
		}
		s := string(buf)
		r := &Result{Content: []Content{{Type: s, Text: s}}, Details: Details{Cells: []CellResult{{Output: s, Status: CellStatus(s)}}, Languages: []string{s}, Meta: Meta{Dropped: &Dropped{JSONOutputs: i}}}}
		fast, ok = fz(r).AppendJSON(nil)
		check(fmt.Sprintf("a result of %q", s), fast, ok, r, fz(r))
		q := &Request{Cells: []Cell{{Code: s, Title: s, Fuel: int64(i)}}}
		fast, ok = fr(q).AppendJSON(nil)
		check(fmt.Sprintf("a request of %q", s), fast, ok, q, fr(q))
	}
}

// TestFrozenFreeReuses: a recording session's frozen requests and results
// come back to its list once the tape has their JSON (Recycle), emptied
// (they keep nothing of what they held alive), and the list keeps at most
// maxFrozenFree of each; without a list, Recycle only empties them.
func TestFrozenFreeReuses(t *testing.T) {
	var l frozenFree
	res := &Result{Content: []Content{{Type: "text", Text: "x"}}}
	f := freeze(&l, res)
	if f.free != &l || len(f.Content) != 1 {
		t.Fatalf("freeze: %+v", f)
	}
	f.Recycle()
	if g := l.result(); g != f || g.free != &l || g.Content != nil || g.content[0].Text != "" {
		t.Errorf("the result after Recycle: %p %+v, want %p emptied", g, g, f)
	}
	r := l.request()
	r.Cells = cloneInto(r.cells[:0], []Cell{{Language: "py", Code: "1"}})
	r.Recycle()
	if g := l.request(); g != r || g.Cells != nil || g.cells[0].Code != "" {
		t.Errorf("the request after Recycle: %p %+v, want %p emptied", g, g, r)
	}
	for range maxFrozenFree + 10 {
		(&frozen{free: &l}).Recycle()
		(&frozenRequest{free: &l}).Recycle()
	}
	if len(l.results) != maxFrozenFree || len(l.requests) != maxFrozenFree {
		t.Errorf("kept %d results and %d requests, want at most %d", len(l.results), len(l.requests), maxFrozenFree)
	}
	free := freeze(nil, res)
	free.Recycle()
	if free.Content != nil {
		t.Errorf("a result without a list kept %+v", free.Content)
	}
}
