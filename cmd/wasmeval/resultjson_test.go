package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
)

// encodingJSON is what eval wrote before appendResult: encoding/json with
// SetEscapeHTML(false), a newline after.
func encodingJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// awkward are strings that encoding/json escapes, or must not.
var awkward = []string{
	"", "x = 1", "a\"b\\c", "\b\f\n\r\t", "\x00\x01\x1f\x7f", "<script>&amp;</script>",
	"\u2028\u2029", "é ß 漢字 🙂", "bad \xff utf-8 \xc3", "\xed\xa0\x80 surrogate", "\u00ff\u0100\uffff",
}

func randString(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return awkward[r.IntN(len(awkward))]
	}
	n := r.IntN(20)
	b := make([]byte, n)
	for i := range b {
		switch r.IntN(4) {
		case 0:
			b[i] = byte(r.IntN(256)) // any byte, invalid UTF-8 too
		default:
			b[i] = byte(0x20 + r.IntN(0x5f))
		}
	}
	return string(b)
}

func randResult(r *rand.Rand) *sandbox.Result {
	maybe := func() bool { return r.IntN(2) == 0 }
	res := &sandbox.Result{}
	if maybe() {
		res.Content = []sandbox.Content{}
		for range r.IntN(3) {
			c := sandbox.Content{Type: randString(r)}
			if maybe() {
				c.Text = randString(r)
			}
			if maybe() {
				c.Data, c.MIMEType = randString(r), randString(r)
			}
			res.Content = append(res.Content, c)
		}
	}
	d := &res.Details
	events := func() []sandbox.StatusEvent {
		if maybe() {
			return nil
		}
		evs := []sandbox.StatusEvent{}
		for range r.IntN(3) {
			evs = append(evs, sandbox.StatusEvent{Cell: r.IntN(5) - 1, Kind: randString(r), Message: randString(r)})
		}
		return evs
	}
	if maybe() {
		d.Cells = []sandbox.CellResult{}
		for i := range r.IntN(3) {
			c := sandbox.CellResult{Index: i, Title: randString(r), Language: randString(r), Code: randString(r),
				Status: sandbox.CellStatus(randString(r)), Output: randString(r), DurationMs: r.Int64N(1e12) - 5,
				StatusEvents: events(), Markdown: randString(r)}
			if maybe() {
				code := r.IntN(300) - 100
				c.ExitCode = &code
			}
			d.Cells = append(d.Cells, c)
		}
	}
	d.Language = randString(r)
	if maybe() {
		d.Languages = []string{}
		for range r.IntN(3) {
			d.Languages = append(d.Languages, randString(r))
		}
	}
	if maybe() {
		d.JSONOutputs = []json.RawMessage{}
		for _, raw := range []string{`{"a": 1,  "b" : [ 1, 2 ]}`, "\n[\t]\n", `"<&>\u2028 é"`, `null`, `-1.5e3`} {
			if maybe() {
				d.JSONOutputs = append(d.JSONOutputs, json.RawMessage(raw))
			}
		}
		if maybe() {
			d.JSONOutputs = append(d.JSONOutputs, nil)
		}
	}
	if maybe() {
		d.Images = []sandbox.Image{}
		for range r.IntN(3) {
			d.Images = append(d.Images, sandbox.Image{Data: randString(r), MIMEType: randString(r)})
		}
	}
	d.StatusEvents = events()
	if maybe() {
		d.Meta.Truncated = []sandbox.Truncation{}
		for range r.IntN(3) {
			d.Meta.Truncated = append(d.Meta.Truncated, sandbox.Truncation{Cell: r.IntN(4), OutputID: randString(r),
				Bytes: r.Int64N(1 << 40), Lines: r.Int64N(1000), OmittedBytes: r.Int64N(1 << 30), OmittedLines: r.Int64N(100), Capped: maybe()})
		}
	}
	if maybe() {
		d.Meta.Dropped = &sandbox.Dropped{}
		if maybe() {
			d.Meta.Dropped.Images = r.IntN(4)
		}
		if maybe() {
			d.Meta.Dropped.JSONOutputs = r.IntN(4)
		}
		if maybe() {
			d.Meta.Dropped.StatusEvents = r.IntN(4)
		}
	}
	d.IsError = maybe()
	return res
}

