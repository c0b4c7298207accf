package profiles

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/wasmeval/wasmeval/sandbox"
)

// The profile names, as --tools and the eval line's "profile" field spell
// them.
const (
	Eval            = "eval"
	Python          = "python"
	EvaluatePython  = "evaluate_python"
	CodeInterpreter = "code_interpreter"
)

// Names lists every profile name, in the order messages give them.
var Names = []string{Eval, Python, EvaluatePython, CodeInterpreter}

// available are the profiles that are implemented.
var available = map[string]bool{Eval: true, Python: true, EvaluatePython: true, CodeInterpreter: true}

// Available reports whether the profile name is implemented.
func Available(name string) bool { return available[name] }

// Set is the profiles a face exposes. The zero Set exposes every available
// profile, so that a Config that says nothing keeps every tool.
type Set struct {
	names map[string]bool
}

// All returns the Set of every available profile.
func All() Set { return Set{} }

// Has reports whether name is in s.
func (s Set) Has(name string) bool {
	if s.names == nil {
		return available[name]
	}
	return s.names[name]
}

// String lists s's names comma-separated, in the order of Names.
func (s Set) String() string {
	var out []string
	for _, n := range Names {
		if s.Has(n) {
			out = append(out, n)
		}
	}
	return strings.Join(out, ",")
}

// ParseTools reads a --tools value: profile names separated by commas
// (spaces around them are ignored). "" or "all" means every available
// profile. An unknown name, or one that is not available yet, is an error
// that lists the valid names.
func ParseTools(list string) (Set, error) {
	list = strings.TrimSpace(list)
	if list == "" || list == "all" {
		return All(), nil
	}
	s := Set{names: map[string]bool{}}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
			continue
		case !available[n]:
			msg := fmt.Sprintf("--tools: unknown profile %q", n)
			if t, ok := LookupTool(n); ok {
				msg += fmt.Sprintf(" (%s is a tool of the %s profile)", n, t.Profile)
			} else if best := sandbox.ClosestName(n, Names); best != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", best)
			}
			return Set{}, fmt.Errorf("%s; use a comma-separated list of %s (default: all)", msg, availableList())
		}
		s.names[n] = true
	}
	if len(s.names) == 0 {
		return Set{}, fmt.Errorf("--tools: no profile named; use a comma-separated list of %s (default: all)", availableList())
	}
	return s, nil
}

func availableList() string {
	var out []string
	for _, n := range Names {
		if available[n] {
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
}

// Error is an invalid call of a profile.
type Error struct {
	// Profile names the profile, like "evaluate_python".
	Profile string
	// Path locates the fault in the call's JSON, like "writes[1].mode";
	// empty when the fault is the call as a whole.
	Path string
	// Message says what was wrong and what would be right.
	Message string
}

// Error returns the detail with the package prefix, like "profiles:
// evaluate_python: writes[1].mode: ...".
func (e *Error) Error() string { return "profiles: " + e.Detail() }

// Detail returns the message with the profile and the path but without the
// package prefix, for faces that carry their own framing.
func (e *Error) Detail() string {
	if e.Path == "" {
		return e.Profile + ": " + e.Message
	}
	return e.Profile + ": " + e.Path + ": " + e.Message
}

// Detail returns err's text for a face: an *Error's Detail, else its
// message.
func Detail(err error) string {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Detail()
	}
	return err.Error()
}

// decoder builds the *Error values of one profile.
type decoder struct{ profile string }

func (d decoder) errf(path, format string, args ...any) *Error {
	return &Error{Profile: d.profile, Path: path, Message: fmt.Sprintf(format, args...)}
}

// object parses data as exactly one JSON object, naming the example
// request in its errors.
func (d decoder) top(data []byte, example string) (map[string]json.RawMessage, *Error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, d.errf("", "empty request; send one JSON object like %s", example)
		}
		return nil, d.errf("", "not valid JSON: %s; send one JSON object like %s", jsonErrText(err), example)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, d.errf("", "unexpected data after the request; send exactly one JSON object like %s", example)
	}
	return d.object(raw, "", "send one JSON object like "+example)
}

func (d decoder) object(raw json.RawMessage, path, want string) (map[string]json.RawMessage, *Error) {
	if kind(raw) != "object" {
		return nil, d.errf(path, "must be an object, not %s; %s", describe(raw), want)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, d.errf(path, "not valid JSON: %s", jsonErrText(err))
	}
	return m, nil
}

// fields rejects the keys of m that are not in known.
func (d decoder) fields(m map[string]json.RawMessage, path string, known []string) *Error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if contains(known, k) {
			continue
		}
		msg := fmt.Sprintf("unknown field %s", quote(k))
		if best := sandbox.ClosestName(k, known); best != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", best)
		}
		return d.errf(path, "%s; the fields are %s", msg, strings.Join(known, ", "))
	}
	return nil
}

// str reads the string field name of m; ok false when it is absent or null.
func (d decoder) str(m map[string]json.RawMessage, path, name, use string) (s string, ok bool, err *Error) {
	v, there := m[name]
	if !there || kind(v) == "null" {
		return "", false, nil
	}
	p := join(path, name)
	if kind(v) != "string" {
		return "", false, d.errf(p, "must be a string, not %s; %s", describe(v), use)
	}
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false, d.errf(p, "not a valid JSON string: %s", jsonErrText(err))
	}
	return s, true, nil
}

// array reads the array field name of m; nil when absent or null.
func (d decoder) array(m map[string]json.RawMessage, path, name, use string) ([]json.RawMessage, *Error) {
	v, there := m[name]
	if !there || kind(v) == "null" {
		return nil, nil
	}
	p := join(path, name)
	if kind(v) != "array" {
		return nil, d.errf(p, "must be an array, not %s; %s", describe(v), use)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(v, &list); err != nil {
		return nil, d.errf(p, "not valid JSON: %s", jsonErrText(err))
	}
	return list, nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// kind names the JSON type of a raw value.
func kind(raw json.RawMessage) string {
	b := bytes.TrimLeft(raw, " \t\r\n")
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// describe names a raw value for a message.
func describe(raw json.RawMessage) string {
	switch k := kind(raw); k {
	case "object", "array":
		return "an " + k
	case "null", "nothing":
		return k
	case "boolean":
		return string(bytes.TrimSpace(raw))
	default:
		return "the " + k + " " + clip(string(bytes.TrimSpace(raw)), 40)
	}
}

func quote(s string) string { return strconv.Quote(clip(s, 40)) }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "..."
}

func jsonErrText(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", strings.TrimPrefix(se.Error(), "json: "), se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "the JSON ends too early"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
