package main

import (
	"encoding/json"
	"testing"
)

func TestVisible(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain text", "héllo\tworld 👋\n", "héllo\tworld 👋\n"},
		{"an OSC sequence", "a\x1b]0;title\x07b", `a\x1b]0;title\x07b`},
		{"carriage return and backspace", "ok\r\bX", `ok\x0d\x08X`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"a C1 CSI", "a\u009b31mb", `a\u009b31mb`},
		{"a byte that is not UTF-8", "a\x9b31mb", `a\x9b31mb`},
		{"U+00A0 is not a control", "a\u00a0b", "a\u00a0b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := visible(tc.in); got != tc.want {
				t.Errorf("visible(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	// JSON stays JSON, with the same value.
	b, _ := json.Marshal(map[string]string{"k": "x\u009b\u0085y\x1b"})
	var v map[string]string
	if err := json.Unmarshal([]byte(visible(string(b))), &v); err != nil || v["k"] != "x\u009b\u0085y\x1b" {
		t.Errorf("visible broke JSON %s: %v %q", b, err, v["k"])
	}
}
