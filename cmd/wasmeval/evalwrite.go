package main

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/wasmeval/wasmeval/sandbox"
)

// resultWriter writes eval's answer lines: one compact JSON value a line,
// flushed once per answer.
type resultWriter struct {
	out *bufio.Writer
	enc *json.Encoder
	buf []byte // a result's line, reused from answer to answer
}

func newResultWriter(w io.Writer) *resultWriter {
	out := bufio.NewWriter(w)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	return &resultWriter{out: out, enc: enc}
}

// write writes v as one line and flushes it. A result, the common answer,
// is encoded without reflection (appendResult) into a buffer kept from
// line to line; anything else by encoding/json.
func (w *resultWriter) write(v any) error {
	if r, ok := v.(*sandbox.Result); ok && r != nil {
		b, err := appendResult(w.buf[:0], r)
		if err != nil {
			return err
		}
		b = append(b, '\n')
		if cap(b) <= 1<<20 { // keep a buffer of a usual answer, not a huge one
			w.buf = b
		}
		if _, err := w.out.Write(b); err != nil {
			return err
		}
		return w.out.Flush()
	}
	if err := w.enc.Encode(v); err != nil {
		return err
	}
	return w.out.Flush()
}
