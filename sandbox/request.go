package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Limits of a request.
const (
	// DefaultTimeoutSeconds is a cell's timeout when the request gives none.
	DefaultTimeoutSeconds = 30
	// MaxTimeoutSeconds is the longest timeout a cell may ask for.
	MaxTimeoutSeconds = 600
	// MaxCells is the most cells one request may hold.
	MaxCells = 100
)

// languages are the request's language tags, in the order error messages
// name them.
var languages = []string{"py", "js", "ts"}

// Request is one evaluation request: cells that run in order in a session.
// Its JSON form is docs/design.md's cell contract:
//
//	{"cells": [{"language": "py", "code": "print(1)", "title": "one", "timeout": 30, "reset": false}]}
type Request struct {
	// Cells run in order; the first that fails stops the request.
	Cells []Cell `json:"cells"`
}

// Cell is one piece of code in one language.
type Cell struct {
	// Language is "py" (Python), "js" (JavaScript) or "ts" (TypeScript:
	// JavaScript with types, which are stripped; ts and js cells share one
	// state). There is no sniffing.
	Language string `json:"language"`
	// Code is the cell's source; it must not be empty.
	Code string `json:"code"`
	// Title names the cell in the result. Empty (or only white space)
	// means the language tag, like "py".
	Title string `json:"title,omitempty"`
	// TimeoutSeconds bounds the cell's run time, in whole seconds from 1 to
	// MaxTimeoutSeconds; zero means DefaultTimeoutSeconds. Its JSON name is
	// "timeout".
	TimeoutSeconds int `json:"timeout,omitempty"`
	// Reset discards the language's state (globals, declarations) before
	// the cell runs.
	Reset bool `json:"reset,omitempty"`
	// Fuel, when positive, is the cell's fuel budget: past it the cell
	// stops with "fuel exhausted", at the same point on every run and
	// machine (unlike a timeout). Python cells only: goja counts no
	// instructions, so JavaScript cells are bounded by their timeout.
	Fuel int64 `json:"fuel,omitempty"`
}

// MaxFuel is the largest fuel budget a cell may ask for (about an hour of
// CPython on a fast machine).
const MaxFuel = 1 << 45

// RequestError reports an invalid request. Callers tell invalid requests
// from host failures with errors.As.
type RequestError struct {
	// Path locates the fault in the request's JSON, like "cells[1].timeout";
	// it is empty when the fault is the request as a whole.
	Path string
	// Message says what was wrong and what would be right.
	Message string
}

// Error returns the message with the path and the package prefix, like
// "sandbox: invalid request: cells[1].timeout: 900 is out of range; use an
// integer from 1 to 600 seconds".
func (e *RequestError) Error() string {
	return "sandbox: invalid request: " + e.Detail()
}

// Detail returns the message with its path but without the package prefix,
// for protocols that carry their own framing.
func (e *RequestError) Detail() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

func reqErr(path, format string, args ...any) *RequestError {
	return &RequestError{Path: path, Message: fmt.Sprintf(format, args...)}
}

const exampleRequest = `{"cells":[{"language":"py","code":"print(1)"}]}`

var cellFields = []string{"language", "code", "title", "timeout", "reset", "fuel"}

// DecodeRequest parses one JSON request and validates it. Unknown fields,
// trailing data after the object, a missing or empty cell list, unknown
// languages, empty code and timeouts that are not whole numbers from 1 to
// MaxTimeoutSeconds are all rejected. Absent timeouts are filled in with
// DefaultTimeoutSeconds. Every error it returns is a *RequestError.
//
// A request of the common shape is read by ScanRequest, without
// reflection; anything else (and every error) takes the general path.
func DecodeRequest(data []byte) (Request, error) {
	if req, ok := ScanRequest(data); ok {
		return req, nil
	}
	return decodeGeneral(data)
}

