package server

import (
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
)

// FuzzDecodeCreate: a client's session-creation body never panics the
// server, and an environment it accepts is one a guest can be given.
func FuzzDecodeCreate(f *testing.F) {
	for _, s := range []string{"", "{}", `{"env":{"A":"b"}}`, `{"env":{"A-B":"x"}}`, `{"env":{"A":"\u0000"}}`, `{"env":null}`, `[]`, `{"env":{"A":1}}`, `{} {}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		env, err := decodeCreate(body)
		if err != nil {
			return
		}
		if err := sandbox.CheckEnv(env); err != nil {
			t.Fatalf("decodeCreate(%q) accepted %v, which CheckEnv refuses: %v", body, env, err)
		}
	})
}
