package hostcalls

import (
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
func (d *Dispatcher) output(r *request) (any, error) {
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
	size := 0
	for _, id := range r.IDs {
		full, err := d.opts.Outputs(id)
		if err != nil {
			return nil, fmt.Errorf("output(%s): %w", quote(id), err)
		}
		lines := splitLines(full)
		sel := lines
		if r.Query != "" {
			sel = nil
			for _, l := range lines {
				if strings.Contains(l, r.Query) {
					sel = append(sel, l)
				}
			}
		}
		sel = sel[min(offset-1, len(sel)):]
		if limit > 0 {
			sel = sel[:min(limit, len(sel))]
		}
		text := strings.Join(sel, "")
		size += len(text)
		if size > d.opts.MaxReadBytes {
			return nil, fmt.Errorf("output: the selected text is larger than the %d MiB one call may return; give offset and limit to read it in parts", d.opts.MaxReadBytes>>20)
		}
		results = append(results, outputResult{ID: id, Lines: len(lines), Text: text})
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