// decodeGeneral is DecodeRequest for any data.
func decodeGeneral(data []byte) (Request, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return Request{}, reqErr("", "empty request; send one JSON object like %s", exampleRequest)
		}
		if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] != '{' && t[0] != '[' {
			return Request{}, reqErr("", "not JSON: it starts with %s; send one JSON object like %s", quote(string(t)), exampleRequest)
		}
		return Request{}, reqErr("", "not valid JSON: %s; send one JSON object like %s", jsonErrText(err), exampleRequest)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Request{}, reqErr("", "unexpected data after the request, which ends at byte %d; send exactly one JSON object per request", end)
	}
	top, rerr := object(raw, "", "the request must be a JSON object like "+exampleRequest)
	if rerr != nil {
		return Request{}, rerr
	}
	for _, k := range sortedKeys(top) {
		if k != "cells" {
			return Request{}, unknownField("", k, []string{"cells"})
		}
	}
	rawCells, ok := top["cells"]
	if !ok || isNull(rawCells) {
		return Request{}, reqErr("cells", "missing; give at least one cell, like %s", exampleRequest)
	}
	if kind(rawCells) != "array" {
		return Request{}, reqErr("cells", "must be an array of cells, not %s; like %s", describe(rawCells), exampleRequest)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(rawCells, &list); err != nil {
		return Request{}, reqErr("cells", "not valid JSON: %s", jsonErrText(err))
	}
	if len(list) == 0 {
		return Request{}, reqErr("cells", "empty; give at least one cell, like %s", exampleRequest)
	}
	if len(list) > MaxCells {
		return Request{}, reqErr("cells", "%d cells is too many; send at most %d per request", len(list), MaxCells)
	}
	req := Request{Cells: make([]Cell, len(list))}
	for i, rc := range list {
		c, err := decodeCell(rc, fmt.Sprintf("cells[%d]", i))
		if err != nil {
			return Request{}, err
		}
		req.Cells[i] = c
	}
	if err := req.Validate(); err != nil {
		return Request{}, err
	}
	return req, nil
}

func decodeCell(raw json.RawMessage, path string) (Cell, *RequestError) {
	m, err := object(raw, path, `each cell must be a JSON object like {"language":"py","code":"print(1)"}`)
	if err != nil {
		return Cell{}, err
	}
	for _, k := range sortedKeys(m) {
		if !contains(cellFields, k) {
			return Cell{}, unknownField(path, k, cellFields)
		}
	}
	var c Cell
	if c.Language, err = stringField(m, path, "language", `use "py", "js" or "ts"`); err != nil {
		return Cell{}, err
	}
	if c.Code, err = stringField(m, path, "code", "give the code to run as a string"); err != nil {
		return Cell{}, err
	}
	if c.Title, err = stringField(m, path, "title", "give the title as a string, or leave it out"); err != nil {
		return Cell{}, err
	}
	if v, ok := m["reset"]; ok && !isNull(v) {
		switch string(v) {
		case "true":
			c.Reset = true
		case "false":
		default:
			return Cell{}, reqErr(path+".reset", "must be true or false, not %s", describe(v))
		}
	}
	if v, ok := m["fuel"]; ok && !isNull(v) {
		n, perr := strconv.ParseInt(string(v), 10, 64)
		if perr != nil || n < 1 || n > MaxFuel {
			return Cell{}, reqErr(path+".fuel", "%s is not a fuel budget; use a whole number of units from 1 to %d", describe(v), int64(MaxFuel))
		}
		c.Fuel = n
	}
	if v, ok := m["timeout"]; ok && !isNull(v) {
		n, err := timeoutSeconds(v, path+".timeout")
		if err != nil {
			return Cell{}, err
		}
		c.TimeoutSeconds = n
	} else {
		c.TimeoutSeconds = DefaultTimeoutSeconds
	}
	return c, nil
}

// timeoutSeconds accepts whole numbers, also when written as 30.0 or 3e1.
func timeoutSeconds(v json.RawMessage, path string) (int, *RequestError) {
	use := fmt.Sprintf("use an integer from 1 to %d seconds", MaxTimeoutSeconds)
	if kind(v) != "number" {
		return 0, reqErr(path, "must be a number, not %s; %s", describe(v), use)
	}
	s := string(v)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 1 || n > MaxTimeoutSeconds {
			return 0, reqErr(path, "%s is out of range; %s", s, use)
		}
		return int(n), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, reqErr(path, "%s is out of range; %s", clip(s, 40), use)
	}
	if f != math.Trunc(f) {
		return 0, reqErr(path, "%s is not a whole number; %s", clip(s, 40), use)
	}
	if f < 1 || f > MaxTimeoutSeconds {
		return 0, reqErr(path, "%s is out of range; %s", clip(s, 40), use)
	}
	return int(f), nil
}

