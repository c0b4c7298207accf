package sandbox

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wasmeval/wasmeval/runtimes"
)

// Output limits. A cell's output is shown whole up to maxShownBytes and
// maxShownLines; past either it is cut to a head and a tail.
const (
	maxShownBytes = 50_000
	maxShownLines = 3000
	headBytes     = 24_000
	headLines     = 1500
	tailBytes     = 16_000
	tailLines     = 1000
	// ringSize holds the stream's last bytes, from which the tail is cut.
	ringSize = 32 << 10
	// keepCap is how much of one cell's output the session keeps for
	// Session.Output; the rest is counted, not stored.
	keepCap = 8 << 20
	// maxMarkdownBytes caps a cell's Markdown field.
	maxMarkdownBytes = maxShownBytes
	// maxHTMLBytes is the most HTML of one display that is converted.
	maxHTMLBytes = 1 << 20
)

// Per-request budgets for what a Result carries besides text.
const (
	maxImageBytes   = 16 << 20
	maxJSONBytes    = 4 << 20
	maxStatusEvents = 1000
	maxEventBytes   = 4096
)

// boundedText collects one output stream in bounded memory: the first
// keepCap bytes, and past them a ring of the last ringSize bytes, from
// which the tail is cut.
type boundedText struct {
	keep     []byte
	ring     []byte
	ringN    int64 // bytes written to the ring: those past keepCap
	total    int64
	newlines int64
	last     byte
}

func (t *boundedText) WriteString(s string) {
	if s == "" {
		return
	}
	t.total += int64(len(s))
	t.newlines += int64(strings.Count(s, "\n"))
	t.last = s[len(s)-1]
	if room := keepCap - len(t.keep); room > 0 {
		n := min(room, len(s))
		if cap(t.keep)-len(t.keep) < n {
			// Double, not append's 1.25x for large slices: less copying.
			grown := make([]byte, len(t.keep), min(keepCap, max(2*cap(t.keep), len(t.keep)+n, 4096)))
			copy(grown, t.keep)
			t.keep = grown
		}
		t.keep = append(t.keep, s[:n]...)
		s = s[n:]
		if s == "" {
			return
		}
	}
	if t.ring == nil {
		t.ring = make([]byte, ringSize)
	}
	if len(s) > ringSize {
		t.ringN += int64(len(s) - ringSize)
		s = s[len(s)-ringSize:]
	}
	pos := int(t.ringN % ringSize)
	n := copy(t.ring[pos:], s)
	copy(t.ring, s[n:])
	t.ringN += int64(len(s))
}

// tail returns the last bytes written, up to ringSize, in order.
func (t *boundedText) tail() []byte {
	if t.ringN == 0 {
		return t.keep[max(0, len(t.keep)-ringSize):]
	}
	out := make([]byte, 0, ringSize)
	if t.ringN < ringSize {
		out = append(out, t.keep[max(0, len(t.keep)-ringSize+int(t.ringN)):]...)
		return append(out, t.ring[:t.ringN]...)
	}
	pos := int(t.ringN % ringSize)
	out = append(out, t.ring[pos:]...)
	return append(out, t.ring[:pos]...)
}

func (t *boundedText) endsWithNewline() bool { return t.total == 0 || t.last == '\n' }

func (t *boundedText) lines() int64 {
	if t.total > 0 && t.last != '\n' {
		return t.newlines + 1
	}
	return t.newlines
}

func (t *boundedText) capped() bool { return t.total > int64(len(t.keep)) }

// needsCut reports whether the output is past the limits.
func (t *boundedText) needsCut() bool {
	return t.total > maxShownBytes || t.lines() > maxShownLines
}

