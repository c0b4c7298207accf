package redact_test

import (
	"errors"
	"io/fs"
	"net/url"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/redact"
)

func TestText(t *testing.T) {
	tests := []struct {
		name, in string
		secrets  []string
		want     string
	}{
		{"userinfo", `Post "http://user:hunter22@127.0.0.1:8080/v1/chat/completions": EOF`, nil,
			`Post "http://127.0.0.1:8080/v1/chat/completions": EOF`},
		{"user only", `https://alice@example.com/x`, nil, `https://example.com/x`},
		{"query", `could not reach https://h/v1?key=sk-123&x=1.`, nil, `could not reach https://h/v1?[redacted].`},
		{"fragment", `https://h/p#tok`, nil, `https://h/p`},
		{"bearer", `sent Authorization: Bearer sk-abcdef123`, nil, `sent Authorization: [redacted] [redacted]`},
		{"assignment", `api_key=sk-1 and password: "p w" and X-Api-Key: abc`, nil,
			`api_key=[redacted] and password: [redacted] and X-Api-Key: [redacted]`},
		{"named secret", `the server /opt/secret-tools/run --flag failed`, []string{"/opt/secret-tools/run --flag"},
			`the server [redacted] failed`},
		{"short secret ignored", `a b c`, []string{"a"}, `a b c`},
		{"ordinary words kept", `max_tokens is 4096; the token limit was reached`, nil, `max_tokens is 4096; the token limit was reached`},
		{"bad URL", "http://[::1%zz/x", nil, "http://[redacted]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := redact.Text(tt.in, tt.secrets...); got != tt.want {
				t.Errorf("Text(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestURL(t *testing.T) {
	u, _ := url.Parse("https://u:p@h:1/a/b?k=v#f")
	if got := redact.URL(u); got != "https://h:1/a/b?[redacted]" {
		t.Errorf("URL: %q", got)
	}
	if got := redact.URL(nil); got != "" {
		t.Errorf("URL(nil): %q", got)
	}
}

func TestError(t *testing.T) {
	base := &url.Error{Op: "Post", URL: "http://u:pw@h/x", Err: fs.ErrNotExist}
	err := redact.Error(base)
	if strings.Contains(err.Error(), "pw") || !strings.Contains(err.Error(), "http://h/x") {
		t.Errorf("Error: %q", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("the redacted error no longer wraps the original")
	}
	if redact.Error(nil) != nil {
		t.Error("Error(nil) is not nil")
	}
}
