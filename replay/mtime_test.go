package replay_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// mtimeCells read the times of files the root started with, of files and
// folders the guests and the helpers changed, in both languages.
var mtimeCells = []sandbox.Request{
	{Cells: []sandbox.Cell{
		{Language: "py", Code: `import os, time
def times(p):
    st = os.stat(p)
    return (st.st_mtime_ns, st.st_atime_ns, st.st_ctime_ns)
print("input", times("input.txt"), os.path.getmtime("data"), times("."))
time.time()
open("py.txt", "w").write("one")
print("py.txt", times("py.txt"), times("."))
open("input.txt").read()
print("read", times("input.txt"))
os.mkdir("made")
print("made", times("made"), times("."))`},
		{Language: "js", Code: `const fs = require("fs");
Date.now();
fs.writeFileSync("js.txt", "two");
const t = (p) => { const s = fs.statSync(p); return [s.mtimeMs, s.atimeMs, s.ctimeMs].join(" ") };
console.log("js.txt", t("js.txt"), t("py.txt"), t("input.txt"));
await write("helper.txt", "three");
console.log("helper.txt", t("helper.txt"));`},
	}},
	{Cells: []sandbox.Cell{
		{Language: "py", Code: `import os
with open("py.txt", "a") as f:
    f.write("more")
os.rename("js.txt", "made/js.txt")
os.remove("helper.txt")
print(times("py.txt"), times("made"), times("made/js.txt"), times("."))`},
	}},
}

// mtimeRoot makes a root whose files have times of their own.
func mtimeRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "input.txt"), []byte("in\n"), 0o644)
	os.Mkdir(filepath.Join(root, "data"), 0o755)
	old := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	os.Chtimes(filepath.Join(root, "data"), old, old)
	os.Chtimes(filepath.Join(root, "input.txt"), old.Add(time.Hour), old.Add(time.Hour))
	os.Chtimes(root, old, old)
	return root
}

// TestFileTimesReplay: the file times a guest reads replay from the tape:
// the rebuilt root gets the recorded times, and what the session changes
// is stamped with its clock, which the replay feeds the same.
func TestFileTimesReplay(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	var buf bytes.Buffer
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: mtimeRoot(t), Record: &buf})
	if err != nil {
		t.Fatal(err)
	}
	for i, req := range mtimeCells {
		res, err := s.Eval(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Details.Cells {
			if c.Status != sandbox.StatusComplete {
				t.Fatalf("request %d cell %d: %s: %s", i+1, c.Index, c.Status, c.Output)
			}
			t.Logf("request %d cell %d:\n%s", i+1, c.Index, c.Output)
		}
	}
	s.Close(ctx)
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if tp.Header.Start == 0 || tp.Header.RootMTime == 0 || tp.Root[0].MTime == nil {
		t.Errorf("the tape's times: start %d, root %d, %+v", tp.Header.Start, tp.Header.RootMTime, tp.Root[0])
	}
	time.Sleep(20 * time.Millisecond) // the replay's real clock is elsewhere
	rep, err := replay.Run(ctx, tp, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Identical {
		for _, d := range rep.Divergences {
			t.Error(d.String())
		}
		t.Fatal("the file times did not replay")
	}
}

// TestFileTimesDeterministic: in two fresh deterministic sessions on roots
// with the same contents and times, the guests read the same file times,
// which are the virtual clock's.
func TestFileTimesDeterministic(t *testing.T) {
	testenv.RequirePython(t)
	run := func() string {
		ctx := context.Background()
		sb, err := sandbox.New(ctx, sandbox.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close(ctx)
		s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: mtimeRoot(t), Env: map[string]string{}, Deterministic: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(ctx)
		var out strings.Builder
		for _, req := range mtimeCells {
			res, err := s.Eval(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range res.Details.Cells {
				if c.Status != sandbox.StatusComplete {
					t.Fatalf("cell %d: %s: %s", c.Index, c.Status, c.Output)
				}
				out.WriteString(c.Output)
			}
		}
		return out.String()
	}
	a := run()
	time.Sleep(20 * time.Millisecond)
	if b := run(); a != b {
		t.Errorf("two deterministic runs read other file times:\n%s\n---\n%s", a, b)
	}
	// 2025-01-01 (the virtual clock's epoch) and 2024-05-06 (the input's).
	if !strings.Contains(a, "py.txt (17356896") || !strings.Contains(a, "input (1714982889123456789, 1714982889123456789, 1714982889123456789) 1714979289.1234567 (1714979289123456789,") {
		t.Errorf("the times are not the virtual clock's and the root's:\n%s", a)
	}
}
