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

// layerDir makes a package layer holding one module.
func layerDir(t *testing.T, value string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tinypkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tinypkg", "__init__.py"), []byte("VALUE = "+value+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPackageLayerOnTape: the tape names the package layer by its
// contents; a replay with the same packages (elsewhere, with other file
// times) replays, one without a layer or with another is refused with an
// error that names both.
func TestPackageLayerOnTape(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	layer := layerDir(t, "41")
	s, buf := recordingSession(t, sandbox.Options{Packages: layer, Preload: []string{"tinypkg"}})
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "import tinypkg\nprint(tinypkg.VALUE + 1)"}}})
	if err != nil || res.Details.Cells[0].Output != "42\n" {
		t.Fatalf("%v %+v", err, res)
	}
	s.Close(ctx)
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if l := tp.Header.Packages; l == nil || len(l.SHA256) != 64 || l.Files != 1 || strings.Join(l.Preload, ",") != "tinypkg" {
		t.Fatalf("the header's layer: %+v", l)
	}
	for _, tc := range []struct {
		name string
		opts sandbox.Options
		want string
	}{
		{"the same packages elsewhere", sandbox.Options{Packages: layerDir(t, "41"), Preload: []string{"tinypkg"}}, ""},
		{"no layer", sandbox.Options{}, "the tape was recorded with a package layer of 1 file (11 bytes, sha256 "},
		{"another layer", sandbox.Options{Packages: layerDir(t, "40"), Preload: []string{"tinypkg"}}, "give the layer the session was recorded with"},
		{"another preload list", sandbox.Options{Packages: layerDir(t, "41")}, "preloading nothing: give the layer the session was recorded with"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := replay.Run(ctx, tp, replay.Options{Sandbox: tc.opts})
			if tc.want == "" {
				if err != nil || !rep.Identical {
					t.Fatalf("%v %+v", err, rep)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v; want an error containing %q", err, tc.want)
			}
			t.Log(err)
		})
	}
}
