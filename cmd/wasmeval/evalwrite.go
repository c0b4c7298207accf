package main

import (
	"bufio"
	"encoding/json"
	"io"
)

// resultWriter writes eval's answer lines: one compact JSON value a line,
// flushed once per answer.
type resultWriter struct {
	out *bufio.Writer
	enc *json.Encoder
}

func newResultWriter(w io.Writer) *resultWriter {
	out := bufio.NewWriter(w)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	return &resultWriter{out: out, enc: enc}
}

// write writes v as one line and flushes it.
func (w *resultWriter) write(v any) error {
	if err := w.enc.Encode(v); err != nil {
		return err
	}
	return w.out.Flush()
}
