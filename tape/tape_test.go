package tape_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/wasmeval/wasmeval/tape"
)

func i64(n int64) *int64 { return &n }

func header() tape.Record {
	return tape.Record{Type: tape.TypeHeader, Header: &tape.Header{Format: tape.FormatVersion, Wasmeval: "test", Root: "/r", Env: map[string]string{"A": "b"}}}
}

// headedWriter is a writer to buf that has written header().
func headedWriter(t testing.TB, buf *bytes.Buffer) *tape.Writer {
	t.Helper()
	w, err := tape.NewWriter(buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(header()); err != nil {
		t.Fatal(err)
	}
	return w
}

func TestRoundTrip(t *testing.T) {
	recs := []tape.Record{
		header(),
		{Type: tape.TypeDir, Path: "d", Mode: 0o755},
		{Type: tape.TypeFile, Path: "d/a.txt", Mode: 0o644, Data: []byte("hi\n")},
		{Type: tape.TypeRequest, N: 1, Request: json.RawMessage(`{"cells":[{"language":"py","code":"1"}]}`)},
		{Type: tape.TypeClock, Clock: tape.ClockWall, NS: i64(0)},
		{Type: tape.TypeRand, Data: []byte{0, 1, 2}},
		{Type: tape.TypeCall, Call: json.RawMessage(`{"op":"tool"}`), Answer: json.RawMessage(`{"result":1}`)},
		{Type: tape.TypeStop, Cell: 1, Cause: tape.CauseTimeout, Checks: 3, Fuel: 12345},
		{Type: tape.TypeResult, N: 1, Result: json.RawMessage(`{"content":[]}`)},
	}
	var buf bytes.Buffer
	w, err := tape.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if tp.Header.Env["A"] != "b" || len(tp.Root) != 2 || len(tp.Events) != 6 {
		t.Fatalf("read back %+v", tp)
	}
	got, _ := json.Marshal(append(append([]tape.Record{header()}, tp.Root...), tp.Events...))
	want, _ := json.Marshal(recs)
	if !bytes.Equal(got, want) {
		t.Errorf("round trip:\n got %s\nwant %s", got, want)
	}
}

// The tape up to a Flush (Complete bytes) reads whole while the writer
// goes on, and the finished tape holds every record.
func TestFlushedPrefixReads(t *testing.T) {
	var buf bytes.Buffer
	w, _ := tape.NewWriter(&buf)
	w.Write(header())
	w.Write(tape.Record{Type: tape.TypeRequest, N: 1, Request: json.RawMessage(`{}`)})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	w.Write(tape.Record{Type: tape.TypeRand, Data: bytes.Repeat([]byte{7}, 300<<10)}) // past a zstd block
	n := w.Complete()
	if n == 0 || n > int64(buf.Len()) {
		t.Fatalf("Complete %d of %d bytes", n, buf.Len())
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()[:n]))
	if err != nil || len(tp.Events) != 1 {
		t.Fatalf("the complete part: %v, %+v", err, tp)
	}
	w.Close()
	if tp, err = tape.Read(bytes.NewReader(buf.Bytes())); err != nil || len(tp.Events) != 2 {
		t.Fatalf("the whole tape: %v", err)
	}
}

func compress(t testing.TB, s string) []byte {
	var buf bytes.Buffer
	zw, _ := zstd.NewWriter(&buf)
	zw.Write([]byte(s))
	zw.Close()
	return buf.Bytes()
}

