package tape_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/tape"
)

// TestHoldWriteRelease: requests recorded with HoldWrite and
// WriteRelease, many enough for the Writer's drains, have their frames
// ended by those drains once a frame's worth waits and no request is held
// (without a Flush or FlushSoon's timer), so the tape up to Complete is
// whole requests; while another request is held, no drain ends a frame.
func TestHoldWriteRelease(t *testing.T) {
	const (
		held      = 3000   // requests written while another is held
		unheldMax = 100000 // requests written at most, one at a time, until a frame ends
	)
	pad := strings.Repeat("x", 200)
	for _, hold := range []bool{false, true} {
		var buf bytes.Buffer
		w := headedWriter(t, &buf)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		start := w.Complete()
		if hold {
			w.Hold() // a request around them all, as an enclosing one
		}
		requests := 0
		for n := 1; hold && n <= held || !hold && n <= unheldMax && w.Complete() == start; n++ {
			v := map[string]any{"n": n, "pad": pad}
			if err := w.HoldWrite(tape.Deferred(tape.Record{Type: tape.TypeRequest, N: n}, v)); err != nil {
				t.Fatal(err)
			}
			if err := w.WriteRelease(tape.Deferred(tape.Record{Type: tape.TypeResult, N: n}, v), false); err != nil {
				t.Fatal(err)
			}
			requests = n
		}
		at := w.Complete()
		if hold {
			if at != start {
				t.Errorf("held: the tape's complete frames grew from %d to %d bytes while a request was held", start, at)
			}
			w.Release()
		} else if at == start {
			t.Errorf("%d requests, their drains ended no frame", requests)
		}
		tp, err := tape.Read(bytes.NewReader(buf.Bytes()[:at]))
		if err != nil {
			t.Fatalf("held %v: the tape up to Complete: %v", hold, err)
		}
		whole := len(tp.Events) / 2
		if len(tp.Events)%2 != 0 {
			t.Errorf("held %v: the tape up to Complete holds %d records: a request without its result", hold, len(tp.Events))
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		tp, err = tape.Read(bytes.NewReader(buf.Bytes()))
		if err != nil || len(tp.Events) != 2*requests {
			t.Fatalf("held %v: %v, %d events; want %d", hold, err, len(tp.Events), 2*requests)
		}
		for i, r := range tp.Events {
			if want := []string{tape.TypeRequest, tape.TypeResult}[i%2]; r.Type != want || r.N != i/2+1 {
				t.Fatalf("held %v: event %d is %s %d; want %s %d", hold, i, r.Type, r.N, want, i/2+1)
			}
		}
		t.Logf("held %v: %d of %d requests in complete frames before Close", hold, whole, requests)
	}
}

// TestWriteClockRand: WriteClock and WriteRand write what Write writes for
// the same records, in order with the others, refuse what Write refuses,
// and keep nothing of the caller's bytes (a guest's buffer).
func TestWriteClockRand(t *testing.T) {
	write := func(quick bool) []tape.Record {
		t.Helper()
		var buf bytes.Buffer
		w := headedWriter(t, &buf)
		p := make([]byte, 48)
		for i := range 5000 { // past a drain's worth of lines
			for j := range p {
				p[j] = byte(i + j)
			}
			ns := int64(i) * 1_000_003
			clock := []string{tape.ClockWall, tape.ClockMono}[i%2]
			var err error
			if quick {
				err = errors.Join(w.WriteClock(clock, ns), w.WriteRand(p[:1+i%len(p)]))
			} else {
				err = errors.Join(w.Write(tape.Record{Type: tape.TypeClock, Clock: clock, NS: &ns}),
					w.Write(tape.Record{Type: tape.TypeRand, Data: append([]byte(nil), p[:1+i%len(p)]...)}))
			}
			if err != nil {
				t.Fatal(err)
			}
			clear(p) // the guest's buffer, reused
			if i%1000 == 999 {
				if err := w.Write(tape.Record{Type: tape.TypeReader, Lang: tape.ReaderJavaScript}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		tp, err := tape.Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		return tp.Events
	}
	want, got := write(false), write(true)
	if len(got) != len(want) || len(want) != 2*5000+5 {
		t.Fatalf("%d records with WriteClock and WriteRand, %d with Write", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Type != w.Type || g.Clock != w.Clock || (g.NS == nil) != (w.NS == nil) || g.NS != nil && *g.NS != *w.NS || !bytes.Equal(g.Data, w.Data) || g.Lang != w.Lang {
			t.Fatalf("record %d: %+v; Write's %+v", i, g, w)
		}
	}

	w, err := tape.NewWriter(&bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteClock("sundial", 1); err == nil {
		t.Error("WriteClock of an unknown clock: no error")
	}
	if err := w.WriteRand(nil); err == nil {
		t.Error("WriteRand of no bytes: no error")
	}
}
