package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `wasmeval eval` run from $HOME (the default --cwd is the current
// directory) would give the guest the user's cache, whose compiled code
// the next wasmeval process runs: it is refused before any cell runs, with
// an error that names both folders and the way out, and exit status 2.
func TestEvalFromHomeIsRefused(t *testing.T) {
	bin := wasmevalBinary(t)
	home := t.TempDir()
	cache := filepath.Join(home, ".cache", "wasmeval")
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "HOME" && k != "XDG_CACHE_HOME" {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home)
	for _, tc := range []struct {
		name string
		args []string
		dir  string
	}{
		{"default --cwd", []string{"eval"}, home},
		{"--cwd the cache", []string{"eval", "--cwd", home + "/.cache"}, t.TempDir()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.MkdirAll(cache, 0o755)
			cmd := exec.Command(bin, tc.args...)
			cmd.Dir, cmd.Env = tc.dir, env
			cmd.Stdin = strings.NewReader(`{"cells": [{"language": "js", "code": "1"}]}` + "\n")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitInvalid {
				t.Fatalf("exit: %v, want status %d; stderr: %s", err, exitInvalid, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Fatalf("a cell ran: %s", stdout.String())
			}
			for _, want := range []string{cache, "--cwd", "XDG_CACHE_HOME"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr does not say %q: %s", want, stderr.String())
				}
			}
		})
	}
}
