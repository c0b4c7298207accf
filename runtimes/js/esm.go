package js

import (
	"strconv"
	"strings"
)

// goja parses scripts only: import and export declarations are syntax errors
// to it. rewriteModuleSyntax turns them into calls of the __wasmeval helpers
// (prelude/js/modules.js) before the code is parsed:
//
//	import d, { a, b as c } from './x.js'  ->  const { default: d, a, b: c } = __wasmeval.import("./x.js");
//	import * as ns from './x.js'           ->  const ns = __wasmeval.import("./x.js");
//	import './x.js'                        ->  __wasmeval.import("./x.js");
//	import('./x.js')                       ->  __wasmeval.dynamicImport('./x.js')
//	import.meta                            ->  __wasmeval.meta
//	export const a = 1                     ->  const a = 1   (and a getter for a, appended)
//	export { a as b }                      ->  (removed; a getter for b, appended)
//	export default expr                    ->  __wasmeval.exports.default = expr
//	export * from './y.js'                 ->  __wasmeval.reexport(__wasmeval.exports, __wasmeval.import("./y.js"), null);
//
// Rewrites keep every line where it was: a replacement that spans lines is
// followed by as many newlines, and a removed keyword becomes spaces. Only
// the text after a rewritten import on its own line moves.
//
// The scanner is a small tokenizer (strings, templates, comments, regular
// expressions, bracket depth): it looks for the two keywords at the top level
// only, where they cannot be anything else. Code it cannot tokenize is left
// as it is, and goja reports the error.

// moduleSyntax is the result of rewriteModuleSyntax.
type moduleSyntax struct {
	src string
	// esm is true when the code had import or export declarations.
	esm bool
	// exportDecls are offsets in src of declarations that were exported
	// (export const ..., export function ...): their bound names are exported.
	exportDecls []int
	// exportDefaultDecl maps the offset of a named function or class
	// declaration exported as default to its name.
	exportDefaultDecl map[int]string
	// exportNames are `export { local as exported }` pairs.
	exportNames [][2]string
	// imports are a module's imported bindings, which liveImports turns
	// into reads of the namespace variables the rewrite declares.
	imports map[string]importBinding
}

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tString
	tTemplate
	tRegex
	tNumber
	tPunct
)

// tok is a token of the scanner.
type tok struct {
	kind       tokKind
	start, end int
	text       string
}

type lexer struct {
	src  string
	pos  int
	prev tok // last significant token
	err  bool
}

// regexAfter lists the keywords after which a slash starts a regular
// expression rather than a division.
var regexAfter = map[string]bool{
	"return": true, "typeof": true, "instanceof": true, "in": true, "of": true, "new": true,
	"delete": true, "void": true, "throw": true, "case": true, "do": true, "else": true,
	"yield": true, "await": true,
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c == '\\' || c >= 0x80 ||
		(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// skipSpace skips white space and comments.
func (l *lexer) skipSpace() {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			l.pos++
		case c == '/' && l.pos+1 < len(l.src) && l.src[l.pos+1] == '/':
			i := strings.IndexByte(l.src[l.pos:], '\n')
			if i < 0 {
				l.pos = len(l.src)
			} else {
				l.pos += i
			}
		case c == '/' && l.pos+1 < len(l.src) && l.src[l.pos+1] == '*':
			i := strings.Index(l.src[l.pos+2:], "*/")
			if i < 0 {
				l.err = true
				l.pos = len(l.src)
			} else {
				l.pos += 2 + i + 2
			}
		case c == 0xc2 && l.pos+1 < len(l.src) && l.src[l.pos+1] == 0xa0: // NBSP
			l.pos += 2
		case c == 0xef && strings.HasPrefix(l.src[l.pos:], "\ufeff"):
			l.pos += 3
		default:
			return
		}
	}
}