func TestDecodeErrors(t *testing.T) {
	h := `{"t":"header","header":{"format":1,"wasmeval":"x","root":"/r","env":{},"options":{}}}` + "\n"
	for _, tc := range []struct{ name, text, want string }{
		{"empty", "", "empty"},
		{"no header", `{"t":"rand","data":"AA=="}` + "\n", "starts with its header"},
		{"other format", `{"t":"header","header":{"format":10,"root":"/r","env":{},"options":{}}}` + "\n", "tape format 10"},
		{"unknown type", h + `{"t":"nope"}` + "\n", `unknown record type "nope"`},
		{"unknown field", h + `{"t":"rand","data":"AA==","x":1}` + "\n", "unknown field"},
		{"foreign field", h + `{"t":"rand","data":"AA==","path":"a"}` + "\n", `no field "path"`},
		{"escape", h + `{"t":"file","path":"../x","data":"AA=="}` + "\n", "not a clean relative path"},
		{"absolute", h + `{"t":"dir","path":"/etc"}` + "\n", "not a clean relative path"},
		{"bad clock", h + `{"t":"clock","clock":"cpu","ns":1}` + "\n", `clock "cpu"`},
		{"cut", h + `{"t":"rand"`, "truncated"},
		{"second header", h + h, "second header"},
		{"bad cause", h + `{"t":"stop","cell":1,"cause":"boredom","fuel":5}` + "\n", `stop cause "boredom"`},
		{"bad hash", h + `{"t":"file","path":"a","size":3,"sha256":"zz"}` + "\n", "not 64 lowercase hex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tape.Read(bytes.NewReader(compress(t, tc.text)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := tape.Read(strings.NewReader("not zstd at all\n")); err == nil {
		t.Error("plain text read as a tape")
	}
}

func TestRootRoundTrip(t *testing.T) {
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "sub", "deep"), 0o755)
	os.WriteFile(filepath.Join(src, "small.txt"), []byte("small"), 0o644)
	big := bytes.Repeat([]byte("0123456789"), 20)
	os.WriteFile(filepath.Join(src, "sub", "big.bin"), big, 0o600)
	os.Symlink("small.txt", filepath.Join(src, "link"))
	var buf bytes.Buffer
	w, _ := tape.NewWriter(&buf)
	w.Write(header())
	if err := tape.WriteRoot(w, src, 100); err != nil {
		t.Fatal(err)
	}
	w.Close()
	tp, err := tape.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	err = tape.RestoreRoot(dst, tp.Root, "")
	if err == nil || !strings.Contains(err.Error(), "sub/big.bin (200 bytes") || !strings.Contains(err.Error(), "--blobs") {
		t.Fatalf("restore without the big file: %v", err)
	}
	dst = t.TempDir()
	if err := tape.RestoreRoot(dst, tp.Root, src); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"small.txt": "small", "sub/big.bin": string(big), "link": "small"} {
		b, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(b) != want {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dst, "sub", "deep")); err != nil || !fi.IsDir() {
		t.Errorf("sub/deep: %v", err)
	}
}

