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

// TestContextsCap: a Contexts holds at most MaxContexts contexts; one more
// is refused saying to delete one, and deleting one makes room.
func TestContextsCap(t *testing.T) {
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
	env, contexts := profiles.SessionEnv(sess)
	defer contexts.Close(ctx)
	var ids []string
	for range profiles.MaxContexts {
		c, err := profiles.CreateContext(ctx, env, profiles.CodeContextParams{Language: "javascript"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ContextID)
	}
	_, err = profiles.CreateContext(ctx, env, profiles.CodeContextParams{Language: "javascript"})
	if d := profiles.Detail(err); !strings.Contains(d, "16 code contexts are open") || !strings.Contains(d, "deleteContext") {
		t.Errorf("context %d: %v", profiles.MaxContexts+1, err)
	}
	if _, err := profiles.DeleteContext(ctx, env, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := profiles.CreateContext(ctx, env, profiles.CodeContextParams{Language: "javascript"}); err != nil {
		t.Errorf("after a delete: %v", err)
	}
}