// cut returns the shown text (head, marker line, tail) and what it left
// out. It is only called when needsCut.
func (t *boundedText) cut(id string) (shown string, tr Truncation) {
	head := t.keep[:min(len(t.keep), headBytes)]
	if i := nthIndex(head, '\n', headLines); i >= 0 {
		head = head[:i+1]
	} else if len(head) < len(t.keep) {
		if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
			head = head[:i+1]
		} else {
			head = head[:runeStart(t.keep, len(head))]
		}
	}

	src := t.tail()
	srcOff := t.total - int64(len(src)) // stream offset of src[0]
	start := max(0, len(src)-tailBytes)
	// Count lines back from the end, not counting a final newline.
	end := len(src)
	if end > 0 && src[end-1] == '\n' {
		end--
	}
	seen := 0
	for i := end - 1; i >= start; i-- {
		if src[i] == '\n' {
			seen++
			if seen == tailLines {
				start = i + 1
				break
			}
		}
	}
	if start > 0 && src[start-1] != '\n' {
		if i := bytes.IndexByte(src[start:end], '\n'); i >= 0 {
			start += i + 1
		} else {
			for start < end && !utf8.RuneStart(src[start]) {
				start++
			}
		}
	}
	if off := srcOff + int64(start); off < int64(len(head)) {
		start += int(int64(len(head)) - off)
	}
	tail := src[min(start, len(src)):]

	omittedBytes := t.total - int64(len(head)) - int64(len(tail))
	omittedLines := t.newlines - int64(bytes.Count(head, []byte{'\n'})) - int64(bytes.Count(tail, []byte{'\n'}))
	tr = Truncation{
		OutputID:     id,
		Bytes:        t.total,
		Lines:        t.lines(),
		OmittedBytes: omittedBytes,
		OmittedLines: omittedLines,
		Capped:       t.capped(),
	}
	var b strings.Builder
	b.Grow(len(head) + len(tail) + 160)
	b.Write(head)
	if len(head) > 0 && head[len(head)-1] != '\n' {
		b.WriteByte('\n')
	}
	what := commas(omittedBytes) + " bytes"
	if omittedLines > 0 {
		what = fmt.Sprintf("%s %s (%s)", commas(omittedLines), plural(int(min(omittedLines, 2)), "line"), what)
	}
	if tr.Capped {
		fmt.Fprintf(&b, "[... %s cut; output(%q) has the first %s bytes ...]\n", what, id, commas(int64(len(t.keep))))
	} else {
		fmt.Fprintf(&b, "[... %s cut; output(%q) has the full text ...]\n", what, id)
	}
	b.Write(tail)
	return b.String(), tr
}

// full returns everything kept, and a closing note when it was capped. The
// bytes are the boundedText's own: it must not be written to afterwards.
func (t *boundedText) full() (kept []byte, note string) {
	if !t.capped() {
		return t.keep, ""
	}
	kept = trimPartialRune(t.keep)
	if len(kept) > 0 && kept[len(kept)-1] != '\n' {
		note = "\n"
	}
	note += fmt.Sprintf("[... output capped: %s more bytes were not kept ...]\n", commas(t.total-int64(len(kept))))
	return kept, note
}

// nthIndex returns the index of the nth (from 1) occurrence of c, or -1.
func nthIndex(b []byte, c byte, n int) int {
	off := 0
	for ; n > 0; n-- {
		i := bytes.IndexByte(b[off:], c)
		if i < 0 {
			return -1
		}
		off += i + 1
	}
	return off - 1
}

// trimPartialRune drops an incomplete UTF-8 sequence from the end of b.
func trimPartialRune(b []byte) []byte {
	for j := len(b) - 1; j >= 0 && j >= len(b)-utf8.UTFMax; j-- {
		if utf8.RuneStart(b[j]) {
			if !utf8.FullRune(b[j:]) {
				return b[:j]
			}
			break
		}
	}
	return b
}

// runeStart moves i back (at most 3 bytes) to the start of a UTF-8 rune.
func runeStart[T string | []byte](b T, i int) int {
	for j := 0; j < utf8.UTFMax && i > 0 && i < len(b) && !utf8.RuneStart(b[i]); j++ {
		i--
	}
	return i
}

func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// budget bounds what one request collects besides text.
type budget struct {
	imageBytes int
	jsonBytes  int
	events     int
	dropped    Dropped
}

func newBudget() *budget {
	return &budget{imageBytes: maxImageBytes, jsonBytes: maxJSONBytes, events: maxStatusEvents}
}

// cellSink is the runtimes.Sink of one cell.
type cellSink struct {
	index    int
	out      boundedText
	markdown strings.Builder
	mdCut    int64
	images   []Image
	jsons    []json.RawMessage
	events   []StatusEvent
	budget   *budget
	noted    string // the last note: why the sandbox failed the cell
}

var _ runtimes.Sink = (*cellSink)(nil)

func newCellSink(index int, b *budget) *cellSink {
	return &cellSink{index: index, budget: b}
}

// Stdout implements runtimes.Sink.
func (s *cellSink) Stdout(text string) { s.out.WriteString(text) }

// Stderr implements runtimes.Sink.
func (s *cellSink) Stderr(text string) { s.out.WriteString(text) }

// Status implements runtimes.Sink.
func (s *cellSink) Status(kind, message string) {
	if s.budget.events <= 0 {
		s.budget.dropped.StatusEvents++
		return
	}
	s.budget.events--
	if len(message) > maxEventBytes {
		message = message[:runeStart(message, maxEventBytes)] + "..."
	}
	s.events = append(s.events, StatusEvent{Cell: s.index, Kind: clip(kind, 64), Message: message})
}

