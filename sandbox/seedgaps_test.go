package sandbox_test

import (
	"os"
	"path/filepath"
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
