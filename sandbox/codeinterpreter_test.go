package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// RunCode runs code statelessly and answers in the CodeInterpreter shape;
// OnOutput sees each chunk while the code runs.
func ExampleSandbox_RunCode() {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close(ctx)
	exec, err := sb.RunCode(ctx, sandbox.RunCodeRequest{
		Language: "js",
		Code:     "print('hello'); display({answer: 42}); 6 * 7",
		OnOutput: func(ch sandbox.OutputChunk) { fmt.Println("chunk:", ch.Type) },
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, o := range exec.Outputs {
		fmt.Printf("%s %q %v\n", o.Type, o.Text, o.Data)
	}
	fmt.Println("exit code", exec.ExitCode)

	exec, err = sb.RunCode(ctx, sandbox.RunCodeRequest{Language: "js", Code: "throw new TypeError('boom')"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("exit code", exec.ExitCode, exec.Error.Name, exec.Error.Value)
	// Output:
	// chunk: stdout
	// chunk: display
	// chunk: result
	// stdout "hello\n" map[]
	// display "" map[application/json:{"answer":42}]
	// result "" map[text/plain:42]
	// exit code 0
	// exit code 1 TypeError boom
}

// A context keeps its state across runs until it is deleted.
func ExampleManager_RunInContext() {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close(ctx)
	m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close(ctx)
	id, err := m.CreateContext(ctx, "me")
	if err != nil {
		log.Fatal(err)
	}
	for _, code := range []string{"var n = 20", "n += 1; print(n * 2)"} {
		if _, err := m.RunInContext(ctx, "me", id, sandbox.RunCodeRequest{Language: "js", Code: code,
			OnOutput: func(ch sandbox.OutputChunk) { fmt.Print(ch.Text) }}); err != nil {
			log.Fatal(err)
		}
	}
	if err := m.DeleteContext(ctx, "me", id); err != nil {
		log.Fatal(err)
	}
	_, err = m.RunInContext(ctx, "me", id, sandbox.RunCodeRequest{Language: "js", Code: "n"})
	fmt.Println(err)
	// Output:
	// 42
	// sandbox: no such session
}

func TestRunCode(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(ctx) })
	tests := []struct {
		name      string
		req       sandbox.RunCodeRequest
		wantTypes string
		wantExit  int
		wantErr   string // Execution.Error.Name
	}{
		{"joined stdout", sandbox.RunCodeRequest{Language: "js", Code: "print('a'); print('b')"}, "stdout", 0, ""},
		{"stderr", sandbox.RunCodeRequest{Language: "js", Code: "print('x'); undefinedName"}, "stdout,stderr", 1, "ReferenceError"},
		{"timeout", sandbox.RunCodeRequest{Language: "js", Code: "while (true) {}", Timeout: 500 * time.Millisecond}, "", 1, "TimeoutError"},
		{"stateless", sandbox.RunCodeRequest{Language: "js", Code: "typeof n"}, "result", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var chunks []string
			tt.req.TempDir = t.TempDir()
			tt.req.OnOutput = func(ch sandbox.OutputChunk) { chunks = append(chunks, string(ch.Type)) }
			exec, err := sb.RunCode(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, o := range exec.Outputs {
				types = append(types, string(o.Type))
			}
			if tt.wantTypes != "" && strings.Join(types, ",") != tt.wantTypes {
				t.Errorf("types %v, want %s", types, tt.wantTypes)
			}
			if len(chunks) < len(types) {
				t.Errorf("OnOutput saw %v, fewer than the outputs %v", chunks, types)
			}
			if exec.ExitCode != tt.wantExit {
				t.Errorf("exit code %d, want %d", exec.ExitCode, tt.wantExit)
			}
			if got := ""; exec.Error != nil {
				got = exec.Error.Name
				if got != tt.wantErr {
					t.Errorf("error %+v, want %s", exec.Error, tt.wantErr)
				}
			} else if tt.wantErr != "" {
				t.Errorf("no error, want %s", tt.wantErr)
			}
		})
	}
}

func TestRunCodeInvalid(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(ctx) })
	tests := []struct {
		name string
		req  sandbox.RunCodeRequest
		want string
	}{
		{"language", sandbox.RunCodeRequest{Language: "rb", Code: "1"}, "language: "},
		{"empty code", sandbox.RunCodeRequest{Language: "js"}, "code: "},
		{"negative timeout", sandbox.RunCodeRequest{Language: "js", Code: "1", Timeout: -time.Second}, "timeout: "},
		{"long timeout", sandbox.RunCodeRequest{Language: "js", Code: "1", Timeout: time.Hour}, "timeout: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sb.RunCode(ctx, tt.req)
			var re *sandbox.RequestError
			if !errors.As(err, &re) || !strings.HasPrefix(re.Detail(), tt.want) {
				t.Errorf("error %v, want a RequestError starting %q", err, tt.want)
			}
		})
	}
}

func TestContextsIsolatedByOwner(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close(ctx) })
	m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(ctx) })
	id, err := m.CreateContext(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.RunInContext(ctx, "b", id, sandbox.RunCodeRequest{Language: "js", Code: "1"}); !errors.Is(err, sandbox.ErrNoSession) {
		t.Errorf("other owner's run: %v, want ErrNoSession", err)
	}
	if err := m.DeleteContext(ctx, "b", id); !errors.Is(err, sandbox.ErrNoSession) {
		t.Errorf("other owner's delete: %v, want ErrNoSession", err)
	}
	exec, err := m.RunInContext(ctx, "a", id, sandbox.RunCodeRequest{Language: "js", Code: "print(1)"})
	if err != nil || exec.ExitCode != 0 {
		t.Fatalf("owner's run: %+v, %v", exec, err)
	}
}

// TestFreshIn: a session FreshIn makes shares the files of the root it is
// given and none of the interpreter state, has the source's options, and
// names its own root in HOME and PWD.
func TestFreshIn(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	root := t.TempDir()
	sess, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: root, SetEnv: map[string]string{"MARK": "kept"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(ctx)
	py := func(s *sandbox.Session, code string) string {
		t.Helper()
		res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: code}}})
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(res.Details.Cells[0].Output)
	}
	py(sess, "state = 1\n_ = open('shared.txt', 'w').write('from the session')")
	fresh, err := sess.FreshIn(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if got := py(fresh, "import os\nprint('state' in globals(), open('shared.txt').read(), os.environ['MARK'])"); got != "False from the session kept" {
		t.Errorf("a fresh session on the same root printed %q", got)
	}
	fresh.Close(ctx)
	other := t.TempDir()
	elsewhere, err := sess.FreshIn(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	defer elsewhere.Close(ctx)
	if got := py(elsewhere, "import os\nprint(os.environ['HOME'] == os.getcwd(), os.environ['PWD'] == os.getcwd(), os.path.exists('shared.txt'))"); got != "True True False" {
		t.Errorf("HOME, PWD and files on another root: %q", got)
	}
	if got := elsewhere.Root(); got != other {
		t.Errorf("Root() = %q, want %q", got, other)
	}
	sess.Close(ctx)
	if _, err := sess.FreshIn(ctx, root); !errors.Is(err, sandbox.ErrClosed) {
		t.Errorf("FreshIn of a closed session: %v, want ErrClosed", err)
	}
}