// imageTypes are the image MIME types shown as images, best first.
var imageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// Display implements runtimes.Sink. A bundle shows at most one image and
// one text: text/markdown, else text/plain, else text/html converted to
// Markdown, else the JSON text. A kept image stands for the bundle, so its
// text fallbacks are not added to the output.
func (s *cellSink) Display(b runtimes.Bundle, result bool) {
	shownImage := false
	for _, mt := range imageTypes {
		data, ok := b[mt]
		if !ok {
			continue
		}
		shownImage = s.image(mt, data)
		break
	}
	jsonText, hasJSON := b["application/json"]
	if hasJSON {
		s.json(jsonText)
	}
	md, hasMD := b["text/markdown"]
	html, hasHTML := b["text/html"]
	var htmlMD string
	if hasHTML && !hasMD {
		htmlMD = htmlToMarkdown(html)
		s.addMarkdown(htmlMD)
	}
	if hasMD {
		s.addMarkdown(md)
	}
	if shownImage {
		return
	}
	plain, hasPlain := b["text/plain"]
	switch {
	case hasMD:
		s.displayText(md)
	case hasPlain:
		s.displayText(plain)
	case hasHTML:
		s.displayText(htmlMD)
	case hasJSON:
		s.displayText(jsonText)
	}
}

func (s *cellSink) image(mimeType, data string) bool {
	// The budget first, on the length without white space, counted in
	// place: the data is the guest's, as long as its memory cap allows,
	// and splitting it at its spaces (strings.Fields) took ten times its
	// size of host memory before it was refused (issue 9).
	n := nonSpaceLen(data)
	if n > s.budget.imageBytes {
		s.budget.dropped.Images++
		s.displayText(fmt.Sprintf("[%s not shown: the images of one request are limited to %s bytes]", mimeType, commas(maxImageBytes)))
		return false
	}
	if n < len(data) {
		var b strings.Builder
		b.Grow(n)
		for _, r := range data {
			if !unicode.IsSpace(r) {
				b.WriteRune(r)
			}
		}
		data = b.String()
	}
	if _, err := base64.StdEncoding.DecodeString(data); err != nil || data == "" {
		s.displayText(fmt.Sprintf("[%s not shown: its data is not valid base64]", mimeType))
		return false
	}
	s.budget.imageBytes -= len(data)
	s.images = append(s.images, Image{Data: data, MIMEType: mimeType})
	return true
}

// nonSpaceLen is the length of s without its white space.
func nonSpaceLen(s string) int {
	n := 0
	for _, r := range s {
		if !unicode.IsSpace(r) {
			n += utf8.RuneLen(r)
		}
	}
	return n
}

func (s *cellSink) json(text string) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(text)); err != nil {
		// Keep what the guest sent, as a JSON string.
		buf.Reset()
		enc, _ := json.Marshal(text)
		buf.Write(enc)
	}
	if buf.Len() > s.budget.jsonBytes {
		s.budget.dropped.JSONOutputs++
		return
	}
	s.budget.jsonBytes -= buf.Len()
	s.jsons = append(s.jsons, json.RawMessage(buf.Bytes()))
}

func (s *cellSink) addMarkdown(md string) {
	md = strings.TrimRight(md, "\n")
	if strings.TrimSpace(md) == "" {
		return
	}
	sep := 0
	if s.markdown.Len() > 0 {
		sep = 2
	}
	if room := maxMarkdownBytes - s.markdown.Len() - sep; len(md) > room {
		s.mdCut += int64(len(md))
		return
	}
	if sep > 0 {
		s.markdown.WriteString("\n\n")
	}
	s.markdown.WriteString(md)
}

// displayText adds a display's text to the output on lines of its own.
func (s *cellSink) displayText(text string) {
	if text == "" {
		return
	}
	if !s.out.endsWithNewline() {
		s.out.WriteString("\n")
	}
	s.out.WriteString(text)
	if !strings.HasSuffix(text, "\n") {
		s.out.WriteString("\n")
	}
}

// note adds a line of the sandbox's own to the output.
func (s *cellSink) note(text string) {
	s.noted = text // for the cell_end event
	s.displayText(text)
}

func (s *cellSink) markdownText() string {
	if s.mdCut == 0 {
		return s.markdown.String()
	}
	return s.markdown.String() + fmt.Sprintf("\n\n[... %s bytes of markdown not kept ...]", commas(s.mdCut))
}
