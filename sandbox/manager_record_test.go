package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
)

func TestManagerRecordDir(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	if _, err := sandbox.NewManager(sb, sandbox.ManagerOptions{RecordDir: "/nonexistent/tapes"}); err == nil || !strings.Contains(err.Error(), "give an existing folder") {
		t.Fatalf("a missing RecordDir: %v", err)
	}
	dir := t.TempDir()
	m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{RecordDir: dir, Session: sandbox.SessionOptions{Deterministic: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	var ids []string
	for range 2 {
		id, err := m.Create(ctx, "owner")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		if _, err := m.Eval(ctx, "owner", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "console.log(Date.now(), Math.random())"}}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		if err := m.Delete(ctx, "owner", id); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, id+".wtape")
		rep, err := replay.File(ctx, path, replay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Identical || rep.Requests != 1 || !rep.Header.Options.Deterministic {
			t.Errorf("%s: %+v", path, rep)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d tapes in the record dir; want 2", len(ents))
	}
}

// TestManagerForkRecorded: a fork of a recorded session (serve's fork
// endpoint) gets a tape that starts with its source's, read back from the
// source's file, and replays on its own; so does the source's.
func TestManagerForkRecorded(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	dir := t.TempDir()
	m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{RecordDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	id, err := m.Create(ctx, "owner")
	if err != nil {
		t.Fatal(err)
	}
	eval := func(id, code string) string {
		t.Helper()
		res, err := m.Eval(ctx, "owner", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: code}}})
		if err != nil || res.Details.Cells[0].Status != sandbox.StatusComplete {
			t.Fatalf("%v %+v", err, res)
		}
		return res.Details.Cells[0].Output
	}
	eval(id, "import random, time\nx = random.random()\nopen('x.txt', 'w').write(str(x))")
	fid, err := m.Fork(ctx, "owner", id)
	if err != nil {
		t.Fatal(err)
	}
	if out := eval(fid, "print(x == float(open('x.txt').read()), random.random(), time.time())"); !strings.HasPrefix(out, "True ") {
		t.Fatalf("the fork: %q", out)
	}
	live, err := m.Tape("owner", fid)
	if err != nil || len(live) == 0 {
		t.Fatalf("the fork's tape so far: %v", err)
	}
	for _, i := range []string{fid, id} {
		if err := m.Delete(ctx, "owner", i); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		id       string
		requests int
	}{{id, 1}, {fid, 2}} {
		rep, err := replay.File(ctx, filepath.Join(dir, tc.id+".wtape"), replay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Identical || rep.Requests != tc.requests {
			for _, d := range rep.Divergences {
				t.Error(d.String())
			}
			t.Errorf("%s: %d requests, identical %v; want %d", tc.id, rep.Requests, rep.Identical, tc.requests)
		}
	}
}
