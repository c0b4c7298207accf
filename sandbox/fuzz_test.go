package sandbox_test

import (
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/wasmeval/wasmeval/sandbox"
)

// FuzzDecodeRequest checks that decoding untrusted requests never panics,
// that every failure is a *RequestError, and that what it accepts is valid.
func FuzzDecodeRequest(f *testing.F) {
	for _, seed := range []string{
		`{"cells":[{"language":"py","code":"print(1)"}]}`,
		`{"cells":[{"language":"js","code":"1+1","title":"t","timeout":600,"reset":true},{"language":"py","code":"x"}]}`,
		`{"cells":[{"language":"py","code":"x","timeout":1.5}]}`,
		`{"cells":[{"language":"py","code":"x","timeout":1e999}]}`,
		`{"cells":[{"language":"py","code":"x","timout":5}]}`,
		`{"cells":[]}`,
		`{"cells":null}`,
		`{"cells":[null]}`,
		`{"cells":[{"language":null,"code":null}]}`,
		`{"cells":[{"language":"py","code":"\u00e9\ud800"}]} trailing`,
		`[]`,
		`"x"`,
		``,
		`{"cells":[{"language":"py","code":"x","reset":"true"}]}`,
		`{"cells":[{"language":"py","code":"x","timeout":-0}]}`,
		`{"cells":[{"language":"py","code":"x"}],"cells":[]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := sandbox.DecodeRequest(data)
		if err != nil {
			var re *sandbox.RequestError
			if !errors.As(err, &re) {
				t.Fatalf("error %v is a %T, not a *RequestError", err, err)
			}
			if !utf8.ValidString(re.Detail()) && utf8.Valid(data) {
				t.Fatalf("message is not valid UTF-8: %q", re.Detail())
			}
			return
		}
		if err := req.Validate(); err != nil {
			t.Fatalf("decoded request does not validate: %v", err)
		}
		for _, c := range req.Cells {
			if c.TimeoutSeconds < 1 || c.TimeoutSeconds > sandbox.MaxTimeoutSeconds {
				t.Fatalf("timeout %d accepted", c.TimeoutSeconds)
			}
		}
	})
}
