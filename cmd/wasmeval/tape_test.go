package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/tape"
)

const tapeRequests = `{"cells":[{"language":"py","code":"import time, random, uuid\nprint(time.time(), random.random(), uuid.uuid4(), list({'a','b','c','d'}))\nopen('note.txt','w').write('kept')"},{"language":"js","code":"console.log(Date.now(), Math.random(), crypto.randomUUID())"}]}
{"cells":[{"language":"py","code":"print(read('note.txt'), open('seed.txt').read())"}]}
`

// evalIn runs eval with args in a fresh root holding seed.txt.
func evalIn(t *testing.T, args ...string) (string, string) {
	t.Helper()
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "seed.txt"), []byte("from the root"), 0o644)
	code, stdout, stderr := run(t, context.Background(), tapeRequests, append([]string{"eval", "--cwd", root}, args...)...)
	if code != exitOK {
		t.Fatalf("eval %v: exit %d: %s\n%s", args, code, stderr, stdout)
	}
	return stdout, stderr
}

func TestEvalDeterministic(t *testing.T) {
	testenv.RequirePython(t)
	a, _ := evalIn(t, "--deterministic")
	b, _ := evalIn(t, "--deterministic")
	if a != b {
		t.Errorf("two --deterministic runs differ:\n%s\n%s", a, b)
	}
	if !strings.Contains(a, `1735689600.001`) {
		t.Errorf("the virtual clock does not start at 2025-01-01: %s", a)
	}
	c, _ := evalIn(t)
	if d, _ := evalIn(t); c == d {
		t.Errorf("two ordinary runs give the same bytes:\n%s", c)
	}
}

