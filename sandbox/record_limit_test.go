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
	"github.com/wasmeval/wasmeval/tape"
)

// TestRecordLimit: a recorded session's tape stops at its limit
// (SessionOptions.RecordLimitBytes, serve's --record-limit): a cell that
// reads 4 MiB of random bytes (recorded as read) does not make a 4 MiB
// tape of a 256 KiB limit. The cell's result says the recording stopped,
// once; the session goes on; the tape on disk is no longer than the limit,
// reads whole and replays up to where it was cut, which the replay names
// (issue 9: a guest filled the disk that holds the tapes).
func TestRecordLimit(t *testing.T) {
	for _, lang := range []string{"py", "js"} {
		t.Run(lang, func(t *testing.T) {
			if lang == "py" {
				testenv.RequirePython(t)
			}
			ctx := context.Background()
			sb, err := sandbox.New(ctx, sandbox.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close(ctx)
			dir := t.TempDir()
			const limit = 256 << 10
			m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{RecordDir: dir, Session: sandbox.SessionOptions{RecordLimitBytes: limit}})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close(ctx)
			id, err := m.Create(ctx, "owner")
			if err != nil {
				t.Fatal(err)
			}
			eval := func(code string) *sandbox.Result {
				t.Helper()
				res, err := m.Eval(ctx, "owner", id, sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: code}}})
				if err != nil {
					t.Fatal(err)
				}
				if res.Details.IsError {
					t.Fatalf("%s: %+v", code, res.Details.Cells)
				}
				return res
			}
			noted := func(res *sandbox.Result) int {
				n := 0
				for _, e := range res.Details.StatusEvents {
					if e.Kind == "recording" && strings.Contains(e.Message, "recording stopped: this session's tape reached its limit of 262144 bytes") {
						n++
					}
				}
				return n
			}
			small := map[string]string{"py": "x = 1", "js": "var x = 1"}[lang]
			if n := noted(eval(small)); n != 0 {
				t.Fatalf("a small cell's result says the recording stopped")
			}
			bomb := map[string]string{
				"py": "import os\nfor _ in range(64): os.urandom(64 << 10)\nx = 2",
				"js": "for (let i = 0; i < 64; i++) crypto.getRandomValues(new Uint8Array(64 << 10)); x = 2",
			}[lang]
			res := eval(bomb)
			// A deferred record past the limit may be found by the next
			// write: the note comes with this result or the next.
			got := noted(res)
			res = eval("x")
			got += noted(res)
			if got != 1 {
				t.Fatalf("the results say the recording stopped %d times; want once", got)
			}
			if text := res.Content[0].Text; !strings.Contains(text, "2") {
				t.Fatalf("after the tape's limit, x = %q; want 2: the session goes on", text)
			}
			if n := noted(eval("x")); n != 0 {
				t.Fatalf("the note came again")
			}
			if err := m.Delete(ctx, "owner", id); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, id+".wtape")
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() > limit+64 {
				t.Fatalf("the tape is %d bytes; its limit is %d", fi.Size(), limit)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := tape.Read(f); err != nil {
				t.Fatalf("the tape cut at its limit does not read: %v", err)
			}
			rep, err := replay.File(ctx, path, replay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			cut := false
			for _, d := range rep.Divergences {
				cut = cut || d.Request == 2 && strings.Contains(d.Message, "the tape ends before this request's result (was the recording cut short?)")
			}
			if rep.Identical || rep.Requests != 2 || !cut {
				t.Fatalf("the replay of a tape cut at its limit: %+v; want a divergence naming the cut", rep)
			}
		})
	}
}
