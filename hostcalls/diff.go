package hostcalls

import (
	"fmt"
	"io"
	"strings"
)

// maxDiffCells caps the work of one diff: the product of the line counts
// that differ (after the common head and tail are set aside).
const maxDiffCells = 16 << 20

// Diff returns the unified diff (three lines of context) that turns a into
// b, labelled with the names aName and bName; it is empty when a == b.
func Diff(a, b, aName, bName string) (string, error) {
	return diff(a, b, aName, bName, nil)
}

// diff is Diff, taking the memory of each stage from charge (if not nil)
// before it allocates it: the lines and the edit script, the comparison
// table, the text.
func diff(a, b, aName, bName string, charge func(int64) error) (string, error) {
	if a == b {
		return "", nil
	}
	take := func(n int64) error {
		if charge == nil {
			return nil
		}
		if err := charge(n); err != nil {
			return fmt.Errorf("the texts are too large to compare at once (%d and %d lines): %w; diff smaller pieces", countLines(a), countLines(b), err)
		}
		return nil
	}
	// A line is a 16-byte string header in x or y and a 24-byte op.
	if err := take(40 * int64(countLines(a)+countLines(b))); err != nil {
		return "", err
	}
	x, y := splitLines(a), splitLines(b)
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	mx, my := x[pre:len(x)-suf], y[pre:len(y)-suf]
	if int64(len(mx)+1)*int64(len(my)+1) > maxDiffCells {
		return "", fmt.Errorf("the texts differ in %d and %d lines, too many to compare at once; diff smaller pieces",
			len(mx), len(my))
	}
	// ops over the whole texts.
	type op = diffOp
	ops := make([]op, 0, len(x)+len(y))
	for i := 0; i < pre; i++ {
		ops = append(ops, op{' ', i, i})
	}
	// LCS table over the middle parts.
	n, m := len(mx), len(my)
	if err := take(4 * int64(n+1) * int64(m+1)); err != nil {
		return "", err
	}
	lcs := make([]int32, (n+1)*(m+1))
	at := func(i, j int) int32 { return lcs[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			v := at(i+1, j)
			if w := at(i, j+1); w > v {
				v = w
			}
			if mx[i] == my[j] {
				v = max(v, at(i+1, j+1)+1)
			}
			lcs[i*(m+1)+j] = v
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && mx[i] == my[j] && at(i, j) == at(i+1, j+1)+1:
			ops = append(ops, op{' ', pre + i, pre + j})
			i++
			j++
		case i < n && (j == m || at(i+1, j) >= at(i, j+1)):
			ops = append(ops, op{'-', pre + i, -1})
			i++
		default:
			ops = append(ops, op{'+', -1, pre + j})
			j++
		}
	}
	for k := 0; k < suf; k++ {
		ops = append(ops, op{' ', len(x) - suf + k, len(y) - suf + k})
	}

	lcs = nil
	// The text is written twice: once to measure it, then into a buffer of
	// its size.
	var count byteCounter
	writeHunks(&count, ops, x, y, aName, bName)
	if err := take(int64(count)); err != nil {
		return "", err
	}
	var out strings.Builder
	out.Grow(int(count))
	writeHunks(&out, ops, x, y, aName, bName)
	return out.String(), nil
}

// textWriter is where writeHunks writes: a strings.Builder or a byteCounter.
type textWriter interface {
	io.Writer
	io.StringWriter
}

// byteCounter is a textWriter that only counts.
type byteCounter int64

func (c *byteCounter) Write(p []byte) (int, error) {
	*c += byteCounter(len(p))
	return len(p), nil
}

func (c *byteCounter) WriteString(s string) (int, error) {
	*c += byteCounter(len(s))
	return len(s), nil
}

// diffOp is one line of the edit script: ' ' keep, '-' delete from a, '+'
// insert from b.
type diffOp struct {
	kind byte
	ai   int // index in x (for ' ' and '-')
	bi   int // index in y (for ' ' and '+')
}

// writeHunks writes the unified diff of the edit script ops over the lines
// x and y.
func writeHunks(out textWriter, ops []diffOp, x, y []string, aName, bName string) {
	fmt.Fprintf(out, "--- %s\n+++ %s\n", aName, bName)
	const ctx = 3
	// aPos and bPos count the lines of a and b in ops[:scanned]; hunks
	// start in order, so each op is counted once.
	aPos, bPos, scanned := 0, 0, 0
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		// A hunk: from ctx lines before this change to ctx lines after the
		// last change that is at most 2*ctx keeps away.
		start := max(0, k-ctx)
		end := k
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		for _, o := range ops[scanned:start] {
			if o.kind != '+' {
				aPos++
			}
			if o.kind != '-' {
				bPos++
			}
		}
		scanned = start
		aLen, bLen := 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				aLen++
			}
			if o.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aPos, aLen), hunkRange(bPos, bLen))
		for _, o := range ops[start:end] {
			line := ""
			if o.kind == '+' {
				line = y[o.bi]
			} else {
				line = x[o.ai]
			}
			out.WriteString(string(o.kind))
			out.WriteString(line)
			if !strings.HasSuffix(line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		k = end
	}
}

// hunkRange formats a hunk's range as unified diff does ("l,n", or "l"
// for one line; an empty range names the line before it).
func hunkRange(before, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", before)
	case 1:
		return fmt.Sprintf("%d", before+1)
	}
	return fmt.Sprintf("%d,%d", before+1, n)
}

// countLines is len(splitLines(s)), without the slice.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// splitLines splits s after each newline; the last line may lack one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