func TestEvalRecordReplay(t *testing.T) {
	testenv.RequirePython(t)
	path := filepath.Join(t.TempDir(), "s.wtape")
	evalIn(t, "--record", path)

	code, stdout, stderr := run(t, context.Background(), "", "replay", path)
	if code != exitOK || stdout != "replayed 2 requests: identical\n" {
		t.Fatalf("replay: exit %d\n%s%s", code, stdout, stderr)
	}
	cwd := filepath.Join(t.TempDir(), "again")
	code, stdout, _ = run(t, context.Background(), "", "replay", "--json", "--cwd", cwd, path)
	var rep struct {
		Requests    int
		Identical   bool
		Divergences []any
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitOK || !rep.Identical || rep.Requests != 2 || rep.Divergences == nil {
		t.Fatalf("replay --json: exit %d, %v: %s", code, err, stdout)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "note.txt")); err != nil || string(b) != "kept" {
		t.Errorf("--cwd keeps the replayed root: %q, %v", b, err)
	}

	// A tape whose recorded output was changed diverges, and says where.
	f, _ := os.Open(path)
	tp, err := tape.Read(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.wtape")
	out, _ := os.Create(bad)
	w, _ := tape.NewWriter(out)
	w.Write(tape.Record{Type: tape.TypeHeader, Header: &tp.Header})
	for _, r := range append(tp.Root, tp.Events...) {
		if r.Type == tape.TypeResult && r.N == 2 {
			r.Result = bytes.ReplaceAll(r.Result, []byte("kept"), []byte("lost"))
		}
		w.Write(r)
	}
	w.Close()
	out.Close()
	code, stdout, _ = run(t, context.Background(), "", "replay", bad)
	if code != exitCellFailed || !strings.Contains(stdout, "diverged (1 divergence); the first:\nrequest 2, cell 0: result: the cell's output differs\n--- recorded\n+++ replayed\n") ||
		!strings.Contains(stdout, "-lost from the root\n+kept from the root\n") {
		t.Errorf("tampered replay: exit %d\n%s", code, stdout)
	}
}

func TestReplayBadInput(t *testing.T) {
	notTape := filepath.Join(t.TempDir(), "x.wtape")
	os.WriteFile(notTape, []byte("hello\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no tape", []string{"replay"}, "give exactly one tape file (got 0 arguments)"},
		{"missing", []string{"replay", "/nonexistent/t.wtape"}, "no such file"},
		{"not a tape", []string{"replay", notTape}, "x.wtape: tape:"},
		{"bad packages", []string{"replay", "--packages", "/nonexistent/pkgs", notTape}, "--packages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, context.Background(), "", tc.args...)
			if code != exitInvalid || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
	if code, stdout, _ := run(t, context.Background(), "", "replay", "-h"); code != exitOK || !strings.Contains(stdout, "Usage: wasmeval replay") {
		t.Errorf("replay -h: %d %s", code, stdout)
	}
}

func TestReplayUpdateAndTapeShow(t *testing.T) {
	testenv.RequirePython(t)
	path := filepath.Join(t.TempDir(), "s.wtape")
	evalIn(t, "--record", path)
	code, stdout, stderr := run(t, context.Background(), "", "tape", "show", path)
	for _, want := range []string{fmt.Sprintf("tape format %d, recorded by wasmeval ", tape.FormatVersion), "file seed.txt (13 bytes)", "=== request 1\n--- cell 0 (py)\n  > import time, random, uuid\n",
		"call read (the cell's call 1, answer taken in its host-call wait 1) {\"op\":\"read\",\"path\":\"note.txt\"", "    -> {\"result\":\"kept\"}\n", "=== result 2\n--- cell 0: complete\n  | kept from the root\n", "random bytes by the Python instance)", "random bytes by the JavaScript instance)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("tape show lacks %q:\n%s", want, stdout)
		}
	}
	if code != exitOK {
		t.Fatalf("tape show: exit %d: %s", code, stderr)
	}

	// A tape whose result was changed is put right by --update.
	f, _ := os.Open(path)
	tp, _ := tape.Read(f)
	f.Close()
	out, _ := os.Create(path)
	w, _ := tape.NewWriter(out)
	w.Write(tape.Record{Type: tape.TypeHeader, Header: &tp.Header})
	for _, r := range append(tp.Root, tp.Events...) {
		if r.Type == tape.TypeResult && r.N == 2 {
			r.Result = bytes.ReplaceAll(r.Result, []byte("kept"), []byte("lost"))
		}
		w.Write(r)
	}
	w.Close()
	out.Close()
	code, stdout, _ = run(t, context.Background(), "", "replay", "--update", path)
	if code != exitOK || !strings.Contains(stdout, "replayed 2 requests: 1 divergence; updated the results in") {
		t.Fatalf("replay --update: exit %d: %s", code, stdout)
	}
	if code, stdout, _ = run(t, context.Background(), "", "replay", path); code != exitOK {
		t.Errorf("the updated tape does not replay: %s", stdout)
	}
	if code, _, stderr = run(t, context.Background(), "", "tape", "list", path); code != exitInvalid || !strings.Contains(stderr, "give 'show TAPE'") {
		t.Errorf("tape list: %d %s", code, stderr)
	}
}

// serve and mcp hand --record-dir to the manager, which checks it.
func TestManagerRecordDirFlag(t *testing.T) {
	for _, args := range [][]string{
		{"mcp", "--deterministic", "--record-dir", "/nonexistent/tapes"},
		{"serve", "--token", strings.Repeat("t", 32), "--deterministic", "--record-dir", "/nonexistent/tapes", "--addr", "127.0.0.1:0"},
	} {
		code, _, stderr := run(t, context.Background(), "", args...)
		if code == exitOK || !strings.Contains(stderr, "RecordDir") || !strings.Contains(stderr, "give an existing folder for the sessions' tapes") {
			t.Errorf("%s: exit %d, %s", args[0], code, stderr)
		}
	}
	for _, cmd := range []string{"mcp", "serve"} {
		if _, stdout, _ := run(t, context.Background(), "", cmd, "-h"); !strings.Contains(stdout, "--record-dir DIR") {
			t.Errorf("%s -h does not name --record-dir", cmd)
		}
	}
}
