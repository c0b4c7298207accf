package sandbox

import (
	"encoding/json"
	"strconv"
	"sync"
	"unicode/utf8"
)

// A recorded request's request and result are encoded for the tape off the
// request's path (tape.Deferred), but every request pays for them in CPU,
// and encoding/json's reflection was most of what recording a small cell
// cost. These append the same JSON by hand, byte for byte what json.Marshal
// writes (replay compares a replayed result's json.Marshal with the tape's
// bytes), for the requests and results most requests have; the rest
// (JSON display outputs, which json.Marshal compacts) are left to
// json.Marshal. TestRecordJSONMatchesMarshal keeps them in step with the
// types and with encoding/json, and fastJSON checks them against
// json.Marshal once per process, so that another Go's encoding/json only
// costs the speed.

// AppendJSON implements tape.JSONAppender.
func (f *frozenRequest) AppendJSON(b []byte) ([]byte, bool) {
	if !fastJSON() {
		return b, false
	}
	return appendRequestJSON(b, &f.Request), true
}

// AppendJSON implements tape.JSONAppender.
func (f *frozen) AppendJSON(b []byte) ([]byte, bool) {
	if !fastJSON() || len(f.Details.JSONOutputs) > 0 {
		return b, false
	}
	return appendResultJSON(b, &f.Result), true
}

func appendRequestJSON(b []byte, r *Request) []byte {
	b = append(b, `{"cells":`...)
	if r.Cells == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Cells {
			c := &r.Cells[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(append(b, `{"language":`...), c.Language)
			b = appendJSONString(append(b, `,"code":`...), c.Code)
			if c.Title != "" {
				b = appendJSONString(append(b, `,"title":`...), c.Title)
			}
			if c.TimeoutSeconds != 0 {
				b = strconv.AppendInt(append(b, `,"timeout":`...), int64(c.TimeoutSeconds), 10)
			}
			if c.Reset {
				b = append(b, `,"reset":true`...)
			}
			if c.Fuel != 0 {
				b = strconv.AppendInt(append(b, `,"fuel":`...), c.Fuel, 10)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendResultJSON appends r's JSON; r has no JSON display outputs.
func appendResultJSON(b []byte, r *Result) []byte {
	b = append(b, `{"content":`...)
	b = appendJSONList(b, r.Content, func(b []byte, c *Content) []byte {
		b = appendJSONString(append(b, `{"type":`...), c.Type)
		if c.Text != "" {
			b = appendJSONString(append(b, `,"text":`...), c.Text)
		}
		if c.Data != "" {
			b = appendJSONString(append(b, `,"data":`...), c.Data)
		}
		if c.MIMEType != "" {
			b = appendJSONString(append(b, `,"mimeType":`...), c.MIMEType)
		}
		return append(b, '}')
	})
	d := &r.Details
	b = append(b, `,"details":{"cells":`...)
	b = appendJSONList(b, d.Cells, func(b []byte, c *CellResult) []byte {
		b = strconv.AppendInt(append(b, `{"index":`...), int64(c.Index), 10)
		b = appendJSONString(append(b, `,"title":`...), c.Title)
		b = appendJSONString(append(b, `,"language":`...), c.Language)
		b = appendJSONString(append(b, `,"code":`...), c.Code)
		b = appendJSONString(append(b, `,"status":`...), string(c.Status))
		b = appendJSONString(append(b, `,"output":`...), c.Output)
		b = strconv.AppendInt(append(b, `,"durationMs":`...), c.DurationMs, 10)
		b = append(b, `,"exitCode":`...)
		if c.ExitCode == nil {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendInt(b, int64(*c.ExitCode), 10)
		}
		b = appendStatusEvents(append(b, `,"statusEvents":`...), c.StatusEvents)
		b = appendJSONString(append(b, `,"markdown":`...), c.Markdown)
		return append(b, '}')
	})
	b = appendJSONString(append(b, `,"language":`...), d.Language)
	b = appendJSONList(append(b, `,"languages":`...), d.Languages, func(b []byte, s *string) []byte {
		return appendJSONString(b, *s)
	})
	b = append(b, `,"jsonOutputs":`...)
	if d.JSONOutputs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, "[]"...) // the caller left those with any to json.Marshal
	}
	b = appendJSONList(append(b, `,"images":`...), d.Images, func(b []byte, im *Image) []byte {
		b = appendJSONString(append(b, `{"data":`...), im.Data)
		b = appendJSONString(append(b, `,"mimeType":`...), im.MIMEType)
		return append(b, '}')
	})
	b = appendStatusEvents(append(b, `,"statusEvents":`...), d.StatusEvents)
	b = append(b, `,"meta":{`...)
	m := &d.Meta
	if len(m.Truncated) > 0 {
		b = appendJSONList(append(b, `"truncated":`...), m.Truncated, func(b []byte, t *Truncation) []byte {
			b = strconv.AppendInt(append(b, `{"cell":`...), int64(t.Cell), 10)
			b = appendJSONString(append(b, `,"outputId":`...), t.OutputID)
			b = strconv.AppendInt(append(b, `,"bytes":`...), t.Bytes, 10)
			b = strconv.AppendInt(append(b, `,"lines":`...), t.Lines, 10)
			b = strconv.AppendInt(append(b, `,"omittedBytes":`...), t.OmittedBytes, 10)
			b = strconv.AppendInt(append(b, `,"omittedLines":`...), t.OmittedLines, 10)
			if t.Capped {
				b = append(b, `,"capped":true`...)
			}
			return append(b, '}')
		})
	}
	if m.Dropped != nil {
		if len(m.Truncated) > 0 {
			b = append(b, ',')
		}
		b = append(b, `"dropped":{`...)
		sep := ""
		for _, f := range []struct {
			name string
			n    int
		}{{"images", m.Dropped.Images}, {"jsonOutputs", m.Dropped.JSONOutputs}, {"statusEvents", m.Dropped.StatusEvents}} {
			if f.n != 0 {
				b = strconv.AppendInt(append(append(append(append(b, sep...), '"'), f.name...), `":`...), int64(f.n), 10)
				sep = ","
			}
		}
		b = append(b, '}')
	}
	b = strconv.AppendBool(append(b, `},"isError":`...), d.IsError)
	return append(b, "}}"...)
}

func appendStatusEvents(b []byte, evs []StatusEvent) []byte {
	return appendJSONList(b, evs, func(b []byte, e *StatusEvent) []byte {
		b = strconv.AppendInt(append(b, `{"cell":`...), int64(e.Cell), 10)
		b = appendJSONString(append(b, `,"kind":`...), e.Kind)
		b = appendJSONString(append(b, `,"message":`...), e.Message)
		return append(b, '}')
	})
}

// appendJSONList appends a slice as json.Marshal does: null when nil.
func appendJSONList[T any](b []byte, s []T, each func([]byte, *T) []byte) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(b, &s[i])
	}
	return append(b, ']')
}

