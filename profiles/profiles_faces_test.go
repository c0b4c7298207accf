package profiles_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/profiles/profiletest"
	"github.com/wasmeval/wasmeval/sandbox"
)

// libraryFace is the library's face: a session of a sandbox, and the
// tools run through profiles.Tools with profiles.SessionEnv.
func libraryFace(t *testing.T) profiletest.Face {
	t.Helper()
	testenv.RequirePython(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(ctx) })
	root := t.TempDir()
	sess, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close(ctx) })
	env, contexts := profiles.SessionEnv(sess)
	t.Cleanup(func() { contexts.Close(ctx) })
	return profiletest.Face{
		Tool: func(ctx context.Context, name string, args []byte) ([]byte, string, error) {
			tool, ok := profiles.LookupTool(name)
			if !ok {
				t.Fatalf("no tool %q", name)
			}
			res, _, err := tool.Run(ctx, env, args)
			var pe *profiles.Error
			if errors.As(err, &pe) {
				return nil, pe.Detail(), nil
			}
			if err != nil {
				return nil, "", err
			}
			b, err := json.Marshal(res)
			return b, "", err
		},
		Root: func() string { return root },
	}
}

// TestPythonLibrary runs the python conformance table on the library.
func TestPythonLibrary(t *testing.T) { profiletest.RunPython(t, libraryFace(t)) }

// TestCodeInterpreterLibrary runs the code_interpreter conformance table
// on the library.
func TestCodeInterpreterLibrary(t *testing.T) { profiletest.RunCodeInterpreter(t, libraryFace(t)) }
