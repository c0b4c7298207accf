package sandbox

import (
	"html"
	"strconv"
	"strings"
)

// htmlToMarkdown converts a display's HTML to Markdown text for agents. It
// is a small, forgiving converter, not a browser: it keeps headings,
// paragraphs, emphasis, code, links, images, lists, block quotes and tables
// (pandas' DataFrame HTML becomes a Markdown table), drops script, style and
// head, decodes entities, and renders any other element as its content. It
// does not escape Markdown syntax found in text.
func htmlToMarkdown(s string) string {
	cut := false
	if len(s) > maxHTMLBytes {
		s, cut = s[:runeStart(s, maxHTMLBytes)], true
		// Do not leave half a tag at the end.
		if lt := strings.LastIndexByte(s, '<'); lt >= 0 && !strings.Contains(s[lt:], ">") {
			s = s[:lt]
		}
	}
	root := parseHTML(s)
	left := maxMarkdownWork
	w := mdWriter{b: mdBuf{left: &left}}
	w.children(root)
	out := tidyMarkdown(w.b.String())
	if cut {
		out += "\n\n[... HTML cut at " + commas(maxHTMLBytes) + " bytes ...]"
	}
	if left < 0 {
		out += "\n\n[... Markdown cut: the HTML nests too deeply to convert whole ...]"
	}
	return out
}

// hnode is an element (tag set) or a text node of a parsed HTML fragment.
type hnode struct {
	tag    string
	text   string
	attrs  map[string]string
	kids   []*hnode
	parent *hnode
}

const maxHTMLDepth = 100

var voidTags = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "param": true, "source": true, "track": true, "wbr": true,
}

// rawTags hold text that is not parsed as HTML.
var rawTags = map[string]bool{"script": true, "style": true, "textarea": true, "title": true, "xmp": true}

// closesP are the elements whose start ends an open <p>.
var closesP = map[string]bool{
	"p": true, "div": true, "ul": true, "ol": true, "table": true, "pre": true, "blockquote": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "hr": true, "dl": true,
	"section": true, "article": true, "header": true, "footer": true, "figure": true, "form": true,
}

// parseHTML builds a tree leniently: unknown end tags are ignored, an end
// tag closes the elements opened after its start, and the implied ends of
// p, li, dt/dd, tr, td/th and option are honoured. Nesting deeper than
// maxHTMLDepth is flattened.
func parseHTML(s string) *hnode {
	root := &hnode{tag: "#root"}
	cur := root
	depth := 0
	push := func(n *hnode) {
		n.parent = cur
		cur.kids = append(cur.kids, n)
	}
	text := func(t string) {
		if t != "" {
			push(&hnode{text: html.UnescapeString(t)})
		}
	}
	// closeTo pops to the nearest open element named one of tags, without
	// crossing an element named in stop.
	closeTo := func(tags []string, stop []string) {
		for n, d := cur, depth; n != root; n, d = n.parent, d-1 {
			if contains(stop, n.tag) {
				return
			}
			if contains(tags, n.tag) {
				cur, depth = n.parent, d-1
				return
			}
		}
	}
	i := 0
	for i < len(s) {
		lt := strings.IndexByte(s[i:], '<')
		if lt < 0 {
			text(s[i:])
			break
		}
		text(s[i : i+lt])
		i += lt
		rest := s[i:]
		switch {
		case strings.HasPrefix(rest, "<!--"):
			end := strings.Index(rest[4:], "-->")
			if end < 0 {
				return root
			}
			i += 4 + end + 3
			continue
		case strings.HasPrefix(rest, "<!") || strings.HasPrefix(rest, "<?"):
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				return root
			}
			i += end + 1
			continue
		case strings.HasPrefix(rest, "</"):
			name, n := tagName(rest[2:])
			if name == "" {
				text("<")
				i++
				continue
			}
			end := strings.IndexByte(rest[2+n:], '>')
			if end < 0 {
				return root
			}
			i += 2 + n + end + 1
			closeTo([]string{name}, nil)
			continue
		}
		name, n := tagName(rest[1:])
		if name == "" {
			text("<")
			i++
			continue
		}
		attrs, m, selfClose, ok := parseAttrs(rest[1+n:])
		if !ok {
			text(rest)
			break
		}
		i += 1 + n + m
		switch {
		case name == "li":
			closeTo([]string{"li"}, []string{"ul", "ol"})
		case name == "dt" || name == "dd":
			closeTo([]string{"dt", "dd"}, []string{"dl"})
		case name == "tr":
			closeTo([]string{"tr"}, []string{"table"})
		case name == "td" || name == "th":
			closeTo([]string{"td", "th"}, []string{"tr", "table"})
		case name == "option":
			closeTo([]string{"option"}, []string{"select"})
		case name == "thead" || name == "tbody" || name == "tfoot":
			closeTo([]string{"thead", "tbody", "tfoot"}, []string{"table"})
		}
		if closesP[name] {
			closeTo([]string{"p"}, []string{"div", "td", "th", "li", "blockquote", "table"})
		}
		node := &hnode{tag: name, attrs: attrs}
		if rawTags[name] {
			end := indexFold(s[i:], "</"+name)
			if end < 0 {
				end = len(s) - i
			}
			node.kids = []*hnode{{text: s[i : i+end], parent: node}}
			push(node)
			i += end
			if gt := strings.IndexByte(s[i:], '>'); gt >= 0 {
				i += gt + 1
			} else {
				i = len(s)
			}
			continue
		}
		push(node)
		if voidTags[name] || selfClose || depth >= maxHTMLDepth {
			continue
		}
		cur, depth = node, depth+1
	}
	return root
}

