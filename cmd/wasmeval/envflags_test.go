package main

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
)

func TestParseEnvFile(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[string]string
		wantErr    string
	}{
		{name: "plain, quoted, comments", text: "\xef\xbb\xbf# comment\n\nA=1\r\nexport B = two words \nC='single # kept'\nD=\"line\\nnext \\\"q\\\" \\$HOME\" # note\nE=\nF=x # trailing\nG==eq\n",
			want: map[string]string{"A": "1", "B": "two words", "C": "single # kept", "D": "line\nnext \"q\" $HOME", "E": "", "F": "x", "G": "=eq"}},
		{name: "no $ expansion", text: "P=$PATH\n", want: map[string]string{"P": "$PATH"}},
		{name: "no equals", text: "A=1\n\nJUSTANAME\n", wantErr: "--env-file f.env:3: \"JUSTANAME\" has no '='; write NAME=VALUE"},
		{name: "bad name", text: "MY-VAR=1\n", wantErr: `--env-file f.env:1: the variable name "MY-VAR" has '-'`},
		{name: "unclosed quote", text: "A=1\nB=\"open\n", wantErr: "--env-file f.env:2: B: the value opens a \" quote it never closes"},
		{name: "text after quote", text: "B='x' y\n", wantErr: `--env-file f.env:1: B: text after the closing ' quote: "y"`},
		{name: "bad escape", text: `B="\q"` + "\n", wantErr: `--env-file f.env:1: B: \q is not an escape`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseEnvFile(strings.NewReader(tt.text), "f.env")
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %v, want one line starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !maps.Equal(got, tt.want) {
				t.Fatalf("got %q, %v\nwant %q", got, err, tt.want)
			}
		})
	}
}

// TestEnvFlags: --env and --env-file set the guest's environment on eval
// (a JavaScript cell reads it); --env wins over the file; a secret-looking
// name is passed with a note.
func TestEnvFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "vars.env")
	if err := os.WriteFile(file, []byte("FROM_FILE=f\nBOTH=file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cell, _ := json.Marshal(map[string]any{"cells": []map[string]string{{"language": "js",
		"code": "print(process.env.FROM_FILE, process.env.BOTH, process.env.EMPTY === '', process.env.MY_TOKEN, process.env.HOME === process.cwd())"}}})
	code, stdout, stderr := run(t, context.Background(), string(cell)+"\n", "eval", "--cwd", dir,
		"--env-file", file, "--env", "BOTH=flag", "--env", "EMPTY=", "--env", "MY_TOKEN=t0k")
	if code != exitOK {
		t.Fatalf("status %d, stderr %s", code, stderr)
	}
	res := results(t, stdout)
	if len(res) != 1 || summary(res[0]) != "text: f flag true t0k true" {
		t.Errorf("results %v", res)
	}
	if !strings.Contains(stderr, "wasmeval eval: note: --env MY_TOKEN looks like a secret's name; the guest sees it, as asked") {
		t.Errorf("stderr %q; want a note about MY_TOKEN", stderr)
	}
}

// TestEnvFlagsBad: a bad --env or --env-file line is refused with status
// 2 and one line naming it, on every face.
func TestEnvFlagsBad(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.env")
	if err := os.WriteFile(bad, []byte("OK=1\n# c\nNOPE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"eval", "serve", "mcp"} {
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"--env", "NOEQUALS"}, `invalid value "NOEQUALS" for flag -env: "NOEQUALS" has no '='; give NAME=VALUE`},
			{[]string{"--env", "1X=y"}, `"1X" starts with a digit`},
			{[]string{"--env-file", bad}, "--env-file " + bad + `:3: "NOPE" has no '='`},
			{[]string{"--env-file", filepath.Join(dir, "missing.env")}, "--env-file " + filepath.Join(dir, "missing.env") + ": open"},
		} {
			args := []string{cmd}
			switch cmd {
			case "eval":
				args = append(args, "--cwd", dir)
			case "serve":
				args = append(args, "--token", "t", "--addr", "127.0.0.1:0", "--workspace", t.TempDir())
			case "mcp":
				args = append(args, "--workspace", t.TempDir())
			}
			code, _, stderr := run(t, context.Background(), "", append(args, tt.args...)...)
			if code != exitInvalid || !strings.Contains(firstLine(stderr), tt.want) {
				t.Errorf("%s %v: status %d, stderr %q; want %d and a first line containing %q", cmd, tt.args, code, stderr, exitInvalid, tt.want)
			}
		}
	}
}

// FuzzParseEnvFile: no file makes the parser panic, and what it accepts
// is an environment a guest can be given.
func FuzzParseEnvFile(f *testing.F) {
	for _, s := range []string{"A=1\n", "export B='x'\n", "C=\"a\\nb\"\n", "# c\n\nD=\n", "E", "F=\"open", "G='x' y", "1=2", "H=\"\\q\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		env, err := parseEnvFile(strings.NewReader(text), "f")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a two-line error: %q", err)
			}
			return
		}
		for k := range env {
			if err := sandbox.CheckEnvName(k); err != nil {
				t.Fatalf("accepted the name %q: %v", k, err)
			}
		}
	})
}
