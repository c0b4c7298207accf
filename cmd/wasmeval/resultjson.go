package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/wasmeval/wasmeval/sandbox"
)

// appendResult appends r as encoding/json encodes it with SetEscapeHTML(false)
// (the same bytes: nil slices as null, omitempty fields left out, strings
// escaped alike, JSON outputs compacted), without reflection.
//
// Why (issue 15, the eval line round trip): encoding/json's reflection
// walk was the largest host-side cost of a trivial cell's answer line after
// the write itself. TestAppendResultMatchesEncodingJSON compares the two
// on many results; TestAppendResultKnowsEveryField fails when a field is
// added to sandbox.Result's types, until it is encoded here too.
func appendResult(b []byte, r *sandbox.Result) ([]byte, error) {
	b = append(b, `{"content":`...)
	if r.Content == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range r.Content {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":`...)
			b = appendJSONString(b, c.Type)
			if c.Text != "" {
				b = append(b, `,"text":`...)
				b = appendJSONString(b, c.Text)
			}
			if c.Data != "" {
				b = append(b, `,"data":`...)
				b = appendJSONString(b, c.Data)
			}
			if c.MIMEType != "" {
				b = append(b, `,"mimeType":`...)
				b = appendJSONString(b, c.MIMEType)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	d := &r.Details
	b = append(b, `,"details":{"cells":`...)
	if d.Cells == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range d.Cells {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCell(b, &d.Cells[i])
		}
		b = append(b, ']')
	}
	b = append(b, `,"language":`...)
	b = appendJSONString(b, d.Language)
	b = append(b, `,"languages":`...)
	if d.Languages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, l := range d.Languages {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, l)
		}
		b = append(b, ']')
	}
	b = append(b, `,"jsonOutputs":`...)
	if d.JSONOutputs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, raw := range d.JSONOutputs {
			if i > 0 {
				b = append(b, ',')
			}
			if raw == nil { // json.RawMessage(nil).MarshalJSON
				b = append(b, "null"...)
				continue
			}
			var err error
			if b, err = appendCompact(b, raw); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"images":`...)
	if d.Images == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, im := range d.Images {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"data":`...)
			b = appendJSONString(b, im.Data)
			b = append(b, `,"mimeType":`...)
			b = appendJSONString(b, im.MIMEType)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"statusEvents":`...)
	b = appendEvents(b, d.StatusEvents)
	b = append(b, `,"meta":{`...)
	comma := false
	if len(d.Meta.Truncated) > 0 {
		b = append(b, `"truncated":[`...)
		for i, t := range d.Meta.Truncated {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"cell":`...)
			b = strconv.AppendInt(b, int64(t.Cell), 10)
			b = append(b, `,"outputId":`...)
			b = appendJSONString(b, t.OutputID)
			b = append(b, `,"bytes":`...)
			b = strconv.AppendInt(b, t.Bytes, 10)
			b = append(b, `,"lines":`...)
			b = strconv.AppendInt(b, t.Lines, 10)
			b = append(b, `,"omittedBytes":`...)
			b = strconv.AppendInt(b, t.OmittedBytes, 10)
			b = append(b, `,"omittedLines":`...)
			b = strconv.AppendInt(b, t.OmittedLines, 10)
			if t.Capped {
				b = append(b, `,"capped":true`...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
		comma = true
	}
	if dr := d.Meta.Dropped; dr != nil {
		if comma {
			b = append(b, ',')
		}
		b = append(b, `"dropped":{`...)
		inner := false
		for _, f := range [...]struct {
			name string
			n    int
		}{{"images", dr.Images}, {"jsonOutputs", dr.JSONOutputs}, {"statusEvents", dr.StatusEvents}} {
			if f.n == 0 {
				continue
			}
			if inner {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, f.name...)
			b = append(b, `":`...)
			b = strconv.AppendInt(b, int64(f.n), 10)
			inner = true
		}
		b = append(b, '}')
	}
	b = append(b, `},"isError":`...)
	b = strconv.AppendBool(b, d.IsError)
	b = append(b, `}}`...)
	return b, nil
}

func appendCell(b []byte, c *sandbox.CellResult) []byte {
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, int64(c.Index), 10)
	b = append(b, `,"title":`...)
	b = appendJSONString(b, c.Title)
	b = append(b, `,"language":`...)
	b = appendJSONString(b, c.Language)
	b = append(b, `,"code":`...)
	b = appendJSONString(b, c.Code)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, string(c.Status))
	b = append(b, `,"output":`...)
	b = appendJSONString(b, c.Output)
	b = append(b, `,"durationMs":`...)
	b = strconv.AppendInt(b, c.DurationMs, 10)
	b = append(b, `,"exitCode":`...)
	if c.ExitCode == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*c.ExitCode), 10)
	}
	b = append(b, `,"statusEvents":`...)
	b = appendEvents(b, c.StatusEvents)
	b = append(b, `,"markdown":`...)
	b = appendJSONString(b, c.Markdown)
	return append(b, '}')
}

func appendEvents(b []byte, evs []sandbox.StatusEvent) []byte {
	if evs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, e := range evs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"cell":`...)
		b = strconv.AppendInt(b, int64(e.Cell), 10)
		b = append(b, `,"kind":`...)
		b = appendJSONString(b, e.Kind)
		b = append(b, `,"message":`...)
		b = appendJSONString(b, e.Message)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendCompact appends raw compacted, as encoding/json writes a
// json.RawMessage (an invalid one is an error there too).
func appendCompact(b []byte, raw json.RawMessage) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json quotes a string
// without HTML escaping: ", \ and control characters escaped (\b \f \n
// \r \t by name, the rest as \u00XX), invalid UTF-8 as \ufffd, U+2028 and
// U+2029 as \u2028 and \u2029, everything else as it is.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
