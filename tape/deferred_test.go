package tape_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/wasmeval/wasmeval/tape"
)

// TestDeferredInOrder writes deferred requests and results among clock
// records, from several goroutines at once (past the count that starts a
// drain on a goroutine of its own, and past the one at which Write waits
// for it), with a Flush in the middle: each goroutine's records come back
// in the order it wrote them, with the JSON its encode gave. A deferred
// record is not encoded by the Write that takes it.
func TestDeferredInOrder(t *testing.T) {
	var buf bytes.Buffer
	w := headedWriter(t, &buf)
	var encoded atomic.Int64
	first := tape.Deferred(tape.Record{Type: tape.TypeRequest, N: 1}, countingValue{&encoded})
	if err := w.Write(first); err != nil {
		t.Fatal(err)
	}
	if n := encoded.Load(); n != 0 {
		t.Errorf("the deferred record was encoded %d times by its Write; want 0", n)
	}
	const writers, each = 4, 3000
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				ns := int64(g*each + i)
				var r tape.Record
				switch i % 3 {
				case 0:
					r = tape.Record{Type: tape.TypeClock, Clock: tape.ClockMono, NS: &ns}
				case 1:
					r = tape.Deferred(tape.Record{Type: tape.TypeRequest, N: int(ns) + 2}, json.RawMessage(fmt.Appendf(nil, `{"g": %d, "i": %d}`, g, i)))
				default:
					r = tape.Deferred(tape.Record{Type: tape.TypeResult, N: int(ns) + 2}, map[string]int{"g": g, "i": i})
				}
				if err := w.Write(r); err != nil {
					t.Error(err)
					return
				}
				if g == 0 && i == each/2 {
					if err := w.Flush(); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.Events) != 1+writers*each {
		t.Fatalf("%d events; want %d", len(tp.Events), 1+writers*each)
	}
	if string(tp.Events[0].Request) != `{"first":true}` {
		t.Errorf("the first record: %s", tp.Events[0].Request)
	}
	next := make([]int, writers) // each goroutine's next record
	for _, r := range tp.Events[1:] {
		var g, i int
		switch r.Type {
		case tape.TypeClock:
			g, i = int(*r.NS)/each, int(*r.NS)%each
		case tape.TypeRequest, tape.TypeResult:
			var v struct{ G, I int }
			raw := r.Request
			if r.Type == tape.TypeResult {
				raw = r.Result
			}
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatalf("%s record %d: %s", r.Type, r.N, raw)
			}
			g, i = v.G, v.I
			if r.N != g*each+i+2 {
				t.Fatalf("%s record %d holds the JSON of record %d", r.Type, r.N, g*each+i+2)
			}
		}
		if i != next[g] {
			t.Fatalf("goroutine %d's record %d came where its record %d should: out of order", g, i, next[g])
		}
		next[g]++
	}
}

// TestDeferredResultError: a deferred result whose encoding fails is
// written with the error; a deferred request whose encoding fails fails
// the Writer; only request and result records can be deferred.
func TestDeferredResultError(t *testing.T) {
	var buf bytes.Buffer
	w, _ := tape.NewWriter(&buf)
	w.Write(header())
	var bad badValue
	if err := w.Write(tape.Deferred(tape.Record{Type: tape.TypeResult, N: 1}, bad)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.Events) != 1 || !strings.Contains(tp.Events[0].Error, "the result could not be encoded: json: error calling MarshalJSON for type tape_test.badValue: no JSON for it") {
		t.Errorf("events %+v", tp.Events)
	}

	w, _ = tape.NewWriter(&buf)
	w.Write(header())
	w.Write(tape.Deferred(tape.Record{Type: tape.TypeRequest, N: 1}, bad))
	if err := w.Flush(); err == nil || !strings.Contains(err.Error(), "encoding a request record: json: error calling MarshalJSON for type tape_test.badValue: no JSON for it") {
		t.Errorf("flushing a request that cannot be encoded: %v", err)
	}

	w, _ = tape.NewWriter(&buf)
	ns := int64(1)
	for _, r := range []tape.Record{
		tape.Deferred(tape.Record{Type: tape.TypeClock, Clock: tape.ClockWall, NS: &ns}, bad),
		tape.Deferred(tape.Record{Type: tape.TypeResult, N: 1, Result: json.RawMessage(`{}`)}, bad),
	} {
		if err := w.Write(r); err == nil || !strings.Contains(err.Error(), "only a request or result record without its JSON can be deferred") {
			t.Errorf("deferred %s: %v", r.Type, err)
		}
	}
}

