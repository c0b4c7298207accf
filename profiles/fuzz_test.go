package profiles_test

import (
	"errors"
	"testing"

	"github.com/wasmeval/wasmeval/profiles"
)

// FuzzDecodeEvaluatePython checks that any input decodes to a valid call
// or to an *Error, without panicking, and that lines decode the same way.
func FuzzDecodeEvaluatePython(f *testing.F) {
	for _, s := range []string{
		profiles.EvaluatePythonExample,
		`{"code": "1", "globals": {"n": "3"}, "reads": [{"path": "a/b"}], "writes": [{"path": "c", "content": "{n}", "mode": "append"}]}`,
		`{"code": 1}`, `[]`, `{"profile": "evaluate_python", "code": ""}`, `{"globals": {"": "x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := profiles.DecodeEvaluatePython(data)
		var pe *profiles.Error
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("error %v is not an *Error", err)
		}
		if err == nil {
			if verr := p.Validate(); verr != nil {
				t.Fatalf("decoded %q but Validate says %v", data, verr)
			}
		}
		if _, _, err := profiles.DecodeLine(data); err != nil && !errors.As(err, &pe) {
			t.Fatalf("DecodeLine error %v is not an *Error", err)
		}
	})
}
