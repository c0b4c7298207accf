package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDisplayShapes: display() takes the seed's JavaScript shapes in both
// languages, so the helpers are the same: {type: 'image', data, mimeType}
// is an image, {type: 'markdown', text} markdown, {type: 'html', html}
// HTML (shown as markdown); another plain object is a JSON output.
func TestDisplayShapes(t *testing.T) {
	code := map[string]string{
		"py": `display({'type': 'image', 'data': 'iVBORw0KGgo=', 'mimeType': 'image/png'})
display({'type': 'markdown', 'text': '# Title'})
display({'type': 'html', 'html': '<b>bold</b>'})
display({'type': 'other', 'n': 1})`,
		"js": `display({type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png'})
display({type: 'markdown', text: '# Title'})
display({type: 'html', html: '<b>bold</b>'})
display({type: 'other', n: 1})`,
	}
	for _, lang := range []string{"py", "js"} {
		t.Run(lang, func(t *testing.T) {
			s, _ := helperSession(t, nil)
			_, res := evalLang(t, s, lang, code[lang])
			d := res.Details
			if len(d.Images) != 1 || d.Images[0].MIMEType != "image/png" || d.Images[0].Data != "iVBORw0KGgo=" {
				t.Errorf("images %+v, want the one PNG", d.Images)
			}
			if md := d.Cells[0].Markdown; md != "# Title\n**bold**" && md != "# Title\n\n**bold**" {
				t.Errorf("markdown %q, want the title and the HTML as markdown", md)
			}
			if len(d.JSONOutputs) != 1 || string(d.JSONOutputs[0]) != `{"type":"other","n":1}` {
				t.Errorf("JSON outputs %s, want the other object only", d.JSONOutputs)
			}
		})
	}
}

// TestImportFromHome: a JavaScript import whose specifier starts with ~/
// resolves against the session's home (the root), static and dynamic, as
// the seed's imports do.
func TestImportFromHome(t *testing.T) {
	s, root := helperSession(t, nil)
	if err := os.MkdirAll(filepath.Join(root, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "lib", "m.mjs"), []byte("export const v = 41\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, res := evalLang(t, s, "js", "import { v } from '~/lib/m.mjs'\nconst m = await import('~/lib/m.mjs')\nprint(v + 1, m.v)")
	if got != "42 41\n" {
		t.Errorf("output %q (status %s), want 42 41", got, res.Details.Cells[0].Status)
	}
}

// TestIPythonCompat: code written for the seed's IPython kernel finds
// IPython.display's classes (their outputs are those of display()),
// get_ipython() is None as outside a shell, and a magic or shell command
// fails with a note that says there is none.
func TestIPythonCompat(t *testing.T) {
	s, root := helperSession(t, nil)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	if err := os.WriteFile(filepath.Join(root, "plot.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	_, res := evalLang(t, s, "py", `from IPython.display import display, Markdown, HTML, Image, JSON, clear_output
import IPython
display(Markdown("# Report"), HTML("<b>bold</b>"), JSON({"n": 1}), Image(filename="plot.png"), Image("plot.png"))
clear_output()
print(IPython.get_ipython(), IPython.display.Markdown.__module__)`)
	d := res.Details
	c := d.Cells[0]
	if c.Status != "complete" {
		t.Fatalf("status %s: %s", c.Status, c.Output)
	}
	if c.Markdown != "# Report\n**bold**" && c.Markdown != "# Report\n\n**bold**" {
		t.Errorf("markdown %q", c.Markdown)
	}
	if len(d.JSONOutputs) != 1 || string(d.JSONOutputs[0]) != `{"n": 1}` && string(d.JSONOutputs[0]) != `{"n":1}` {
		t.Errorf("JSON outputs %s", d.JSONOutputs)
	}
	if len(d.Images) != 2 || d.Images[0].MIMEType != "image/png" {
		t.Errorf("images %+v, want the PNG twice", d.Images)
	}
	if !strings.Contains(c.Output, "None IPython.core.display\n") {
		t.Errorf("output %q", c.Output)
	}
	for _, code := range []string{"%time x = 1", "!ls"} {
		got, _ := evalLang(t, s, "py", code)
		if !strings.Contains(got, "SyntaxError") || !strings.Contains(got, "IPython magics (%time, %%bash, ...) and shell commands (!ls) are not available") {
			t.Errorf("%s: %q", code, got)
		}
	}
}
