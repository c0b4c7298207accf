package hostcalls

import (
	"fmt"
	"path/filepath"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// diffLineCost is what one line of the two texts costs while they are
// compared: its string header in the split lines (twice), its offset and
// its share of the edit script.
const diffLineCost = 64

// maxDiffLines caps the lines of the two texts of one diff together.
// go-udiff bounds the depth of its search (it gives a correct, if not
// minimal, diff past it), so the work grows with the lines, not their
// product; the cap keeps one call's time to about a second.
const maxDiffLines = 4 << 20

// Diff returns the unified diff (three lines of context) that turns a into
// b, labelled with the names aName and bName; it is empty when a == b.
func Diff(a, b, aName, bName string) (string, error) {
	return diff(a, b, aName, bName, nil)
}

// diff is Diff, taking the memory of each stage from charge (if not nil)
// before it allocates it: the lines and the edit script, then the text.
func diff(a, b, aName, bName string, charge func(int64) error) (string, error) {
	if a == b {
		return "", nil
	}
	lines := countLines(a) + countLines(b)
	tooLarge := func(err error) error {
		return fmt.Errorf("the texts are too large to compare at once (%d and %d lines): %w; diff smaller pieces", countLines(a), countLines(b), err)
	}
	if lines > maxDiffLines {
		return "", tooLarge(fmt.Errorf("more than the %d lines one diff compares", maxDiffLines))
	}
	// The text is at most both inputs plus a prefix per line and the hunk
	// headers; go-udiff builds it in a strings.Builder (up to twice that
	// while it grows).
	need := diffLineCost*int64(lines) + 2*(int64(len(a)+len(b))+4*int64(lines)+int64(len(aName)+len(bName))+64)
	if charge != nil {
		if err := charge(need); err != nil {
			return "", tooLarge(err)
		}
	}
	edits := udiff.Lines(a, b)
	out, err := udiff.ToUnified(aName, bName, a, edits, udiff.DefaultContextLines)
	if err != nil {
		return "", fmt.Errorf("internal error: %v", err)
	}
	return out, nil
}

// diffFiles serves diff(a, b) of two files in the root: the unified diff
// from file a to file b under the headers "a/A" and "b/B", as git diff
// names them (A and B are the paths relative to the root). Each file is
// read as read() reads it, within the read cap.
func (d *Dispatcher) diffFiles(pa, pb string, charge func(int64) error) (string, error) {
	texts := [2]string{}
	names := [2]string{}
	for i, p := range []string{pa, pb} {
		if p == "" {
			return "", fmt.Errorf("diff: the %s path is empty; give two file paths, as in diff('old.txt', 'new.txt'), or diff(text_a, text_b, text=True) to compare texts", [2]string{"first", "second"}[i])
		}
		rel, err := d.fs.Resolve("diff", p)
		if err != nil {
			return "", err
		}
		text, err := d.fs.read(p, 1, 0, charge)
		if err != nil {
			return "", diffReadError(p, err)
		}
		texts[i] = text
		names[i] = "ab"[i:i+1] + "/" + strings.TrimPrefix(filepath.ToSlash(rel), "./")
	}
	s, err := diff(texts[0], texts[1], names[0], names[1], charge)
	if err != nil {
		return "", fmt.Errorf("diff: %w", err)
	}
	return s, nil
}

// diffReadError renames a read's error as diff's: the guest called diff.
func diffReadError(p string, err error) error {
	if fe, ok := err.(*FSError); ok {
		reason := fe.Reason
		switch {
		case strings.HasPrefix(reason, "it is a directory"):
			reason = "it is a directory; diff compares two files"
		case strings.HasPrefix(reason, "no such file"):
			reason += diffTextHint
		}
		return &FSError{Op: "diff", Path: p, Reason: reason, Err: fe.Err}
	}
	return fmt.Errorf("diff(%s): %w", quote(p), err)
}

// diffTextHint tells a guest that passed texts where diff wants paths how
// to compare texts.
const diffTextHint = " (diff(a, b) compares two files; diff(text_a, text_b, text=True), or {text: true} in JavaScript, compares two texts)"

// countLines is the number of lines of s; the last may lack its newline.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
