package sandbox

import (
	"runtime"
	"strings"
	"testing"
)

// TestHTMLToMarkdownNestingWork: HTML nested as deep as 1 MiB of tags
// allows (block quotes and list items rewrite every line of theirs at
// each level) is converted with a bounded amount of work: what it
// allocates stays under 512 MiB (1 MiB of <blockquote> allocated 12 GiB
// and took 12 s before the conversion's writes were capped), and the
// output says it was cut.
func TestHTMLToMarkdownNestingWork(t *testing.T) {
	for _, tag := range []string{"<blockquote>", "<ul><li>", "<ol><li>", "<blockquote><ul><li>", "<pre>", "<h1>", "<a href=x>"} {
		t.Run(tag, func(t *testing.T) {
			in := strings.Repeat(tag, maxHTMLBytes/len(tag))
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			out := htmlToMarkdown(in)
			runtime.ReadMemStats(&m1)
			if got := m1.TotalAlloc - m0.TotalAlloc; got > 512<<20 {
				t.Errorf("converting 1 MiB of %s allocated %d MiB", tag, got>>20)
			}
			if !strings.Contains(out, "cut") {
				t.Errorf("the output does not say it was cut: ...%q", out[max(0, len(out)-100):])
			}
		})
	}
	// Ordinary nesting is converted whole.
	in := strings.Repeat("<blockquote><ul><li>", 10) + "deep" + strings.Repeat("</li></ul></blockquote>", 10)
	if out := htmlToMarkdown(in); !strings.Contains(out, "deep") || strings.Contains(out, "cut") {
		t.Errorf("ten levels of nesting: %q", out)
	}
}
