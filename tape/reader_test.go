package tape_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/tape"
)

// TestReaderRecord: a reader record (format 8) names the Python or the
// JavaScript instance and nothing else; it reads back as written.
func TestReaderRecord(t *testing.T) {
	ns := int64(3)
	for _, tt := range []struct {
		name string
		rec  tape.Record
		want string // in the error; "" for none
	}{
		{name: "python", rec: tape.Record{Type: tape.TypeReader, Lang: tape.ReaderPython}},
		{name: "javascript", rec: tape.Record{Type: tape.TypeReader, Lang: tape.ReaderJavaScript}},
		{name: "typescript", rec: tape.Record{Type: tape.TypeReader, Lang: "ts"}, want: `lang is "ts"; give "py" or "js"`},
		{name: "none", rec: tape.Record{Type: tape.TypeReader}, want: `lang is ""`},
		{name: "with a clock", rec: tape.Record{Type: tape.TypeReader, Lang: "js", NS: &ns}, want: `a reader record has no field "ns"`},
		{name: "lang on a clock", rec: tape.Record{Type: tape.TypeClock, Clock: tape.ClockWall, NS: &ns, Lang: "js"}, want: `a clock record has no field "lang"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := headedWriter(t, &buf)
			err := w.Write(tt.rec)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error %v; want one saying %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			tp, err := tape.Read(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if len(tp.Events) != 1 || tp.Events[0].Type != tape.TypeReader || tp.Events[0].Lang != tt.rec.Lang {
				t.Fatalf("read back %+v; want %+v", tp.Events, tt.rec)
			}
		})
	}
}