// appendJSONString appends s quoted as json.Marshal quotes it (encoding/
// json's appendString with HTML escaping): control characters, quotes,
// backslashes and <, >, & escaped; invalid UTF-8 as U+FFFD; U+2028 and
// U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
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
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
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
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// fastJSON says whether the hand encoders write what json.Marshal does
// in this process, checked once on a request and a result that hold every
// field and the characters encoding/json escapes.
var fastJSON = sync.OnceValue(func() bool {
	req, res := jsonSamples()
	for _, v := range []struct {
		fast []byte
		val  any
	}{{appendRequestJSON(nil, req), req}, {appendResultJSON(nil, res), res}} {
		want, err := json.Marshal(v.val)
		if err != nil || string(want) != string(v.fast) {
			return false
		}
	}
	return true
})

// jsonSamples are a request and a result with every field set and
// strings of the characters JSON encoders treat differently.
func jsonSamples() (*Request, *Result) {
	s := "a\"b\\c\x00\x01\b\f\n\r\t\x1f\x7f<>&'/ é\u2028\u2029\U0001F600\xff\xc3(end"
	code := 3
	req := &Request{Cells: []Cell{{Language: s, Code: s, Title: s, TimeoutSeconds: 5, Reset: true, Fuel: 7}, {Language: "py", Code: ""}}}
	ev := []StatusEvent{{Cell: 1, Kind: s, Message: s}}
	res := &Result{
		Content: []Content{{Type: s, Text: s, Data: s, MIMEType: s}, {Type: "text"}},
		Details: Details{
			Cells:        []CellResult{{Index: 2, Title: s, Language: s, Code: s, Status: CellStatus(s), Output: s, DurationMs: -4, ExitCode: &code, StatusEvents: ev, Markdown: s}, {}},
			Language:     s,
			Languages:    []string{s, ""},
			JSONOutputs:  []json.RawMessage{},
			Images:       []Image{{Data: s, MIMEType: s}},
			StatusEvents: ev,
			Meta:         Meta{Truncated: []Truncation{{Cell: 1, OutputID: s, Bytes: 2, Lines: 3, OmittedBytes: 4, OmittedLines: 5, Capped: true}, {}}, Dropped: &Dropped{Images: 1, StatusEvents: 3}},
			IsError:      true,
		},
	}
	return req, res
}