// countingValue counts its encodings.
type countingValue struct{ n *atomic.Int64 }

func (c countingValue) MarshalJSON() ([]byte, error) {
	c.n.Add(1)
	return []byte(`{"first":true}`), nil
}

// badValue cannot be encoded.
type badValue struct{}

func (badValue) MarshalJSON() ([]byte, error) { return nil, errors.New("no JSON for it") }

// appender is a deferred value with its own JSON (tape.JSONAppender), or
// none (ok false): json.Marshal's of Plain is written then.
type appender struct {
	Plain int `json:"plain"`
	ok    bool
}

func (a appender) AppendJSON(b []byte) ([]byte, bool) {
	if !a.ok {
		return b, false
	}
	return fmt.Appendf(b, `{"own":%d}`, a.Plain), true
}

// TestDeferredJSONAppender: a deferred value that appends its own JSON is
// written with it, and with json.Marshal's when it declines.
func TestDeferredJSONAppender(t *testing.T) {
	var buf bytes.Buffer
	w, _ := tape.NewWriter(&buf)
	w.Write(tape.Record{Type: tape.TypeHeader, Header: &tape.Header{Format: tape.FormatVersion, Wasmeval: "test", Root: "/r", Env: map[string]string{}}})
	w.Write(tape.Deferred(tape.Record{Type: tape.TypeRequest, N: 1}, appender{Plain: 1, ok: true}))
	w.Write(tape.Deferred(tape.Record{Type: tape.TypeResult, N: 1}, appender{Plain: 2}))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(tp.Events[0].Request) + " " + string(tp.Events[1].Result); got != `{"own":1} {"plain":2}` {
		t.Errorf("written %s; want the value's own JSON, then json.Marshal's", got)
	}
}

// TestDeferredFields: a deferred record with any field but n and nested
// set is refused (checkDeferred's quick path lists every field).
func TestDeferredFields(t *testing.T) {
	typ := reflect.TypeFor[tape.Record]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() || f.Name == "Type" || f.Name == "N" || f.Name == "Nested" {
			continue
		}
		r := tape.Record{Type: tape.TypeResult, N: 1}
		v := reflect.ValueOf(&r).Elem().Field(i)
		switch v.Kind() {
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
		case reflect.Slice:
			v.Set(reflect.ValueOf([]byte("1")).Convert(v.Type()))
		case reflect.String:
			v.SetString("x")
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int, reflect.Int64, reflect.Uint32:
			if v.CanInt() {
				v.SetInt(1)
			} else {
				v.SetUint(1)
			}
		default:
			t.Fatalf("field %s of kind %s: teach this test to set it", f.Name, v.Kind())
		}
		var buf bytes.Buffer
		w, _ := tape.NewWriter(&buf)
		if err := w.Write(tape.Deferred(r, 1)); err == nil {
			t.Errorf("a deferred record with %s set was written", f.Name)
		}
	}
}

// TestDeferredAppenderLine: the line of a deferred request or result
// whose value appends its own JSON (written straight into the drain's
// output) is byte for byte the line of the same JSON given as is, nested
// or not, and a value that declines (json.Marshal's) after one that did
// not leaves nothing of its attempt behind.
func TestDeferredAppenderLine(t *testing.T) {
	lines := func(own bool) []byte {
		var buf bytes.Buffer
		w, _ := tape.NewWriter(&buf)
		w.Write(header())
		n := 0
		for _, typ := range []string{tape.TypeRequest, tape.TypeResult} {
			for _, nested := range []bool{false, true} {
				n++
				var v any = json.RawMessage(fmt.Sprintf(`{"own":%d}`, n))
				if own {
					v = appender{Plain: n, ok: true}
				}
				w.Write(tape.Deferred(tape.Record{Type: typ, N: n, Nested: nested}, v))
				v = json.RawMessage(fmt.Sprintf(`{"plain":%d}`, n))
				if own {
					v = appender{Plain: n}
				}
				w.Write(tape.Deferred(tape.Record{Type: typ, N: n + 100, Nested: nested}, v))
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		zr, err := zstd.NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	own, given := lines(true), lines(false)
	if !bytes.Equal(own, given) {
		t.Errorf("with the value's own JSON:\n%s\nwith the same JSON given:\n%s", own, given)
	}
	if !bytes.Contains(own, []byte(`{"t":"result","n":4,"nested":true,"result":{"own":4}}`+"\n")) {
		t.Errorf("no nested result line in\n%s", own)
	}
}
