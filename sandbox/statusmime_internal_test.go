package sandbox

import (
	"testing"
	"unicode/utf8"
)

func TestStatusOf(t *testing.T) {
	tests := []struct{ data, kind, message string }{
		{`{"op":"glob","count":12}`, "glob", `{"op":"glob","count":12}`},
		{`{"kind":"phase","message":"loading","op":"x"}`, "phase", "loading"},
		{`{"type":"t","text":"words"}`, "t", "words"},
		{`{"count": 1}`, "status", `{"count":1}`},
		{` plain words `, "status", "plain words"},
		{`[1,2]`, "status", "[1,2]"},
		{`null`, "status", "null"},
	}
	for _, tt := range tests {
		if kind, msg := statusOf(tt.data); kind != tt.kind || msg != tt.message {
			t.Errorf("statusOf(%q) = %q, %q; want %q, %q", tt.data, kind, msg, tt.kind, tt.message)
		}
	}
}

// FuzzStatusOf: a guest's status payload never panics the host and always
// gives a kind.
func FuzzStatusOf(f *testing.F) {
	for _, s := range []string{`{"op":"glob"}`, `{"kind":1}`, `{"message":{"a":1}}`, "x", "", `{"op":"\ud800"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		kind, _ := statusOf(data)
		if kind == "" {
			t.Fatalf("statusOf(%q): no kind", data)
		}
		if utf8.ValidString(data) && !utf8.ValidString(kind) {
			t.Fatalf("statusOf(%q): kind %q is not UTF-8", data, kind)
		}
	})
}
