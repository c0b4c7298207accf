package attack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// TestHuntDisplays: display data is the guest's, as large as its memory
// cap allows, and the host reads it: images of 60 MiB (with white space
// between the base64, which the host strips), HTML of deeply nested lists
// and block quotes (converted to Markdown on the host: 1 MiB of
// <blockquote> took 12 s of its CPU and 12 GiB of allocations), many
// small outputs in one cell.
// Each is shown or refused with a note, in bounded time, and the host's
// heap grows by at most twice the session's memory cap (an image of 60
// MiB of "A " grew it by 592 MiB when the host split it at its spaces).
func TestHuntDisplays(t *testing.T) {
	for _, c := range []struct {
		name, lang, code, want string
	}{
		{"an image of 60 MiB of 'A '", "js", `display({type: 'image', mimeType: 'image/png', data: 'A '.repeat(30 << 20)})`, "images of one request are limited"},
		{"an image of 60 MiB of lines", "js", `display({type: 'image', mimeType: 'image/png', data: 'A\n'.repeat(30 << 20)})`, "images of one request are limited"},
		{"an image of 40 MiB", "js", `display({type: 'image', mimeType: 'image/png', data: 'A'.repeat(40 << 20)})`, "images of one request are limited"},
		{"an image of 24 MiB of 'AAA ' from Python", "py", `display({'image/png': 'AAA ' * (6 << 20)}, raw=True)`, "images of one request are limited"},
		{"HTML of 16 MiB of nested lists", "js", `display({type: 'html', html: '<ul><li>'.repeat(2 << 20)})`, "HTML cut at"},
		{"HTML of 16 MiB of nested block quotes", "js", `display({type: 'html', html: '<blockquote>'.repeat(1 << 20)})`, "HTML cut at"},
		{"HTML of 16 MiB of nested tables", "js", `display({type: 'html', html: '<table><tr><td>'.repeat(1 << 20)})`, "HTML cut at"},
		{"100,000 Markdown displays", "js", `for (let i = 0; i < 100000; i++) display({type: 'markdown', text: 'm'})`, "m\nm\n"},
		{"20,000 small images", "js", `for (let i = 0; i < 20000; i++) display({type: 'image', mimeType: 'image/png', data: 'AAAA'}); print('shown')`, "shown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.lang == "py" {
				testenv.RequirePython(t)
			}
			w := newWorld(t)
			s, err := sharedSandbox(t).NewSession(context.Background(), sessionOptions(w.root))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			alive(t, s, c.lang)
			peak := heapPeak()
			start := time.Now()
			out, status := eval(t, s, c.lang, c.code, 60)
			took, grew := time.Since(start), peak()
			t.Logf("%s in %v, heap +%d MiB, %d bytes of output", status, took.Round(time.Millisecond), grew>>20, len(out))
			if !strings.Contains(out, c.want) {
				t.Errorf("%s: the output lacks %q: %q", status, c.want, clip(out))
			}
			if grew > 2*memoryCap {
				t.Errorf("the host's heap grew by %d MiB for one cell of a session capped at %d MiB", grew>>20, memoryCap>>20)
			}
			if took > testenv.Stretch(30*time.Second) {
				t.Errorf("the cell took %v", took.Round(time.Millisecond))
			}
			alive(t, s, c.lang)
		})
	}
}
