package tape_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/tape"
)

// TestFormat9Beside: a nested result's beside (the waiting cell's wait in
// which the eval's first cell began on an instance of its own) reads back
// as written; on a top-level result, with a wait, negative, or on another
// record type it is refused.
func TestFormat9Beside(t *testing.T) {
	recs := []tape.Record{
		header(),
		{Type: tape.TypeRequest, N: 1, Request: json.RawMessage(`{}`)},
		{Type: tape.TypeRequest, N: 2, Nested: true, Request: json.RawMessage(`{}`)},
		{Type: tape.TypeResult, N: 2, Nested: true, Beside: 2, Result: json.RawMessage(`{}`)},
		{Type: tape.TypeResult, N: 1, Result: json.RawMessage(`{}`)},
	}
	var buf bytes.Buffer
	w, _ := tape.NewWriter(&buf)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name string
		r    tape.Record
		want string
	}{
		{"top-level", tape.Record{Type: tape.TypeResult, N: 1, Beside: 1, Result: json.RawMessage(`{}`)}, "beside is 1"},
		{"with a wait", tape.Record{Type: tape.TypeResult, N: 2, Nested: true, Wait: 1, Beside: 1, Result: json.RawMessage(`{}`)}, "without wait"},
		{"negative", tape.Record{Type: tape.TypeResult, N: 2, Nested: true, Beside: -1, Result: json.RawMessage(`{}`)}, "beside is -1"},
		{"a call's", tape.Record{Type: tape.TypeCall, Call: json.RawMessage(`{}`), Answer: json.RawMessage(`{}`), Beside: 1}, `no field "beside"`},
		{"deferred", tape.Deferred(tape.Record{Type: tape.TypeResult, N: 2, Nested: true, Beside: 1}, 1), `field "beside"`},
	} {
		if err := w.Write(tt.r); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want an error saying %q", tt.name, err, tt.want)
		}
	}
	w.Close()
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(append([]tape.Record{header()}, tp.Events...))
	want, _ := json.Marshal(recs)
	if !bytes.Equal(got, want) {
		t.Errorf("read back:\n got %s\nwant %s", got, want)
	}
	if !bytes.Contains(got, []byte(`"beside":2`)) {
		t.Errorf("beside is not in %s", got)
	}
}