func (l *lexer) regexAllowed() bool {
	switch l.prev.kind {
	case tEOF:
		return true
	case tIdent:
		return regexAfter[l.prev.text]
	case tPunct:
		return l.prev.text != ")" && l.prev.text != "]"
	}
	return false
}

// next returns the next significant token.
func (l *lexer) next() tok {
	l.skipSpace()
	if l.pos >= len(l.src) {
		return tok{kind: tEOF, start: l.pos, end: l.pos}
	}
	start := l.pos
	c := l.src[l.pos]
	var t tok
	switch {
	case c == '\'' || c == '"':
		l.skipString(c)
		t = tok{kind: tString}
	case c == '`':
		l.skipTemplate()
		t = tok{kind: tTemplate}
	case c >= '0' && c <= '9' || (c == '.' && l.pos+1 < len(l.src) && l.src[l.pos+1] >= '0' && l.src[l.pos+1] <= '9'):
		l.pos++
		for l.pos < len(l.src) && (isIdentByte(l.src[l.pos]) || l.src[l.pos] == '.') {
			l.pos++
		}
		t = tok{kind: tNumber}
	case isIdentByte(c):
		for l.pos < len(l.src) && isIdentByte(l.src[l.pos]) {
			l.pos++
		}
		t = tok{kind: tIdent}
	case c == '/' && l.regexAllowed():
		l.skipRegex()
		t = tok{kind: tRegex}
	default:
		l.pos++
		t = tok{kind: tPunct}
	}
	// An escape at the very end of the text skips past it.
	l.pos = min(l.pos, len(l.src))
	t.start, t.end = start, l.pos
	t.text = l.src[start:l.pos]
	l.prev = t
	return t
}

func (l *lexer) skipString(quote byte) {
	l.pos++
	for l.pos < len(l.src) {
		switch l.src[l.pos] {
		case '\\':
			l.pos += 2
		case quote:
			l.pos++
			return
		case '\n':
			l.err = true
			return
		default:
			l.pos++
		}
	}
	l.err = true
}

func (l *lexer) skipRegex() {
	l.pos++
	inClass := false
	for l.pos < len(l.src) {
		switch l.src[l.pos] {
		case '\\':
			l.pos += 2
			continue
		case '[':
			inClass = true
		case ']':
			inClass = false
		case '\n':
			l.err = true
			return
		case '/':
			if !inClass {
				l.pos++
				for l.pos < len(l.src) && isIdentByte(l.src[l.pos]) {
					l.pos++
				}
				return
			}
		}
		l.pos++
	}
	l.err = true
}

// skipTemplate skips a template literal, with the code of its substitutions.
func (l *lexer) skipTemplate() {
	l.pos++
	for l.pos < len(l.src) {
		switch l.src[l.pos] {
		case '\\':
			l.pos += 2
		case '`':
			l.pos++
			return
		case '$':
			if l.pos+1 < len(l.src) && l.src[l.pos+1] == '{' {
				l.pos += 2
				l.prev = tok{kind: tPunct, text: "{"}
				depth := 1
				for depth > 0 && !l.err {
					t := l.next()
					switch {
					case t.kind == tEOF:
						l.err = true
						return
					case t.text == "{":
						depth++
					case t.text == "}":
						depth--
					}
				}
			} else {
				l.pos++
			}
		default:
			l.pos++
		}
	}
	l.err = true
}

// peekByte returns the next byte after white space and comments, without
// consuming anything.
func (l *lexer) peekByte() byte {
	save := l.pos
	l.skipSpace()
	var c byte
	if l.pos < len(l.src) {
		c = l.src[l.pos]
	}
	l.pos = save
	return c
}

type edit struct {
	start, end int
	text       string
}

// lostNewlines is how many line breaks of the replaced text the replacement
// lacks: they are added after it, so that later lines keep their numbers.
func (e edit) lostNewlines(src string) int {
	return max(0, strings.Count(src[e.start:e.end], "\n")-strings.Count(e.text, "\n"))
}

