package tape_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/tape"
)

// TestRestoreRootLinks: RestoreRoot makes a root's links only when the
// host can follow them and stay in the root (rootlink.Safe): down from
// their own folder, or up at most to the root and then down, as npm's
// node_modules/.bin links. One that leads out (absolute, climbing, a ".."
// after a name, which is taken from wherever that name leads when
// followed) is harmless to the guest but not to an operator's tools in a
// kept --cwd: the whole tape is refused, naming the entry, and nothing is
// made. So is an entry below a link entry, which would be made elsewhere
// than its path says.
func TestRestoreRootLinks(t *testing.T) {
	dir := func(p string) tape.Record { return tape.Record{Type: tape.TypeDir, Path: p, Mode: 0o755} }
	link := func(p, target string) tape.Record {
		return tape.Record{Type: tape.TypeSymlink, Path: p, Target: target}
	}
	file := tape.Record{Type: tape.TypeFile, Path: "a.txt", Mode: 0o644, Data: []byte("x")}
	for _, tc := range []struct {
		name    string
		entries []tape.Record
		bad     string // the refused entry; empty: restored
	}{
		{"down", []tape.Record{file, dir("d"), link("l", "d/x"), link("d/m", "x")}, ""},
		{"absolute", []tape.Record{file, link("etc", "/etc")}, "etc"},
		{"absolute below the root", []tape.Record{file, link("abs", "/r/a.txt")}, "abs"},
		{"up", []tape.Record{file, link("up", "../outside")}, "up"},
		{"up from a folder", []tape.Record{file, dir("d"), link("d/up", "../../etc")}, "d/up"},
		{"up and down again", []tape.Record{file, dir("d"), link("d/l", "../a.txt")}, ""},
		{"npm's .bin", []tape.Record{dir("n"), dir("n/.bin"), dir("n/pkg"), file, link("n/.bin/cli", "../pkg/cli.js")}, ""},
		{"up to the root", []tape.Record{file, dir("d"), link("d/up", "..")}, "d/up"},
		{"up to its own folder", []tape.Record{file, dir("d"), link("d/l", "../d")}, "d/l"},
		{"up and through a link", []tape.Record{file, dir("d"), dir("g4"), link("g", "g4"), link("d/l", "../g/../../etc")}, "d/l"},
		{"up and down and up inside, through no link", []tape.Record{file, dir("d"), dir("x"), link("d/l", "../x/../a.txt")}, "d/l"},
		{"up, then down through a link", []tape.Record{file, dir("d"), dir("e"), link("g", "d"), link("e/l", "../g/x")}, ""},
		{"up through a link", []tape.Record{file, dir("g4"), link("g", "g4"), link("g_up", "g/..")}, "g_up"},
		{"a chain", []tape.Record{file, link("l1", "l1/l1/..")}, "l1"},
		{"dot", []tape.Record{file, link("dot", "./a.txt")}, "dot"},
		{"empty part", []tape.Record{file, dir("d"), link("e", "d//x")}, "e"},
		{"trailing slash", []tape.Record{file, dir("d"), link("s", "d/")}, "s"},
		{"a link below a link", []tape.Record{file, dir("d"), dir("d/e"), link("g", "d/e"), link("g/up", "../x")}, "g/up"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := t.TempDir()
			err := tape.RestoreRoot(dst, tc.entries, "")
			if tc.bad == "" {
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range tc.entries {
					if e.Type != tape.TypeSymlink {
						continue
					}
					if got, err := os.Readlink(filepath.Join(dst, e.Path)); err != nil || got != e.Target {
						t.Errorf("%s: %q, %v; want a link to %q", e.Path, got, err, e.Target)
					}
				}
				return
			}
			if err == nil {
				t.Fatalf("restored; want the link %s refused", tc.bad)
			}
			wants := []string{"root entry " + tc.bad + " is a symbolic link", "a root's links must be relative"}
			if tc.name == "a link below a link" {
				wants = []string{"root entry g/up lies below g", "g is a symbolic link"}
			}
			for _, want := range wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error %q does not say %q", err, want)
				}
			}
			filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
				if err == nil && p != dst {
					t.Errorf("the refused tape made %s", p)
				}
				return nil
			})
		})
	}
}