// tagName reads a tag name, lowercased; n is the bytes read.
func tagName(s string) (name string, n int) {
	for n < len(s) {
		c := s[n]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || n > 0 && (c >= '0' && c <= '9' || c == '-' || c == ':') {
			n++
			continue
		}
		break
	}
	return strings.ToLower(s[:n]), n
}

// parseAttrs reads attributes up to and including '>'.
func parseAttrs(s string) (attrs map[string]string, n int, selfClose, ok bool) {
	for n < len(s) {
		c := s[n]
		switch {
		case c == '>':
			return attrs, n + 1, selfClose, true
		case c == '/':
			selfClose = true
			n++
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			n++
			continue
		}
		selfClose = false
		start := n
		for n < len(s) && !strings.ContainsRune(" \t\n\r\f/>=", rune(s[n])) {
			n++
		}
		key := strings.ToLower(s[start:n])
		val := ""
		for n < len(s) && strings.ContainsRune(" \t\n\r\f", rune(s[n])) {
			n++
		}
		if n < len(s) && s[n] == '=' {
			n++
			for n < len(s) && strings.ContainsRune(" \t\n\r\f", rune(s[n])) {
				n++
			}
			if n < len(s) && (s[n] == '"' || s[n] == '\'') {
				q := s[n]
				end := strings.IndexByte(s[n+1:], q)
				if end < 0 {
					return nil, 0, false, false
				}
				val = s[n+1 : n+1+end]
				n += end + 2
			} else {
				start := n
				for n < len(s) && !strings.ContainsRune(" \t\n\r\f>", rune(s[n])) {
					n++
				}
				val = s[start:n]
			}
		}
		if key == "" {
			n++ // a stray character such as '='
			continue
		}
		if attrs == nil {
			attrs = make(map[string]string)
		}
		if _, dup := attrs[key]; !dup {
			attrs[key] = html.UnescapeString(val)
		}
	}
	return nil, 0, false, false
}

func indexFold(s, sub string) int {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		if strings.EqualFold(s[i:i+n], sub) {
			return i
		}
	}
	return -1
}

// mdWriter renders a tree as Markdown.
type mdWriter struct {
	b   mdBuf
	pre bool
}

// maxMarkdownWork bounds what one conversion writes, counting each
// nesting level's rewrite of what its content wrote (block quotes and
// list items prefix every line of theirs): deep nesting made that work
// grow with the square of the depth, 12 GiB of strings and 12 s of the
// host's CPU for 1 MiB of <blockquote> (issue 9).
const maxMarkdownWork = 8 * maxHTMLBytes

// mdBuf is a strings.Builder that drops every write once the
// conversion's writes (all its writers' together, *left) pass
// maxMarkdownWork; *left is then negative.
type mdBuf struct {
	strings.Builder
	left *int
}

func (b *mdBuf) WriteString(s string) {
	if *b.left < len(s) {
		*b.left = -1
		return
	}
	*b.left -= len(s)
	b.Builder.WriteString(s)
}