// blank replaces src[start:end] with spaces, keeping its line breaks.
func blank(src string, start, end int) edit {
	b := []byte(src[start:end])
	for i, c := range b {
		if c != '\n' && c != '\r' {
			b[i] = ' '
		}
	}
	return edit{start, end, string(b)}
}

// rewriteModuleSyntax rewrites import and export syntax in src. In a cell
// (module false), export declarations are only stripped of their keyword.
func rewriteModuleSyntax(src string, module bool) moduleSyntax {
	ms := moduleSyntax{src: src}
	if !strings.Contains(src, "import") && !strings.Contains(src, "export") {
		return ms
	}
	l := &lexer{src: src}
	var edits []edit
	depth := 0
	prevText := ""
	for !l.err {
		t := l.next()
		if t.kind == tEOF {
			break
		}
		if t.kind == tPunct {
			switch t.text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			}
		}
		afterDot := prevText == "."
		prevText = t.text
		if t.kind != tIdent || afterDot {
			continue
		}
		switch t.text {
		case "import":
			switch l.peekByte() {
			case '(':
				edits = append(edits, edit{t.start, t.end, "__wasmeval.dynamicImport"})
				continue
			case '.':
				// import.meta: the module's url, filename and dirname.
				save := *l
				if dot := l.next(); dot.text == "." {
					if m := l.next(); m.kind == tIdent && m.text == "meta" {
						edits = append(edits, edit{t.start, m.end, "__wasmeval.meta"})
						prevText = "meta"
						continue
					}
				}
				*l = save
				continue
			}
			if depth != 0 {
				continue
			}
			save := *l
			e, ok := parseImport(l, t.start, module, &ms)
			if !ok {
				*l = save
				continue
			}
			ms.esm = true
			edits = append(edits, e)
			prevText = ";"
		case "export":
			if depth != 0 {
				continue
			}
			save := *l
			e, ok := parseExport(l, t, module, &ms)
			if !ok {
				*l = save
				continue
			}
			ms.esm = true
			edits = append(edits, e...)
			prevText = ";"
		}
	}
	if len(edits) == 0 {
		return ms
	}
	var b strings.Builder
	last := 0
	for _, e := range edits {
		b.WriteString(src[last:e.start])
		b.WriteString(e.text)
		b.WriteString(strings.Repeat("\n", e.lostNewlines(src)))
		last = e.end
	}
	b.WriteString(src[last:])
	// Offsets recorded for declarations are in the original text; the edits
	// before them changed its length.
	shift := func(off int) int {
		d := 0
		for _, e := range edits {
			if e.end > off {
				break
			}
			d += len(e.text) + e.lostNewlines(src) - (e.end - e.start)
		}
		return off + d
	}
	for i, off := range ms.exportDecls {
		ms.exportDecls[i] = shift(off)
	}
	if len(ms.exportDefaultDecl) > 0 {
		m := make(map[int]string, len(ms.exportDefaultDecl))
		for off, name := range ms.exportDefaultDecl {
			m[shift(off)] = name
		}
		ms.exportDefaultDecl = m
	}
	ms.src = b.String()
	return ms
}

// isString reports whether t is a complete string literal (the lexer also
// returns the start of an unterminated one).
func isString(t tok) bool {
	return t.kind == tString && len(t.text) >= 2 && t.text[len(t.text)-1] == t.text[0]
}

// unquote returns the text of a string literal token without its quotes.
func unquote(t tok) string {
	return t.text[1 : len(t.text)-1]
}

// specifierLiteral returns a JSON-quoted copy of a string literal token.
func specifierLiteral(t tok) string {
	s := unquote(t)
	if !strings.ContainsRune(s, '\\') {
		return strconv.Quote(s)
	}
	// Escapes in module specifiers are rare; keep the literal as written.
	return t.text
}