// Validate checks a Request built in Go the way DecodeRequest checks JSON,
// except that a zero TimeoutSeconds means the default. Its errors are
// *RequestError.
func (r Request) Validate() error {
	if len(r.Cells) == 0 {
		return reqErr("cells", "empty; give at least one cell, like %s", exampleRequest)
	}
	if len(r.Cells) > MaxCells {
		return reqErr("cells", "%d cells is too many; send at most %d per request", len(r.Cells), MaxCells)
	}
	for i, c := range r.Cells {
		if c.valid() {
			continue // the common case, without formatting a path
		}
		path := fmt.Sprintf("cells[%d]", i)
		switch {
		case c.Language == "":
			return reqErr(path+".language", `missing or empty; use "py", "js" or "ts"`)
		case !contains(languages, c.Language):
			return reqErr(path+".language", `%s is not supported; use %s`, quote(c.Language), languageHint(c.Language))
		case strings.TrimSpace(c.Code) == "":
			return reqErr(path+".code", "empty; give the code to run")
		case c.TimeoutSeconds < 0 || c.TimeoutSeconds > MaxTimeoutSeconds:
			return reqErr(path+".timeout", "%d is out of range; use an integer from 1 to %d seconds", c.TimeoutSeconds, MaxTimeoutSeconds)
		case c.Fuel < 0 || c.Fuel > MaxFuel:
			return reqErr(path+".fuel", "%d is out of range; use a whole number of units from 1 to %d", c.Fuel, int64(MaxFuel))
		case c.Fuel > 0 && c.Language != "py":
			return reqErr(path+".fuel", "fuel is metered for Python cells only; a %s cell is bounded by its timeout", c.Language)
		}
	}
	return nil
}

// valid reports whether Validate finds nothing wrong with c.
func (c Cell) valid() bool {
	return contains(languages, c.Language) &&
		strings.TrimSpace(c.Code) != "" &&
		c.TimeoutSeconds >= 0 && c.TimeoutSeconds <= MaxTimeoutSeconds &&
		c.Fuel >= 0 && c.Fuel <= MaxFuel && (c.Fuel == 0 || c.Language == "py")
}

// normalized returns the cells with defaults filled in.
func (r Request) normalized() []Cell {
	cells := make([]Cell, len(r.Cells))
	for i, c := range r.Cells {
		if c.TimeoutSeconds == 0 {
			c.TimeoutSeconds = DefaultTimeoutSeconds
		}
		if strings.TrimSpace(c.Title) == "" {
			c.Title = c.Language
		}
		cells[i] = c
	}
	return cells
}

func languageHint(lang string) string {
	switch strings.ToLower(strings.TrimSpace(lang)) {
	case "python", "python3", "py", "py3":
		return `"py" for Python`
	case "javascript", "js", "node", "nodejs", "ecmascript":
		return `"js" for JavaScript`
	case "typescript":
		return `"ts" for TypeScript`
	}
	return `"py" (Python), "js" (JavaScript) or "ts" (TypeScript)`
}

func object(raw json.RawMessage, path, want string) (map[string]json.RawMessage, *RequestError) {
	if kind(raw) != "object" {
		return nil, reqErr(path, "%s is not an object; %s", describe(raw), want)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, reqErr(path, "not valid JSON: %s", jsonErrText(err))
	}
	return m, nil
}

func stringField(m map[string]json.RawMessage, path, name, use string) (string, *RequestError) {
	v, ok := m[name]
	if !ok || isNull(v) {
		if name == "language" || name == "code" {
			return "", reqErr(path+"."+name, "missing; %s", use)
		}
		return "", nil
	}
	if kind(v) != "string" {
		return "", reqErr(path+"."+name, "must be a string, not %s; %s", describe(v), use)
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", reqErr(path+"."+name, "not a valid JSON string: %s", jsonErrText(err))
	}
	return s, nil
}

func unknownField(path, name string, known []string) *RequestError {
	p := path
	msg := fmt.Sprintf("unknown field %s", quote(name))
	if len(known) == 1 {
		msg += fmt.Sprintf("; the only field here is %q", known[0])
	} else {
		if best := closest(name, known); best != "" {
			msg += fmt.Sprintf(` (did you mean %q?)`, best)
		}
		msg += "; the fields are " + strings.Join(known, ", ")
	}
	return &RequestError{Path: p, Message: msg}
}

// ClosestName returns the name in known within edit distance 2 of name
// (compared in lower case), or "": the "did you mean" of every decoder's
// unknown-field message.
func ClosestName(name string, known []string) string { return closest(name, known) }

// closest returns the known name within edit distance 2 of name, if any.
func closest(name string, known []string) string {
	if len(name) > 64 {
		return ""
	}
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(name), k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
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

func isNull(raw json.RawMessage) bool { return kind(raw) == "null" }

// describe names a raw value for a message: its kind, and for scalars a
// short quote of it.
func describe(raw json.RawMessage) string {
	k := kind(raw)
	switch k {
	case "object", "array":
		return "an " + k
	case "null", "nothing":
		return k
	case "boolean":
		return string(bytes.TrimSpace(raw))
	}
	return "the " + k + " " + clip(string(bytes.TrimSpace(raw)), 40)
}

func quote(s string) string { return strconv.Quote(clip(s, 40)) }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
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

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
