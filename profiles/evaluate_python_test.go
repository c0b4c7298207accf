package profiles_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/profiles/profiletest"
	"github.com/wasmeval/wasmeval/sandbox"
)

// TestEvaluatePythonLibrary runs the conformance table on the library:
// DecodeEvaluatePython and RunEvaluatePython on a session.
func TestEvaluatePythonLibrary(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	root := t.TempDir()
	sess, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(ctx)
	profiletest.RunEvaluatePython(t, profiletest.Face{
		Call: func(ctx context.Context, args []byte) ([]byte, string, error) {
			p, err := profiles.DecodeEvaluatePython(args)
			if err == nil {
				var res *profiles.EvalResult
				if res, err = profiles.RunEvaluatePython(ctx, sess, p, profiles.EvalOptions{}); err == nil {
					b, err := json.Marshal(res)
					return b, "", err
				}
			}
			var pe *profiles.Error
			if errors.As(err, &pe) {
				return nil, pe.Detail(), nil
			}
			return nil, "", err
		},
		Root: func() string { return root },
	})
}

// TestEvaluatePythonSessionState checks that a call leaves the session's
// own py state alone and shares its files.
func TestEvaluatePythonSessionState(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	sess, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(ctx)
	eval := func(code string) string {
		res, err := sess.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: code}}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Details.Cells[0].Output
	}
	eval("kept = 41")
	res, err := profiles.RunEvaluatePython(ctx, sess, profiles.EvalParams{Code: "kept = 0\nwrite_text('shared.txt', 'from evaluate_python')"}, profiles.EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stderr != "" {
		t.Fatalf("stderr %q", res.Stderr)
	}
	if got := eval("print(kept + 1, open('shared.txt').read(), [k for k in globals() if 'evaluate' in k])"); !strings.Contains(got, "42 from evaluate_python []") {
		t.Errorf("the session's cell printed %q; want its own kept, the file, and no names of the profile", got)
	}
}

func TestParseTools(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"", "eval,python,evaluate_python,code_interpreter", ""},
		{"all", "eval,python,evaluate_python,code_interpreter", ""},
		{"eval, evaluate_python", "eval,evaluate_python", ""},
		{"code_interpreter", "code_interpreter", ""},
		{"python", "python", ""},
		{"eval,bogus", "", `unknown profile "bogus"; use a comma-separated list of eval, python, evaluate_python, code_interpreter`},
		{"pyton", "", `unknown profile "pyton" (did you mean "python"?)`},
		{"run_code", "", `unknown profile "run_code" (run_code is a tool of the code_interpreter profile)`},
		{",", "", "no profile named"},
	} {
		s, err := profiles.ParseTools(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseTools(%q) = %v, want an error holding %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || s.String() != tc.want {
			t.Errorf("ParseTools(%q) = %q, %v; want %q", tc.in, s.String(), err, tc.want)
		}
	}
}
