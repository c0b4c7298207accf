package sandbox

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHTMLToMarkdown(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"text", "plain &amp; simple", "plain & simple"},
		{"heading and paragraphs", "<h1>Title</h1><p>one\n  two</p><p>three</p>", "# Title\n\none two\n\nthree"},
		{"emphasis", "<p>a <b>bold</b> and <em>soft</em> <code>x = 1</code> word</p>", "a **bold** and *soft* `x = 1` word"},
		{"link and image", `<a href="https://x.org/a?b=1&amp;c=2">site</a> <img src="p.png" alt="pic"> <img src="data:image/png;base64,AAA" alt="inline">`,
			"[site](https://x.org/a?b=1&c=2) ![pic](p.png) [image: inline]"},
		{"links without text or target", `<a href="#top">up</a> <a href="https://x.org"></a>`, "up <https://x.org>"},
		{"unordered list", "<ul><li>one<li>two</ul>", "- one\n- two"},
		{"ordered list with start", `<ol start="3"><li>c</li><li>d</li></ol>`, "3. c\n4. d"},
		{"nested list", "<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>", "- a\n  - b\n- c"},
		{"pre keeps spaces", "<pre><code>def f():\n    return 1</code></pre>", "```\ndef f():\n    return 1\n```"},
		{"pre with fences inside", "<pre>```\nx\n```</pre>", "````\n```\nx\n```\n````"},
		{"blockquote", "<blockquote><p>said</p><p>twice</p></blockquote>", "> said\n>\n> twice"},
		{"dropped elements", "<head><title>T</title><style>p{}</style></head><script>alert(1)</script><p>body</p>", "body"},
		{"comments and doctype", "<!DOCTYPE html><!-- c --><p>x</p>", "x"},
		{"line breaks and rules", "a<br>b<hr>c", "a\nb\n\n---\n\nc"},
		{"stray angle brackets", "1 < 2 and 3 > 2", "1 < 2 and 3 > 2"},
		{"unclosed tag", "<p>x <b", "x <b"},
		{"uppercase tags", "<P>x</P><UL><LI>y</LI></UL>", "x\n\n- y"},
		{
			"pandas DataFrame",
			`<div><style scoped>.dataframe tbody tr th {vertical-align: top;}</style>
<table border="1" class="dataframe">
  <thead>
    <tr style="text-align: right;"><th></th><th>a</th><th>b</th></tr>
  </thead>
  <tbody>
    <tr><th>0</th><td>1</td><td>x|y</td></tr>
    <tr><th>1</th><td>2</td></tr>
  </tbody>
</table>
</div>`,
			"|  | a | b |\n| --- | --- | --- |\n| 0 | 1 | x\\|y |\n| 1 | 2 |  |",
		},
		{"table without header row", "<table><tr><td>1</td><td>2</td></tr></table>", "| 1 | 2 |\n| --- | --- |"},
		{"definition list", "<dl><dt>term</dt><dd>meaning</dd></dl>", "term\n: meaning"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := htmlToMarkdown(tt.in); got != tt.want {
				t.Errorf("htmlToMarkdown(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestHTMLToMarkdownDeep(t *testing.T) {
	in := strings.Repeat("<div><span>", 20000) + "deep" + strings.Repeat("</span></div>", 20000)
	if got := htmlToMarkdown(in); got != "deep" {
		t.Errorf("deep nesting: %q", got)
	}
	big := strings.Repeat("<p>x</p>", maxHTMLBytes/8+10)
	if got := htmlToMarkdown(big); !strings.HasSuffix(got, "[... HTML cut at 1,048,576 bytes ...]") {
		t.Errorf("large HTML not cut: ...%q", got[len(got)-60:])
	}
}

// FuzzHTMLToMarkdown checks that the converter never panics on what a
// guest displays and never makes invalid UTF-8 out of valid input.
func FuzzHTMLToMarkdown(f *testing.F) {
	for _, seed := range []string{
		"<h1>x</h1><p>y <b>z</b></p>",
		"<table><tr><th>a<td>b<tr><td>c</table>",
		"<ul><li>a<ol><li>b</ol></ul>",
		"<pre>x\n  y</pre><blockquote>q</blockquote>",
		"<a href='x'>y</a><img src=z alt=w>",
		"<!-- x --><!doctype><?xml?><script>1<2</script>",
		"<p a=\"b' c>",
		"<div><div><div>",
		"</p></div></table>",
		"&amp;&lt;&#xzz;&",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := htmlToMarkdown(in)
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q: %q", in, out)
		}
	})
}
