package hostcalls

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
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
// outputs the sandbox cut and agents' answers. query keeps the lines that
// contain it (a plain, case-sensitive substring); offset and limit then
// page through the lines that are left, 1-indexed as read's. As the seed's
// helper, one id gives its text ("raw", the default) or {id, lines, text}
// ("json"), several ids a list of them; "text" joins several texts under
// head(1)'s "==> ID <==" headers instead.
func (d *Dispatcher) output(ctx context.Context, m *meter, r *request) (any, error) {
	if len(r.IDs) == 0 {
		return nil, fmt.Errorf("output: give one or more output ids, as in output('out-1'); a cut output's marker and meta.truncated[].outputId name it")
	}
	format := r.Format
	switch format {
	case "":
		format = "raw"
	case "raw", "text", "json":
	default:
		return nil, fmt.Errorf("output: format is %q; give 'raw' (the default: the text, a list of texts for several ids), 'json' ({id, lines, text}) or 'text' (several texts joined under headers)", format)
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
	var results []outputResult
	size := int64(0)
	for _, id := range r.IDs {
		full, err := d.outputText(id)
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
	if format == "raw" {
		texts := make([]string, len(results))
		for i, o := range results {
			texts[i] = o.Text
		}
		return texts, nil
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

// outputText is the full text of output id: an agent's answer
// ("agent://..."), or a cut output of the session (DispatcherOptions.Outputs).
func (d *Dispatcher) outputText(id string) (string, error) {
	if text, ok := d.agents.get(id); ok {
		return text, nil
	}
	if strings.HasPrefix(id, agentScheme) {
		return "", fmt.Errorf("no agent output has this id; %s", d.agents.known())
	}
	if d.opts.Outputs == nil {
		return "", fmt.Errorf("this sandbox keeps no cut outputs (DispatcherOptions.Outputs is nil)")
	}
	return d.opts.Outputs(id)
}

// agentScheme prefixes the ids of agents' answers.
const agentScheme = "agent://"

// Caps of the answers an agentOutputs keeps: past either, the oldest are
// forgotten.
const (
	maxAgentOutputs     = 256
	maxAgentOutputBytes = 16 << 20
)

// agentOutputs keeps the answers of a session's agent() calls, so that
// output('agent://ID') reads them back as the seed's task outputs are. The
// zero value is ready to use; it is safe for concurrent use.
type agentOutputs struct {
	mu    sync.Mutex
	n     int               // answers kept so far, for ids
	texts map[string]string // by id
	order []string          // ids, oldest first
	size  int
}

// add keeps text under a new id "agent://PREFIX-N" and returns the id.
// PREFIX is the agent's label (or its type) with anything but letters,
// digits, '-', '_' and '.' replaced by '-'.
func (a *agentOutputs) add(prefix, text string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.texts == nil {
		a.texts = map[string]string{}
	}
	a.n++
	id := fmt.Sprintf("%s%s-%d", agentScheme, idPrefix(prefix), a.n)
	if len(text) > maxAgentOutputBytes {
		return id // answered, but too large to keep: output() says so
	}
	a.texts[id] = text
	a.order = append(a.order, id)
	a.size += len(text)
	for len(a.order) > maxAgentOutputs || a.size > maxAgentOutputBytes {
		old := a.order[0]
		a.order = a.order[1:]
		a.size -= len(a.texts[old])
		delete(a.texts, old)
	}
	return id
}

// get returns the answer kept under id, which may omit "agent://".
func (a *agentOutputs) get(id string) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !strings.HasPrefix(id, agentScheme) {
		if strings.Contains(id, "://") {
			return "", false
		}
		id = agentScheme + id
	}
	text, ok := a.texts[id]
	return text, ok
}

// known says which ids there are, for an error.
func (a *agentOutputs) known() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case len(a.order) == 0:
		return "no agent() call of this session has answered yet (or its answers were dropped: at most 256, 16 MiB, are kept)"
	case len(a.order) > 10:
		return fmt.Sprintf("there are %d, the latest %s", len(a.order), strings.Join(a.order[len(a.order)-10:], ", "))
	}
	return "there are " + strings.Join(a.order, ", ")
}

// idPrefix makes s fit in an output id.
func idPrefix(s string) string {
	if s == "" {
		s = "agent"
	}
	var b strings.Builder
	for _, c := range s {
		if b.Len() >= 64 {
			break
		}
		if c == '_' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// agentAnswer is the result of an agent call: the answer, and the id under
// which output() reads it back. It is sent as {"result": ..., "output_id": ID}.
type agentAnswer struct {
	Result   any    `json:"result"`
	OutputID string `json:"output_id"`
}

// keepAgentAnswer keeps an agent's answer (a string, or the JSON of a
// structured one) for output() and returns it with its id.
func (d *Dispatcher) keepAgentAnswer(r *request, out any) agentAnswer {
	text := ""
	switch v := out.(type) {
	case string:
		text = v
	case json.RawMessage:
		text = string(v)
	}
	prefix := r.Label
	if prefix == "" {
		prefix = r.AgentType
	}
	return agentAnswer{Result: out, OutputID: d.agents.add(prefix, text)}
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