func TestWriterRefusesBadRecord(t *testing.T) {
	w, _ := tape.NewWriter(io.Discard)
	if err := w.Write(tape.Record{Type: tape.TypeClock, Clock: "wall"}); err == nil {
		t.Error("a clock record without ns was written")
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"t":"header","header":{"format":1,"wasmeval":"x","root":"/r","env":{},"options":{}}}` + "\n" + `{"t":"file","path":"a","data":"AA=="}` + "\n"))
	f.Add([]byte(`{"t":"clock","clock":"wall","ns":1}` + "\n"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		var buf bytes.Buffer
		zw, _ := zstd.NewWriter(&buf)
		zw.Write(text)
		zw.Close()
		for _, in := range [][]byte{buf.Bytes(), text} {
			tp, err := tape.Read(bytes.NewReader(in))
			if err != nil {
				if errors.Is(err, io.EOF) {
					t.Fatalf("io.EOF leaked as an error")
				}
				continue
			}
			// What decodes re-encodes and decodes the same.
			var out bytes.Buffer
			w, _ := tape.NewWriter(&out)
			h := tp.Header
			if err := w.Write(tape.Record{Type: tape.TypeHeader, Header: &h}); err != nil {
				t.Fatal(err)
			}
			for _, r := range append(tp.Root, tp.Events...) {
				if err := w.Write(r); err != nil {
					t.Fatalf("a record that decoded does not encode: %v", err)
				}
			}
			w.Close()
			if _, err := tape.Read(&out); err != nil {
				t.Fatalf("re-read: %v", err)
			}
		}
	})
}

// TestFormats: a tape of format 1 (written before mtimes, forks with their
// source and the other stop causes) still reads; one of a later format
// than this package writes is refused, saying which it reads.
func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		format int
		want   string
	}{{1, ""}, {2, ""}, {tape.FormatVersion, ""}, {tape.FormatVersion + 1, "this wasmeval reads formats 1 to 9"}, {0, "this wasmeval reads formats"}} {
		h := header()
		h.Header.Format = tc.format
		line, _ := json.Marshal(h)
		var buf bytes.Buffer
		zw, _ := zstd.NewWriter(&buf)
		zw.Write(append(line, '\n'))
		zw.Close()
		_, err := tape.Read(bytes.NewReader(buf.Bytes()))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("format %d: %v; want %q", tc.format, err, tc.want)
		}
	}
}

// TestFormat3Fields: a stop before the cell's start, a stop in a host
// call's wait and a call's number (format 3) read back as written; a stop
// before the start that names a point of the cell's work is refused; and
// a format 2 tape with a fork (whose header says format 2) still reads.
func TestFormat3Fields(t *testing.T) {
	recs := []tape.Record{
		header(),
		{Type: tape.TypeRequest, N: 1, Request: json.RawMessage(`{}`)},
		{Type: tape.TypeCall, Call: json.RawMessage(`{"op":"tool"}`), Answer: json.RawMessage(`{"result":2}`), Made: 2},
		{Type: tape.TypeCall, Call: json.RawMessage(`{"op":"tool"}`), Answer: json.RawMessage(`{"result":1}`), Made: 1},
		{Type: tape.TypeStop, Cell: 0, Cause: tape.CauseInterrupt, BeforeStart: true},
		{Type: tape.TypeStop, Cell: 1, Cause: tape.CauseTimeout, Waits: 2, Fuel: 77},
		{Type: tape.TypeResult, N: 1, Result: json.RawMessage(`{}`)},
	}
	var buf bytes.Buffer
	w, _ := tape.NewWriter(&buf)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	err := w.Write(tape.Record{Type: tape.TypeStop, Cause: tape.CauseInterrupt, BeforeStart: true, Fuel: 5})
	if err == nil || !strings.Contains(err.Error(), "before_start has no checks") {
		t.Errorf("a stop before the start with fuel: %v", err)
	}
	if err := w.Write(tape.Record{Type: tape.TypeCall, Call: json.RawMessage(`{}`), Answer: json.RawMessage(`{}`), Made: -1}); err == nil {
		t.Error("a call made -1st was written")
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
	if !bytes.Contains(got, []byte(`"before_start":true`)) || !bytes.Contains(got, []byte(`"waits":2`)) || !bytes.Contains(got, []byte(`"made":2`)) {
		t.Errorf("the new fields are not in %s", got)
	}

	var old bytes.Buffer
	zw, _ := zstd.NewWriter(&old)
	for _, line := range []string{
		`{"t":"header","header":{"format":2,"wasmeval":"x","root":"/r","env":{},"options":{}}}`,
		`{"t":"request","n":1,"request":{}}`,
		`{"t":"result","n":1,"result":{}}`,
		`{"t":"fork","header":{"format":2,"wasmeval":"x","root":"/f","env":{},"options":{}}}`,
	} {
		zw.Write([]byte(line + "\n"))
	}
	zw.Close()
	if tp, err := tape.Read(bytes.NewReader(old.Bytes())); err != nil || len(tp.Events) != 3 {
		t.Errorf("a format 2 tape with a fork: %v", err)
	}
}

// TestFormat4Fields: a call's wait and a nested cell's stop (n) read back
// as written; negative ones are refused; a format 3 reader's tape (no
// wait, no n) still reads.
func TestFormat4Fields(t *testing.T) {
	recs := []tape.Record{
		header(),
		{Type: tape.TypeRequest, N: 1, Request: json.RawMessage(`{}`)},
		{Type: tape.TypeCall, Call: json.RawMessage(`{"op":"tool"}`), Answer: json.RawMessage(`{"result":3}`), Made: 3, Wait: 1},
		{Type: tape.TypeRequest, N: 2, Nested: true, Request: json.RawMessage(`{}`)},
		{Type: tape.TypeStop, N: 2, Cell: 0, Cause: tape.CauseTimeout, Checks: 9, Fuel: 99},
		{Type: tape.TypeResult, N: 2, Nested: true, Result: json.RawMessage(`{}`)},
		{Type: tape.TypeStop, Cell: 0, Cause: tape.CauseTimeout, Checks: 4, Fuel: 44},
		{Type: tape.TypeResult, N: 1, Result: json.RawMessage(`{}`)},
	}
	var buf bytes.Buffer
	w, _ := tape.NewWriter(&buf)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(tape.Record{Type: tape.TypeCall, Call: json.RawMessage(`{}`), Answer: json.RawMessage(`{}`), Wait: -1}); err == nil || !strings.Contains(err.Error(), "wait is -1") {
		t.Errorf("a call taken in wait -1: %v", err)
	}
	if err := w.Write(tape.Record{Type: tape.TypeStop, N: -2, Cause: tape.CauseTimeout}); err == nil {
		t.Error("a stop of request -2 was written")
	}
	if err := w.Write(tape.Record{Type: tape.TypeClock, Clock: tape.ClockWall, NS: new(int64), Wait: 1}); err == nil || !strings.Contains(err.Error(), `no field "wait"`) {
		t.Errorf("a clock record with a wait: %v", err)
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
	if !bytes.Contains(got, []byte(`"wait":1`)) || !bytes.Contains(got, []byte(`{"t":"stop","n":2,`)) {
		t.Errorf("the new fields are not in %s", got)
	}
}

// TestFormat6Wakes: wake records (a timer's, a call's answer's, of a
// nested cell too) read back as written; a timer's without its due time,
// a call's with one, negative fields, a field of another type are
// refused.
func TestFormat6Wakes(t *testing.T) {
	due := int64(50_000_000)
	recs := []tape.Record{
		header(),
		{Type: tape.TypeRequest, N: 1, Request: json.RawMessage(`{}`)},
		{Type: tape.TypeWake, Cell: 1, Timer: 3, NS: &due},
		{Type: tape.TypeWake, Cell: 1, Made: 2},
		{Type: tape.TypeWake, N: 2, Made: 1},
		{Type: tape.TypeWake},
		{Type: tape.TypeResult, N: 1, Result: json.RawMessage(`{}`)},
	}
	var buf bytes.Buffer
	w, _ := tape.NewWriter(&buf)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []struct {
		r    tape.Record
		want string
	}{
		{tape.Record{Type: tape.TypeWake, Timer: 3}, "needs its due time"},
		{tape.Record{Type: tape.TypeWake, Timer: 3, NS: &due, Made: 1}, "and no made"},
		{tape.Record{Type: tape.TypeWake, Made: 1, NS: &due}, "has no ns"},
		{tape.Record{Type: tape.TypeWake, Made: -1}, "0 or more"},
		{tape.Record{Type: tape.TypeWake, Timer: -1}, "0 or more"},
		{tape.Record{Type: tape.TypeWake, Wait: 1}, `no field "wait"`},
		{tape.Record{Type: tape.TypeClock, Clock: tape.ClockMono, NS: &due, Timer: 1}, `no field "timer"`},
	} {
		if err := w.Write(bad.r); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v; want an error saying %q", bad.r, err, bad.want)
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
	if !bytes.Contains(got, []byte(`{"t":"wake","ns":50000000,"timer":3,"cell":1}`)) {
		t.Errorf("a timer's wake is not in %s", got)
	}
}

// TestRootTimes: the root's entries are recorded with their modification
// times and restored with them, folders too.
func TestRootTimes(t *testing.T) {
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "d", "e"), 0o755)
	os.WriteFile(filepath.Join(src, "d", "e", "f.txt"), []byte("x"), 0o644)
	when := map[string]time.Time{
		"d":         time.Date(2020, 1, 2, 3, 4, 5, 6, time.UTC),
		"d/e":       time.Date(2021, 1, 2, 3, 4, 5, 6, time.UTC),
		"d/e/f.txt": time.Date(2022, 1, 2, 3, 4, 5, 6, time.UTC),
	}
	for _, p := range []string{"d/e/f.txt", "d/e", "d"} {
		os.Chtimes(filepath.Join(src, p), when[p], when[p])
	}
	var buf bytes.Buffer
	w, _ := tape.NewWriter(&buf)
	w.Write(header())
	if err := tape.WriteRoot(w, src, 0); err != nil {
		t.Fatal(err)
	}
	w.Close()
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := tape.RestoreRoot(dst, tp.Root, ""); err != nil {
		t.Fatal(err)
	}
	for p, want := range when {
		fi, err := os.Stat(filepath.Join(dst, p))
		if err != nil || !fi.ModTime().Equal(want) {
			t.Errorf("%s: %v %v; want %v", p, err, fi.ModTime(), want)
		}
	}
}

// TestAppend: a tape that goes on from another's flushed frames reads as
// one tape.
func TestAppend(t *testing.T) {
	var first bytes.Buffer
	w, _ := tape.NewWriter(&first)
	w.Write(header())
	w.Write(tape.Record{Type: tape.TypeRequest, N: 1, Request: json.RawMessage(`{}`)})
	w.Flush()
	var second bytes.Buffer
	w2, _ := tape.NewWriter(&second)
	if err := w2.Append(first.Bytes()[:w.Complete()]); err != nil {
		t.Fatal(err)
	}
	h := header().Header
	w2.Write(tape.Record{Type: tape.TypeFork, Header: h})
	if err := w2.Append([]byte("x")); err == nil {
		t.Error("Append after an unflushed Write succeeded")
	}
	w2.Write(tape.Record{Type: tape.TypeRequest, N: 2, Request: json.RawMessage(`{}`)})
	w2.Close()
	tp, err := tape.Read(bytes.NewReader(second.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.Events) != 3 || tp.Events[1].Type != tape.TypeFork || tp.Events[2].N != 2 {
		t.Errorf("events %+v", tp.Events)
	}
}

// TestQuickRecords: the records a session writes most (written without
// reflection) read back as written, and a request whose JSON is not valid
// is refused, not written.
func TestQuickRecords(t *testing.T) {
	recs := []tape.Record{
		header(),
		{Type: tape.TypeRequest, N: 3, Nested: true, Request: json.RawMessage(`{"cells":[{"code":"print(\"</a>\u2028\")"}]}`)},
		{Type: tape.TypeClock, Clock: tape.ClockMono, NS: i64(-5)},
		{Type: tape.TypeRand, Data: []byte{0, 255, 1, 2, 3}},
		{Type: tape.TypeResult, N: 3, Nested: true, Result: json.RawMessage(`{"a":[1,2.5e3,null,"x"]}`)},
		{Type: tape.TypeResult, N: 4, Error: "host \"failed\"\n"},
	}
	var buf bytes.Buffer
	w, _ := tape.NewWriter(&buf)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(tape.Record{Type: tape.TypeRequest, N: 5, Request: json.RawMessage(`{"a":`)}); err == nil {
		t.Error("a request of invalid JSON was written")
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
}

// TestFlushSoon: FlushSoon ends the frame within FlushDelay, but not while
// a request is held open: the complete part of a tape is whole requests.
func TestFlushSoon(t *testing.T) {
	var buf bytes.Buffer
	w, _ := tape.NewWriter(&buf)
	w.Write(header())
	w.Flush()
	start := w.Complete()
	w.Write(tape.Record{Type: tape.TypeRequest, N: 1, Request: json.RawMessage(`{}`)})
	w.Hold()
	w.FlushSoon()
	time.Sleep(tape.FlushDelay + 100*time.Millisecond)
	if w.Complete() != start {
		t.Fatal("a frame ended inside a held request")
	}
	w.Write(tape.Record{Type: tape.TypeResult, N: 1, Result: json.RawMessage(`{}`)})
	w.Release()
	if w.Complete() == start {
		t.Fatal("Release did not end the frame FlushSoon meant to end")
	}
	at := w.Complete()
	w.Write(tape.Record{Type: tape.TypeRequest, N: 2, Request: json.RawMessage(`{}`)})
	w.FlushSoon()
	if w.Complete() != at {
		t.Fatal("FlushSoon ended the frame at once")
	}
	time.Sleep(tape.FlushDelay + 100*time.Millisecond)
	if w.Complete() == at {
		t.Fatal("FlushSoon did not end the frame within FlushDelay")
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()[:w.Complete()]))
	if err != nil || len(tp.Events) != 3 {
		t.Fatalf("%v %+v", err, tp)
	}
}
