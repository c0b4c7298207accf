package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
)

var update = flag.Bool("update", false, "record testdata/tapes/mixed.wtape again")

const committedTape = "../testdata/tapes/mixed.wtape"

// fixedHost answers as a recorded tool and model might.
var fixedHost = hostcalls.HostFuncs{
	ToolFunc: func(_ context.Context, r hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
		return hostcalls.ToolResponse{Result: json.RawMessage(`{"city":` + string(r.Args) + `,"temp":21,"call":1}`)}, nil
	},
	LLMFunc: func(_ context.Context, r hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
		return hostcalls.LLMResponse{Text: "a model's answer to " + r.Prompt}, nil
	},
}

// TestCommittedTape replays a tape recorded once and committed, so every
// machine that runs the tests replays a tape made on another (-update
// records it again).
func TestCommittedTape(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	if *update {
		root := t.TempDir()
		os.WriteFile(filepath.Join(root, "input.txt"), []byte("from the root\n"), 0o644)
		sb, err := sandbox.New(ctx, sandbox.Options{Host: fixedHost})
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close(ctx)
		var buf bytes.Buffer
		s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: root, Record: &buf, Env: map[string]string{"HOME": root, "LANG": "C.UTF-8"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, req := range sessionRequests {
			if _, err := s.Eval(ctx, req); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(committedTape), 0o755)
		if err := os.WriteFile(committedTape, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := replay.File(ctx, committedTape, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Identical || rep.Requests != len(sessionRequests) {
		for _, d := range rep.Divergences {
			t.Error(d.String())
		}
		t.Fatalf("the committed tape (recorded by wasmeval %s, Python %s) replayed %d requests, not identical", rep.Header.Wasmeval, rep.Header.PythonArtifact, rep.Requests)
	}
}
