package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/wasm/python"
)

// TestVersionNamesArtifact: without any stamping (go build, go install),
// version still names the commit line and the artifact the binary carries,
// as the SHA-256 of its embedded bytes.
func TestVersionNamesArtifact(t *testing.T) {
	testenv.RequirePython(t)
	code, stdout, stderr := run(t, context.Background(), "", "--version")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"wasmeval ", "\ncommit ", "\npython inputs " + python.Inputs() + "\n", "\npython artifact " + python.Sum() + "\n", "\ngo1."} {
		if !strings.Contains(stdout, want) {
			t.Errorf("version output %q lacks %q", stdout, want)
		}
	}
	if !regexp.MustCompile(`python artifact [0-9a-f]{16}\n`).MatchString(stdout) {
		t.Errorf("version output %q: want the artifact's 16-hex-digit SHA-256", stdout)
	}
}

// TestVersionStamped builds the command as the Makefile does, with VCS
// stamping off, and checks the -ldflags names the Makefile uses still land.
func TestVersionStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "wasmeval")
	ldflags := "-X main.stampVersion=v9.8.7 -X main.stampCommit=0123456789abcdef-dirty"
	if out, err := exec.Command("go", "build", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("wasmeval version: %v", err)
	}
	for _, want := range []string{"wasmeval v9.8.7\n", "commit 0123456789abcdef-dirty\n", "python inputs " + python.Inputs() + "\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("version output %q lacks %q", out, want)
		}
	}
}

// TestBadFlagIsOneLine: a wrong flag gets one line saying what was wrong
// and where the help is, on every command, not the whole usage.
func TestBadFlagIsOneLine(t *testing.T) {
	for _, tc := range []struct{ cmd, flag, want string }{
		{"eval", "--nope", "wasmeval eval: flag provided but not defined: -nope\n"},
		{"serve", "--max-sessions=x", "wasmeval serve: invalid value \"x\" for flag -max-sessions"},
		{"mcp", "--x", "wasmeval mcp: flag provided but not defined: -x\n"},
		{"eval", "stray", "wasmeval eval: unexpected argument \"stray\""},
		{"mcp", "stray", "wasmeval mcp: unexpected argument \"stray\""},
	} {
		t.Run(tc.cmd+tc.flag, func(t *testing.T) {
			withFakeSession(t)
			code, stdout, stderr := run(t, context.Background(), "", tc.cmd, tc.flag)
			if code != exitInvalid {
				t.Errorf("exit %d, want %d", code, exitInvalid)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if !strings.HasPrefix(stderr, tc.want) {
				t.Errorf("stderr = %q, want it to start with %q", stderr, tc.want)
			}
			if lines := strings.Count(stderr, "\n"); lines != 2 || !strings.HasSuffix(stderr, "run 'wasmeval "+tc.cmd+" -h' for the flags\n") {
				t.Errorf("stderr = %q: want 2 lines, the second pointing at 'wasmeval %s -h'", stderr, tc.cmd)
			}
		})
	}
}

// TestEvalMkdir: --mkdir creates a missing --cwd, parents included.
func TestEvalMkdir(t *testing.T) {
	withFakeSession(t)
	dir := filepath.Join(t.TempDir(), "a", "b")
	if code, _, stderr := run(t, context.Background(), "", "eval", "--cwd", dir, "--mkdir"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Errorf("--mkdir did not create %s: %v", dir, err)
	}
}