func (b *mdBuf) WriteByte(c byte) error {
	if *b.left < 1 {
		*b.left = -1
		return nil
	}
	*b.left--
	return b.Builder.WriteByte(c)
}

func (w *mdWriter) atLineStart() bool {
	s := w.b.String()
	return len(s) == 0 || s[len(s)-1] == '\n'
}

func (w *mdWriter) newline() {
	if !w.atLineStart() {
		w.b.WriteByte('\n')
	}
}

// blank ends the current block with an empty line.
func (w *mdWriter) blank() {
	s := w.b.String()
	switch {
	case len(s) == 0, strings.HasSuffix(s, "\n\n"):
	case strings.HasSuffix(s, "\n"):
		w.b.WriteByte('\n')
	default:
		w.b.WriteString("\n\n")
	}
}

func (w *mdWriter) text(t string) {
	if w.pre {
		w.b.WriteString(t)
		return
	}
	t = collapseSpace(t)
	if t == "" {
		return
	}
	if t[0] == ' ' {
		s := w.b.String()
		if len(s) == 0 || s[len(s)-1] == '\n' || s[len(s)-1] == ' ' {
			t = t[1:]
		}
	}
	w.b.WriteString(t)
}

func collapseSpace(t string) string {
	var b strings.Builder
	space := false
	for _, r := range t {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if space {
		b.WriteByte(' ')
	}
	return b.String()
}

func (w *mdWriter) children(n *hnode) {
	for _, k := range n.kids {
		w.node(k)
	}
}

// inner renders n's children on their own and returns the text.
func (w *mdWriter) inner(n *hnode) string {
	sub := mdWriter{pre: w.pre, b: mdBuf{left: w.b.left}}
	sub.children(n)
	return sub.b.String()
}

func (w *mdWriter) node(n *hnode) {
	if n.tag == "" {
		w.text(n.text)
		return
	}
	switch n.tag {
	case "script", "style", "head", "template", "noscript", "title", "svg", "math", "button", "select", "input":
	case "h1", "h2", "h3", "h4", "h5", "h6":
		level := int(n.tag[1] - '0')
		w.blank()
		w.b.WriteString(strings.Repeat("#", level) + " " + strings.TrimSpace(collapseSpace(w.inner(n))))
		w.blank()
	case "p", "section", "article", "main", "header", "footer", "nav", "aside", "figure", "form",
		"fieldset", "address", "details", "dl", "caption":
		w.blank()
		w.children(n)
		w.blank()
	case "div", "summary", "figcaption", "dt", "tr", "legend":
		w.newline()
		w.children(n)
		w.newline()
	case "dd":
		w.newline()
		w.b.WriteString(": ")
		w.children(n)
		w.newline()
	case "br":
		w.b.WriteByte('\n')
	case "hr":
		w.blank()
		w.b.WriteString("---")
		w.blank()
	case "strong", "b":
		w.wrap(n, "**")
	case "em", "i":
		w.wrap(n, "*")
	case "s", "del", "strike":
		w.wrap(n, "~~")
	case "code", "kbd", "samp", "tt":
		if w.pre {
			w.children(n)
		} else {
			w.wrap(n, "`")
		}
	case "pre":
		w.blank()
		sub := mdWriter{pre: true, b: mdBuf{left: w.b.left}}
		sub.children(n)
		code := strings.Trim(sub.b.String(), "\n")
		fence := "```"
		for strings.Contains(code, fence) {
			fence += "`"
		}
		w.b.WriteString(fence + "\n" + code + "\n" + fence)
		w.blank()
	case "a":
		text := strings.TrimSpace(collapseSpace(w.inner(n)))
		href := strings.TrimSpace(n.attrs["href"])
		lower := strings.ToLower(href)
		switch {
		case href == "" || strings.HasPrefix(lower, "javascript:") || strings.HasPrefix(lower, "#"):
			w.text(text)
		case text == "":
			w.text("<" + href + ">")
		default:
			w.b.WriteString("[" + text + "](" + href + ")")
		}
	case "img":
		alt, src := n.attrs["alt"], n.attrs["src"]
		if src == "" || strings.HasPrefix(strings.ToLower(src), "data:") {
			if alt != "" {
				w.text("[image: " + alt + "]")
			} else {
				w.text("[image]")
			}
			return
		}
		w.b.WriteString("![" + alt + "](" + src + ")")
	case "ul", "ol":
		w.list(n)
	case "blockquote":
		w.blank()
		body := tidyMarkdown(w.inner(n))
		for i, line := range strings.Split(body, "\n") {
			if i > 0 {
				w.b.WriteByte('\n')
			}
			w.b.WriteString(strings.TrimRight("> "+line, " "))
		}
		w.blank()
	case "table":
		w.table(n)
	default:
		w.children(n)
	}
}

func (w *mdWriter) wrap(n *hnode, mark string) {
	t := collapseSpace(w.inner(n))
	core := strings.TrimSpace(t)
	if core == "" {
		w.text(t)
		return
	}
	if strings.HasPrefix(t, " ") {
		w.text(" ")
	}
	w.b.WriteString(mark + core + mark)
	if strings.HasSuffix(t, " ") {
		w.text(" ")
	}
}

func (w *mdWriter) list(n *hnode) {
	w.newline()
	if !strings.HasSuffix(w.b.String(), "\n\n") && w.b.Len() > 0 && !w.inList(n) {
		w.b.WriteByte('\n')
	}
	num := 1
	if v, err := strconv.Atoi(n.attrs["start"]); err == nil && v >= 0 && v < 1e9 {
		num = v
	}
	for _, k := range n.kids {
		if k.tag != "li" {
			if k.tag != "" {
				w.node(k)
			}
			continue
		}
		bullet := "- "
		if n.tag == "ol" {
			bullet = strconv.Itoa(num) + ". "
			num++
		}
		body := tidyMarkdown(w.inner(k))
		indent := strings.Repeat(" ", len(bullet))
		w.newline()
		for i, line := range strings.Split(body, "\n") {
			switch {
			case i == 0:
				w.b.WriteString(bullet + line)
			case line == "":
				w.b.WriteString("\n")
				continue
			default:
				w.b.WriteString("\n" + indent + line)
			}
		}
		w.b.WriteByte('\n')
	}
	if !w.inList(n) {
		w.blank()
	}
}

func (w *mdWriter) inList(n *hnode) bool {
	for p := n.parent; p != nil; p = p.parent {
		if p.tag == "li" {
			return true
		}
	}
	return false
}

// table renders rows of th/td cells as a Markdown table. The first row is
// the header, as Markdown requires one.
func (w *mdWriter) table(n *hnode) {
	var rows [][]string
	var caption string
	var walk func(*hnode)
	walk = func(x *hnode) {
		for _, k := range x.kids {
			switch k.tag {
			case "tr":
				var row []string
				for _, c := range k.kids {
					if c.tag == "td" || c.tag == "th" {
						cell := strings.TrimSpace(collapseSpace(w.inner(c)))
						row = append(row, strings.ReplaceAll(cell, "|", `\|`))
					}
				}
				rows = append(rows, row)
			case "caption":
				caption = strings.TrimSpace(collapseSpace(w.inner(k)))
			case "thead", "tbody", "tfoot":
				walk(k)
			}
		}
	}
	walk(n)
	w.blank()
	if caption != "" {
		w.b.WriteString(caption)
		w.blank()
	}
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	if cols == 0 {
		return
	}
	for i, r := range rows {
		for len(r) < cols {
			r = append(r, "")
		}
		w.b.WriteString("| " + strings.Join(r, " | ") + " |\n")
		if i == 0 {
			w.b.WriteString("|" + strings.Repeat(" --- |", cols) + "\n")
		}
	}
	w.blank()
}

// tidyMarkdown trims trailing spaces, keeps at most one empty line between
// blocks outside code fences, and trims the ends.
func tidyMarkdown(s string) string {
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	fence := ""
	for _, line := range lines {
		trimmed := strings.TrimSpace(line)
		if fence == "" && strings.HasPrefix(trimmed, "```") {
			fence = trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, "`"))]
			out = append(out, strings.TrimRight(line, " \t"))
			continue
		}
		if fence != "" {
			if trimmed == fence {
				fence = ""
			}
			out = append(out, line)
			continue
		}
		line = strings.TrimRight(line, " \t")
		if line == "" && len(out) > 0 && out[len(out)-1] == "" {
			continue
		}
		out = append(out, line)
	}
	return strings.Trim(strings.Join(out, "\n"), "\n")
}
