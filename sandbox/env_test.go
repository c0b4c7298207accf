package sandbox_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/sandbox"
)

// TestDefaultEnv: the default environment is what the README says: HOME
// and PWD, PATH as runtimes.GuestPATH (never the host's, whose folders
// are host configuration), and the host's LANG, TZ and every LC_
// variable, never a secret-looking name, in both languages.
func TestDefaultEnv(t *testing.T) {
	t.Setenv("PATH", "/opt/host-secret/bin:"+os.Getenv("PATH"))
	for k, v := range map[string]string{
		"LC_TIME": "C.UTF-8", "LC_MONETARY": "C", "LANG": "C.UTF-8", "TZ": "UTC",
		"LC_API_TOKEN": "lc-canary", "WASMEVAL_SEED_SECRET": "canary", "OPENAI_API_KEY": "sk-canary", "EDITOR": "vi",
	} {
		t.Setenv(k, v)
	}
	code := map[string]string{
		"py": `import os; print(' '.join(sorted(os.environ)), os.environ['PATH'])`,
		"js": `print(Object.keys(process.env).sort().join(' '), process.env.PATH)`,
	}
	sb, err := sandbox.New(context.Background(), sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(context.Background())
	for _, lang := range []string{"py", "js"} {
		t.Run(lang, func(t *testing.T) {
			s, err := sb.NewSession(context.Background(), sandbox.SessionOptions{Root: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			got, _ := evalLang(t, s, lang, code[lang])
			names := strings.Fields(got)
			if len(names) == 0 || names[len(names)-1] != runtimes.GuestPATH {
				t.Errorf("the guest's PATH is not %s: %q", runtimes.GuestPATH, got)
			} else {
				names = names[:len(names)-1]
			}
			want := map[string]bool{"HOME": true, "PWD": true, "PATH": true, "LANG": true, "TZ": true, "LC_TIME": true, "LC_MONETARY": true}
			for _, n := range names {
				if !want[n] && !strings.HasPrefix(n, "LC_") {
					t.Errorf("the guest has %s, which the default environment does not copy", n)
				}
				if n == "LC_API_TOKEN" {
					t.Errorf("the guest has the secret-looking LC_API_TOKEN")
				}
				delete(want, n)
			}
			if len(want) > 0 {
				t.Errorf("the guest lacks %v; it has %q", want, got)
			}
		})
	}
}

// TestSetEnv: SessionOptions.SetEnv adds to the default environment (or
// replaces a variable of it), secret-looking names included: the embedder
// asked for them.
func TestSetEnv(t *testing.T) {
	sb, err := sandbox.New(context.Background(), sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(context.Background())
	root := t.TempDir()
	s, err := sb.NewSession(context.Background(), sandbox.SessionOptions{Root: root,
		SetEnv: map[string]string{"FOO": "bar baz", "TZ": "Europe/Paris", "MY_API_KEY": "given"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	code := map[string]string{
		"py": `import os; print(os.environ['FOO'], os.environ['TZ'], os.environ['MY_API_KEY'], os.environ['HOME'] == os.getcwd())`,
		"js": `print(process.env.FOO, process.env.TZ, process.env.MY_API_KEY, process.env.HOME === process.cwd())`,
	}
	want := map[string]string{"py": "bar baz Europe/Paris given True\n", "js": "bar baz Europe/Paris given true\n"}
	for _, lang := range []string{"py", "js"} {
		if got, _ := evalLang(t, s, lang, code[lang]); got != want[lang] {
			t.Errorf("%s: %q, want %q", lang, got, want[lang])
		}
	}
}

func TestCheckEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"ok", map[string]string{"A_1": "x=y", "b": ""}, ""},
		{"empty name", map[string]string{"": "x"}, "the variable's name is empty"},
		{"digit first", map[string]string{"1A": "x"}, `the variable name "1A" starts with a digit`},
		{"equals in the name", map[string]string{"A=B": "x"}, `the variable name "A=B" has '='`},
		{"NUL in the value", map[string]string{"A": "x\x00y"}, "the value of A holds a NUL byte"},
		{"too large", map[string]string{"A": strings.Repeat("x", sandbox.MaxEnvBytes)}, "give at most 1 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := sandbox.CheckEnv(tt.env)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestSecretEnvName(t *testing.T) {
	for _, n := range []string{"OPENAI_API_KEY", "github_token", "AWS_REGION", "DB_PASSWORD", "MY_SECRET", "WASMEVAL_TOKENS", "TOKEN", "SSH_AUTH_SOCK", "GOOGLE_APPLICATION_CREDENTIALS"} {
		if !sandbox.SecretEnvName(n) {
			t.Errorf("%s is not taken for a secret's name", n)
		}
	}
	for _, n := range []string{"PATH", "LANG", "LC_ALL", "TZ", "HOME", "TOKENIZER", "KEYBOARD"} {
		if sandbox.SecretEnvName(n) {
			t.Errorf("%s is taken for a secret's name", n)
		}
	}
}

// TestManagerCreateWithEnv: a managed session gets the template's SetEnv
// with the creation's env over it; a bad env is refused before anything
// is made.
func TestManagerCreateWithEnv(t *testing.T) {
	sb, err := sandbox.New(context.Background(), sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(context.Background())
	mgr, err := sandbox.NewManager(sb, sandbox.ManagerOptions{Workspace: t.TempDir(),
		Session: sandbox.SessionOptions{SetEnv: map[string]string{"A": "template", "B": "template"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close(context.Background())
	id, err := mgr.CreateWithEnv(context.Background(), "o", map[string]string{"B": "mine", "C": "mine"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := mgr.Eval(context.Background(), "o", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: `print(process.env.A, process.env.B, process.env.C)`}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Details.Cells[0].Output; got != "template mine mine\n" {
		t.Errorf("%q", got)
	}
	_, err = mgr.CreateWithEnv(context.Background(), "o", map[string]string{"A=B": "x"})
	if !errors.Is(err, sandbox.ErrBadEnv) || !strings.Contains(err.Error(), `"A=B" has '='`) {
		t.Errorf("bad env: %v", err)
	}
	if n := mgr.Len(); n != 1 {
		t.Errorf("%d sessions after a refused one; want 1", n)
	}
	// A fork keeps the source's own variables, with HOME at its own root.
	src, err := mgr.CreateWithEnv(context.Background(), "o", map[string]string{"C": "forked"})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := mgr.Fork(context.Background(), "o", src)
	if err != nil {
		t.Fatal(err)
	}
	res, err = mgr.Eval(context.Background(), "o", cp, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: `print(process.env.A, process.env.C, process.env.HOME === process.cwd(), process.cwd().endsWith('/` + cp + `'))`}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Details.Cells[0].Output; got != "template forked true true\n" {
		t.Errorf("the fork sees %q", got)
	}
}
