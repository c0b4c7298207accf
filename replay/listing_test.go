package replay_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// TestListingAndInodesReplay: a guest's os.listdir is sorted by name, and
// the listing and the inode numbers it reads (os.stat's st_ino, scandir's
// d_ino) over files the root started with and files it made, each in a
// scrambled order, are the same in the recording and in its replay into
// another folder, where the host's order and numbers differ; JavaScript's
// fs sees the same (its GuestFS is the same kind). On both
// engines: wasmtime's guest reads files through the same GuestFS.
func TestListingAndInodesReplay(t *testing.T) {
	testenv.RequirePython(t)
	for _, engine := range []string{"wazero", "wasmtime"} {
		t.Run(engine, func(t *testing.T) {
			t.Setenv("WASMEVAL_ENGINE", engine) // the recording's sandbox and the replay's
			listingReplay(t)
		})
	}
}

// listingReplay is TestListingAndInodesReplay on the engine
// $WASMEVAL_ENGINE names.
func listingReplay(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for _, name := range []string{"m.txt", "b.txt", "zz.txt", "a.txt", "k9.txt", "Q.txt"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil && strings.Contains(err.Error(), "built without cgo") {
		t.Skip(err) // this build has no wasmtime
	}
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	var buf bytes.Buffer
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: root, Record: &buf})
	if err != nil {
		t.Fatal(err)
	}
	reqs := []sandbox.Request{
		{Cells: []sandbox.Cell{{Language: "py", Code: `import os
for n in ["y", "c", "k10", "_x", "B", "n"]:
    open(n + ".dat", "w").write(n)
    open("sub/" + n, "w").write(n)
names = os.listdir(".")
print(names == sorted(names), names)
print(os.listdir("sub"))`}}},
		{Cells: []sandbox.Cell{{Language: "py", Code: `st = {f: os.stat(f).st_ino for f in sorted(os.listdir("."))}
print(st)
print([(e.name, e.inode()) for e in os.scandir("sub")])
print(os.stat(".").st_ino, os.stat("sub").st_dev, os.lstat("a.txt").st_ino == st["a.txt"])`},
			{Language: "js", Code: `const fs = require("fs");
const names = fs.readdirSync(".");
console.log(JSON.stringify(names) === JSON.stringify([...names].sort()), names.join(" "));
console.log(names.map((n) => fs.statSync(n).ino).join(" "));`}}},
	}
	for i, req := range reqs {
		res, err := s.Eval(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Details.Cells {
			if c.Status != sandbox.StatusComplete {
				t.Fatalf("request %d cell %d: %s: %s", i+1, c.Index, c.Status, c.Output)
			}
			if (i == 0 || c.Language == "js") && !strings.HasPrefix(c.Output, "True ") && !strings.HasPrefix(c.Output, "true ") {
				t.Errorf("request %d cell %d: the listing is not sorted: %s", i+1, c.Index, c.Output)
			}
			t.Logf("request %d cell %d:\n%s", i+1, c.Index, c.Output)
		}
	}
	s.Close(ctx)
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := replay.Run(ctx, tp, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Identical || rep.Requests != len(reqs) {
		for _, d := range rep.Divergences {
			t.Error(d.String())
		}
		t.Fatalf("the listing and inodes did not replay (%d requests)", rep.Requests)
	}
}
