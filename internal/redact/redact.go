// Package redact takes host configuration out of text that a guest will
// read: credentials and query strings in URLs, bearer tokens, and secrets the
// caller names. It is the last line of defence behind the host backends
// (internal/llmhost, internal/mcphost), which build their guest-visible
// messages from fixed descriptions in the first place; it is not part of
// wasmeval's public API.
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// Mark replaces what was taken out.
const Mark = "[redacted]"

// URL returns u as scheme://host/path: no user information, no query, no
// fragment. url.URL.Redacted keeps the user name and hides only the
// password; a guest gets neither.
func URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath, Opaque: u.Opaque}
	s := c.String()
	if u.RawQuery != "" || u.ForceQuery {
		s += "?" + Mark
	}
	return s
}

// URLString is URL of a string; a string that does not parse as a URL
// becomes its scheme (when it has one) and Mark.
func URLString(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		if scheme, _, ok := strings.Cut(s, "://"); ok && isScheme(scheme) {
			return scheme + "://" + Mark
		}
		return Mark
	}
	return URL(u)
}

func isScheme(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

var (
	// urlRE finds URLs in free text (Go error strings quote them: Post "URL").
	urlRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>\x60]+`)
	// schemeRE finds HTTP authorization values: "Bearer X", "Basic X".
	schemeRE = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)([A-Za-z0-9._~+/=-]{4,})`)
	// assignRE finds credentials written as assignments: "api_key=X",
	// "password: X".
	assignRE = regexp.MustCompile(`(?i)(token|access[_-]?token|api[_-]?key|x-api-key|authorization|password|passwd|secret|client[_-]?secret)(\s*[:=]\s*)("[^"]*"|'[^']*'|[^\s,;"'&]+)`)
)

// Text returns s with every URL reduced by URLString, every credential that
// looks like "Bearer X", "api_key=X" or "password: X" replaced by Mark, and
// every occurrence of each secret (the caller's keys, passwords, command
// lines) replaced by Mark. Secrets shorter than 4 bytes are ignored: they
// would redact ordinary words.
func Text(s string, secrets ...string) string {
	// URLs first: a secret replaced inside one would leave it unparsable.
	s = urlRE.ReplaceAllStringFunc(s, func(m string) string {
		// Trailing punctuation is the sentence's, not the URL's.
		trim := strings.TrimRight(m, ".,;:)]}")
		return URLString(trim) + m[len(trim):]
	})
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, Mark)
		}
	}
	s = schemeRE.ReplaceAllString(s, "$1$2"+Mark)
	return assignRE.ReplaceAllString(s, "$1$2"+Mark)
}

// Error returns err with its message passed through Text; errors.Is and
// errors.As still see err. A nil err stays nil.
func Error(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if red := Text(msg, secrets...); red != msg {
		return &redacted{msg: red, err: err}
	}
	return err
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }
