package tape_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/tape"
)

// TestWriteRootRefusesOutwardLinks: a root holding a link that the host
// could not follow and stay in the root (one the host or an operator put
// there: the guest cannot make it) is not recorded, since RestoreRoot
// would refuse the tape at replay. WriteRoot fails before it writes any
// entry, naming every such link; a root whose links all lead down, or up
// and down again inside the root as npm's node_modules/.bin ones do
// (rootlink.Safe), is recorded and rebuilt as it was.
func TestWriteRootRefusesOutwardLinks(t *testing.T) {
	outside := t.TempDir()
	for _, tc := range []struct {
		name  string
		links map[string]string // path in the root -> target
		bad   []string          // what the error names; none: recorded
	}{
		{"down", map[string]string{"l": "d/a.txt", "d/m": "a.txt", "dangling": "not/there"}, nil},
		{"absolute", map[string]string{"out": outside}, []string{`out -> "` + outside + `"`}},
		{"up", map[string]string{"d/up": "../../etc"}, []string{`d/up -> "../../etc"`}},
		{"up and down again, as npm's .bin", map[string]string{"d/l": "../d/a.txt", "d/m": "../e"}, nil},
		{"down and up again", map[string]string{"e": "d/../d/a.txt"}, []string{`e -> "d/../d/a.txt"`}},
		{"up to its own folder", map[string]string{"d/l": "../d"}, []string{`d/l -> "../d"`}},
		{"up through a link", map[string]string{"g": "d", "g_up": "g/.."}, []string{`g_up -> "g/.."`}},
		{"dot", map[string]string{"dot": "./d"}, []string{`dot -> "./d"`}},
		{"empty part", map[string]string{"e": "d//a.txt"}, []string{`e -> "d//a.txt"`}},
		{"several, with good ones", map[string]string{"ok": "d", "a_up": "..", "d/z_abs": "/etc/passwd"},
			[]string{`a_up -> ".."`, `d/z_abs -> "/etc/passwd"`, "holds 2 symbolic link(s)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			os.Mkdir(filepath.Join(src, "d"), 0o755)
			os.WriteFile(filepath.Join(src, "d", "a.txt"), []byte("a"), 0o644)
			for p, target := range tc.links {
				if err := os.Symlink(target, filepath.Join(src, p)); err != nil {
					t.Fatal(err)
				}
			}
			tp, err := writeRoot(t, src)
			if tc.bad == nil {
				if err != nil {
					t.Fatal(err)
				}
				dst := t.TempDir()
				if err := tape.RestoreRoot(dst, tp.Root, ""); err != nil {
					t.Fatal(err)
				}
				for p, target := range tc.links {
					if got, err := os.Readlink(filepath.Join(dst, p)); err != nil || got != target {
						t.Errorf("%s: %q, %v; want a link to %q", p, got, err, target)
					}
				}
				return
			}
			if err == nil {
				t.Fatalf("recorded; want the links %v refused", tc.bad)
			}
			for _, want := range append(tc.bad, "root is not recorded", "plain names") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q: %v", want, err)
				}
			}
			if strings.Contains(err.Error(), "ok ->") {
				t.Errorf("the error names a link that leads down: %v", err)
			}
			if len(tp.Root) != 0 {
				t.Errorf("a refused root left %d entries on the tape", len(tp.Root))
			}
		})
	}
}

// TestWriteRootNamesTenLinks: a root with many outward links gets an
// error of bounded size that still counts them all.
func TestWriteRootNamesTenLinks(t *testing.T) {
	src := t.TempDir()
	for i := range 25 {
		os.Symlink("../x", filepath.Join(src, fmt.Sprintf("up%02d", i)))
	}
	_, err := writeRoot(t, src)
	if err == nil {
		t.Fatal("recorded a root of outward links")
	}
	for _, want := range []string{"holds 25 symbolic link(s)", `up09 -> "../x"`, "and 15 more"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "up10") {
		t.Errorf("the error names more than ten links: %v", err)
	}
}

// writeRoot records src after a header and reads the tape back.
func writeRoot(t *testing.T, src string) (*tape.Tape, error) {
	t.Helper()
	var buf bytes.Buffer
	w, err := tape.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(header())
	werr := tape.WriteRoot(w, src, 0)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tp, err := tape.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return tp, werr
}