// skipImportAttributes skips `with { type: 'json' }` (or `assert {...}`)
// and a final semicolon, and returns the end offset of the statement.
func skipImportAttributes(l *lexer, end int) int {
	save := *l
	t := l.next()
	if t.kind == tIdent && (t.text == "with" || t.text == "assert") && l.peekByte() == '{' {
		depth := 0
		for {
			t = l.next()
			if t.kind == tEOF {
				*l = save
				return end
			}
			if t.text == "{" {
				depth++
			} else if t.text == "}" {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		end = t.end
		save = *l
		t = l.next()
	}
	if t.text == ";" {
		return t.end
	}
	*l = save
	return end
}

// parseImport parses an import declaration whose keyword starts at start.
// In a module, the names it binds are recorded in ms.imports and read live
// from a namespace variable (livebind.go).
func parseImport(l *lexer, start int, module bool, ms *moduleSyntax) (edit, bool) {
	t := l.next()
	if isString(t) {
		end := skipImportAttributes(l, t.end)
		return edit{start, end, "__wasmeval.import(" + specifierLiteral(t) + ");"}, true
	}
	var def, ns string
	var named []string
	if t.kind == tIdent && t.text != "from" || (t.kind == tIdent && t.text == "from" && l.peekByte() != '"' && l.peekByte() != '\'') {
		def = t.text
		t = l.next()
		if t.text == "," {
			t = l.next()
		}
	}
	switch t.text {
	case "*":
		if a := l.next(); a.text != "as" {
			return edit{}, false
		}
		n := l.next()
		if n.kind != tIdent {
			return edit{}, false
		}
		ns = n.text
		t = l.next()
	case "{":
		for {
			n := l.next()
			if n.text == "}" {
				break
			}
			if n.kind != tIdent && !isString(n) {
				return edit{}, false
			}
			key := n.text
			local := n.text
			a := l.next()
			if a.text == "as" {
				m := l.next()
				if m.kind != tIdent {
					return edit{}, false
				}
				local = m.text
				a = l.next()
			}
			if key == local {
				named = append(named, local)
			} else {
				named = append(named, key+": "+local)
			}
			if a.text == "}" {
				break
			}
			if a.text != "," {
				return edit{}, false
			}
		}
		t = l.next()
	}
	if t.text != "from" {
		return edit{}, false
	}
	spec := l.next()
	if !isString(spec) {
		return edit{}, false
	}
	end := skipImportAttributes(l, spec.end)
	call := "__wasmeval.import(" + specifierLiteral(spec) + ")"
	if module && (def != "" || named != nil) {
		if ms.imports == nil {
			ms.imports = map[string]importBinding{}
		}
		v := ns
		text := "const " + ns + " = " + call + ";"
		if ns == "" {
			v = "__wasmeval_i" + strconv.Itoa(len(ms.imports))
			text = "const " + v + " = " + call + ";"
		}
		if def != "" {
			ms.imports[def] = importBinding{ns: v, imported: "default"}
		}
		for _, n := range named {
			imported, local, ok := strings.Cut(n, ": ")
			if !ok {
				local = imported
			}
			if len(imported) >= 2 && (imported[0] == '"' || imported[0] == '\'') {
				imported = imported[1 : len(imported)-1]
			}
			ms.imports[local] = importBinding{ns: v, imported: imported}
		}
		return edit{start, end, text}, true
	}
	var text string
	switch {
	case ns != "" && def != "":
		text = "const " + ns + " = " + call + ", " + def + " = " + ns + ".default;"
	case ns != "":
		text = "const " + ns + " = " + call + ";"
	case named != nil || def != "":
		if def != "" {
			named = append([]string{"default: " + def}, named...)
		}
		text = "const { " + strings.Join(named, ", ") + " } = " + call + ";"
	default:
		text = call + ";"
	}
	return edit{start, end, text}, true
}

// parseExport parses an export declaration whose keyword is kw.
func parseExport(l *lexer, kw tok, module bool, ms *moduleSyntax) ([]edit, bool) {
	t := l.next()
	switch t.text {
	case "default":
		save := *l
		d := l.next()
		declStart := d.start
		if d.text == "async" {
			d = l.next()
		}
		if d.text == "function" || d.text == "class" {
			n := l.next()
			if n.text == "*" {
				n = l.next()
			}
			if n.kind == tIdent && n.text != "extends" {
				*l = save
				if module {
					if ms.exportDefaultDecl == nil {
						ms.exportDefaultDecl = map[int]string{}
					}
					ms.exportDefaultDecl[declStart] = n.text
				}
				return []edit{blank(l.src, kw.start, t.end)}, true
			}
		}
		*l = save
		if !module {
			return []edit{blank(l.src, kw.start, t.end)}, true
		}
		return []edit{{kw.start, t.end, "__wasmeval.exports.default ="}}, true
	case "const", "let", "var", "function", "async", "class":
		// The declaration itself stays: scan it again from its keyword.
		l.pos = t.start
		l.prev = kw
		if module {
			ms.exportDecls = append(ms.exportDecls, t.start)
		}
		return []edit{blank(l.src, kw.start, kw.end)}, true
	case "*":
		name := ""
		n := l.next()
		if n.text == "as" {
			m := l.next()
			if m.kind != tIdent && !isString(m) {
				return nil, false
			}
			name = m.text
			if m.kind == tString {
				name = unquote(m)
			}
			n = l.next()
		}
		if n.text != "from" {
			return nil, false
		}
		spec := l.next()
		if !isString(spec) {
			return nil, false
		}
		end := skipImportAttributes(l, spec.end)
		call := "__wasmeval.import(" + specifierLiteral(spec) + ")"
		if !module {
			return []edit{{kw.start, end, call + ";"}}, true
		}
		names := "null"
		if name != "" {
			names = "[[\"*\", " + strconv.Quote(name) + "]]"
		}
		return []edit{{kw.start, end, "__wasmeval.reexport(__wasmeval.exports, " + call + ", " + names + ");"}}, true
	case "{":
		var pairs [][2]string
		for {
			n := l.next()
			if n.text == "}" {
				break
			}
			if n.kind != tIdent && !isString(n) {
				return nil, false
			}
			local := n.text
			exported := n.text
			a := l.next()
			if a.text == "as" {
				m := l.next()
				if m.kind != tIdent && !isString(m) {
					return nil, false
				}
				exported = m.text
				if m.kind == tString {
					exported = unquote(m)
				}
				a = l.next()
			}
			pairs = append(pairs, [2]string{local, exported})
			if a.text == "}" {
				break
			}
			if a.text != "," {
				return nil, false
			}
		}
		end := l.pos
		save := *l
		f := l.next()
		if f.text == "from" {
			spec := l.next()
			if !isString(spec) {
				return nil, false
			}
			end = skipImportAttributes(l, spec.end)
			call := "__wasmeval.import(" + specifierLiteral(spec) + ")"
			if !module {
				return []edit{{kw.start, end, call + ";"}}, true
			}
			var list []string
			for _, p := range pairs {
				from := p[0]
				if strings.HasPrefix(from, "'") || strings.HasPrefix(from, "\"") {
					from = from[1 : len(from)-1]
				}
				list = append(list, "["+strconv.Quote(from)+", "+strconv.Quote(p[1])+"]")
			}
			return []edit{{kw.start, end, "__wasmeval.reexport(__wasmeval.exports, " + call + ", [" + strings.Join(list, ", ") + "]);"}}, true
		}
		*l = save
		if f.text == ";" {
			end = f.end
			l.next()
		}
		if module {
			ms.exportNames = append(ms.exportNames, pairs...)
		}
		return []edit{blank(l.src, kw.start, end)}, true
	}
	return nil, false
}
