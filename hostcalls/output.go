package hostcalls

import (
	"context"
	"fmt"
	"strings"
)

// outputResult is one output in the "json" format of the output op.
type outputResult struct {
	ID string `json:"id"`
	// Lines is how many lines the whole output has, so that a caller can
	// page through it with offset and limit.
	Lines int `json:"lines"`
	// Text is the selected lines, with their ends.
	Text string `json:"text"`
}

// output serves output(*ids, format, query, offset, limit): it reads back
// outputs the sandbox cut. query keeps the lines that contain it (a plain,
// case-sensitive substring); offset and limit then page through the lines
// that are left, 1-indexed as read's.
func (d *Dispatcher) output(ctx context.Context, m *meter, r *request) (any, error) {
	if len(r.IDs) == 0 {
		return nil, fmt.Errorf("output: give one or more output ids, as in output('out-1'); a cut output's marker and meta.truncated[].outputId name it")
	}
	format := r.Format
	if format == "" {
		format = "text"
	}
	if format != "text" && format != "json" {
		return nil, fmt.Errorf("output: format is %q; give 'text' or 'json'", format)
	}
	offset, limit := 1, 0
	if r.Offset != nil {
		offset = *r.Offset
	}
	if offset < 1 {
		return nil, fmt.Errorf("output: offset is %d; lines count from 1", offset)
	}
	if r.Limit != nil {
		if *r.Limit < 1 {
			return nil, fmt.Errorf("output: limit is %d; give 1 or more, or none for every line", *r.Limit)
		}
		limit = *r.Limit
	}
	if d.opts.Outputs == nil {
		return nil, fmt.Errorf("output: this sandbox keeps no cut outputs (DispatcherOptions.Outputs is nil)")
	}
	var results []outputResult
	size := int64(0)
	for _, id := range r.IDs {
		full, err := d.opts.Outputs(id)
		if err != nil {
			return nil, fmt.Errorf("output(%s): %w", quote(id), err)
		}
		// Measure the selection first, then copy it into a buffer of its
		// size: the lines are never split into a slice (an output of empty
		// lines would cost 16 bytes a byte).
		lines, n := selectLines(full, r.Query, offset, limit, nil)
		size += int64(n)
		if size > int64(d.opts.MaxReadBytes) {
			return nil, fmt.Errorf("output: the selected text is larger than the %d MiB one call may return; give offset and limit to read it in parts", d.opts.MaxReadBytes>>20)
		}
		if err := m.grow(ctx, int64(n)); err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		var b strings.Builder
		b.Grow(n)
		selectLines(full, r.Query, offset, limit, &b)
		results = append(results, outputResult{ID: id, Lines: lines, Text: b.String()})
	}
	if format == "json" {
		if len(results) == 1 {
			return results[0], nil
		}
		return results, nil
	}
	if len(results) == 1 {
		return results[0].Text, nil
	}
	// Several outputs: one after the other, each under a header as head(1)
	// draws it.
	headers := int64(0)
	for _, o := range results {
		headers += int64(len("\n==>  <==\n\n") + len(o.ID))
	}
	if err := m.grow(ctx, size+headers); err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	var b strings.Builder
	for i, o := range results {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "==> %s <==\n", o.ID)
		b.WriteString(o.Text)
		if o.Text != "" && !strings.HasSuffix(o.Text, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String(), nil
}

// selectLines walks the lines of text (each with its end): those that
// contain query (all, when it is empty), from the offset-th of them (1 is
// the first), at most limit of them (all, when limit <= 0). It writes them
// to out when out is not nil, and returns how many lines text has and how
// many bytes the selection has.
func selectLines(text, query string, offset, limit int, out *strings.Builder) (lines, size int) {
	kept := 0
	for rest := text; rest != ""; {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		rest = rest[len(line):]
		lines++
		if query != "" && !strings.Contains(line, query) {
			continue
		}
		kept++
		if kept < offset || (limit > 0 && kept >= offset+limit) {
			continue
		}
		size += len(line)
		if out != nil {
			out.WriteString(line)
		}
	}
	return lines, size
}