// TestAppendResultMatchesEncodingJSON: eval's reflection-free encoding of
// a result is byte for byte what encoding/json wrote: the trivial cell's
// answer, an empty result, and thousands of random ones with awkward
// strings, nil and empty slices, omitted fields and raw JSON outputs.
func TestAppendResultMatchesEncodingJSON(t *testing.T) {
	var trivial sandbox.Result
	if err := json.Unmarshal([]byte(trivialResult), &trivial); err != nil {
		t.Fatal(err)
	}
	results := []*sandbox.Result{&trivial, {}}
	r := rand.New(rand.NewPCG(15, 15))
	for range 5000 {
		results = append(results, randResult(r))
	}
	for i, res := range results {
		var out bytes.Buffer
		if err := newResultWriter(&out).write(res); err != nil {
			t.Fatalf("result %d: %v", i, err)
		}
		if want := encodingJSON(t, res); !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("result %d:\n got %s\nwant %s", i, out.Bytes(), want)
		}
	}
}

// TestAppendResultInvalidRawJSON: a JSON output that is not JSON fails
// the write, as it failed encoding/json's, and writes nothing.
func TestAppendResultInvalidRawJSON(t *testing.T) {
	res := &sandbox.Result{Details: sandbox.Details{JSONOutputs: []json.RawMessage{json.RawMessage(`{"a":`)}}}
	var out bytes.Buffer
	if err := newResultWriter(&out).write(res); err == nil {
		t.Fatal("an invalid JSON output was written")
	}
	if out.Len() != 0 {
		t.Fatalf("wrote %q", out.Bytes())
	}
}

// TestAppendResultKnowsEveryField: the fields appendResult encodes are all
// the fields of sandbox.Result's types. A field added there changes this
// list: encode it in resultjson.go (and add it to randResult), then here.
func TestAppendResultKnowsEveryField(t *testing.T) {
	const want = `Result.Content []sandbox.Content "content"
Content.Type string "type"
Content.Text string "text,omitempty"
Content.Data string "data,omitempty"
Content.MIMEType string "mimeType,omitempty"
Result.Details sandbox.Details "details"
Details.Cells []sandbox.CellResult "cells"
CellResult.Index int "index"
CellResult.Title string "title"
CellResult.Language string "language"
CellResult.Code string "code"
CellResult.Status sandbox.CellStatus "status"
CellResult.Output string "output"
CellResult.DurationMs int64 "durationMs"
CellResult.ExitCode *int "exitCode"
CellResult.StatusEvents []sandbox.StatusEvent "statusEvents"
StatusEvent.Cell int "cell"
StatusEvent.Kind string "kind"
StatusEvent.Message string "message"
CellResult.Markdown string "markdown"
Details.Language string "language"
Details.Languages []string "languages"
Details.JSONOutputs []json.RawMessage "jsonOutputs"
Details.Images []sandbox.Image "images"
Image.Data string "data"
Image.MIMEType string "mimeType"
Details.StatusEvents []sandbox.StatusEvent "statusEvents"
Details.Meta sandbox.Meta "meta"
Meta.Truncated []sandbox.Truncation "truncated,omitempty"
Truncation.Cell int "cell"
Truncation.OutputID string "outputId"
Truncation.Bytes int64 "bytes"
Truncation.Lines int64 "lines"
Truncation.OmittedBytes int64 "omittedBytes"
Truncation.OmittedLines int64 "omittedLines"
Truncation.Capped bool "capped,omitempty"
Meta.Dropped *sandbox.Dropped "dropped,omitempty"
Dropped.Images int "images,omitempty"
Dropped.JSONOutputs int "jsonOutputs,omitempty"
Dropped.StatusEvents int "statusEvents,omitempty"
Details.IsError bool "isError"`
	var lines []string
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] || typ.PkgPath() != reflect.TypeFor[sandbox.Result]().PkgPath() {
			return
		}
		seen[typ] = true
		if reflect.PointerTo(typ).Implements(reflect.TypeFor[json.Marshaler]()) {
			lines = append(lines, typ.Name()+" has a MarshalJSON method")
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			lines = append(lines, typ.Name()+"."+f.Name+" "+f.Type.String()+" "+`"`+f.Tag.Get("json")+`"`)
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[sandbox.Result]())
	if got := strings.Join(lines, "\n"); got != want {
		t.Fatalf("sandbox.Result's fields changed; encode them in resultjson.go, then update this list. Fields now:\n%s", got)
	}
}
