package sandbox

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/wasmeval/wasmeval/runtimes"
)

// StatusMIMETypes are the MIME types of a display bundle that is a status
// event, not output: wasmeval's own and the one of the eval tool wasmeval
// replaces, whose preludes emit display({MIME: {"op": ..., ...}}, raw=True).
var StatusMIMETypes = []string{"application/x-wasmeval-status", "application/x-omp-status"}

// statusBundles turns display bundles of a status MIME type into status
// events, in either language: wrapped outermost, so that the event
// restarts the cell's inactivity timer and streams as a status event, as
// log() does.
type statusBundles struct {
	runtimes.Sink
}

func (s statusBundles) Display(b runtimes.Bundle, result bool) {
	for _, mt := range StatusMIMETypes {
		if data, ok := b[mt]; ok {
			s.Sink.Status(statusOf(data))
			return
		}
	}
	s.Sink.Display(b, result)
}

// statusOf reads a status payload: a JSON object whose kind is its "kind"
// or "op" (the seed's name) and whose message is its "message" or "text",
// or else the whole object as compact JSON; any other payload is a
// "status" event with the payload as its message.
func statusOf(data string) (kind, message string) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(data), &obj); err != nil || obj == nil {
		return "status", strings.TrimSpace(data)
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			var s string
			if raw, ok := obj[k]; ok && json.Unmarshal(raw, &s) == nil && s != "" {
				return s
			}
		}
		return ""
	}
	kind, message = str("kind", "op", "type"), str("message", "text")
	if kind == "" {
		kind = "status"
	}
	if message == "" {
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(data)) == nil {
			message = buf.String()
		}
	}
	return kind, message
}
