package replaytest_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay/replaytest"
	"github.com/wasmeval/wasmeval/tape"
)

const committed = "../../testdata/tapes/mixed.wtape"

func TestRun(t *testing.T) {
	testenv.RequirePython(t)
	replaytest.Run(t, committed)
}

// tampered is the committed tape with request 2's recorded result changed.
func tampered(t *testing.T) string {
	f, err := os.Open(committed)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := tape.Read(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, _ := tape.NewWriter(&buf)
	w.Write(tape.Record{Type: tape.TypeHeader, Header: &tp.Header})
	for _, r := range append(tp.Root, tp.Events...) {
		if r.Type == tape.TypeResult && r.N == 2 {
			r.Result = bytes.ReplaceAll(r.Result, []byte("True"), []byte("False"))
		}
		w.Write(r)
	}
	w.Close()
	path := filepath.Join(t.TempDir(), "bad.wtape")
	os.WriteFile(path, buf.Bytes(), 0o644)
	return path
}

// TestUpdate rewrites a tampered tape's results, after which it replays.
func TestUpdate(t *testing.T) {
	testenv.RequirePython(t)
	path := tampered(t)
	replaytest.RunWith(t, path, replaytest.Options{Update: true})
	replaytest.Run(t, path)
	b, _ := os.ReadFile(path)
	tp, err := tape.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tp.Events {
		if r.Type == tape.TypeResult && r.N == 2 && !strings.Contains(string(r.Result), "True") {
			t.Errorf("request 2's result was not updated: %s", r.Result)
		}
	}
}

// TestFailsOnTampered runs a replay of a tampered tape in a child test
// process and checks that it fails in request 2's subtest with the diff.
func TestFailsOnTampered(t *testing.T) {
	testenv.RequirePython(t)
	if p := os.Getenv("REPLAYTEST_CHILD_TAPE"); p != "" {
		replaytest.Run(t, p)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFailsOnTampered$", "-test.v")
	cmd.Env = append(os.Environ(), "REPLAYTEST_CHILD_TAPE="+tampered(t))
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the replay of a tampered tape passed:\n%s", out)
	}
	for _, want := range []string{"--- PASS: TestFailsOnTampered/request_1", "--- FAIL: TestFailsOnTampered/request_2",
		"bad.wtape: request 2, cell 0: result: the cell's output differs", "- False 442084189", "+ True 442084189"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the child's output lacks %q:\n%s", want, out)
		}
	}
}
