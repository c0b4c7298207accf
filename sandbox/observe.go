package sandbox

import (
	"context"

	"github.com/wasmeval/wasmeval/runtimes"
)

// EventKind names what an Event carries.
type EventKind string

// The kinds of Event, in the CodeInterpreter vocabulary.
const (
	// EventStdout and EventStderr carry output text as the guest wrote it.
	EventStdout EventKind = "stdout"
	EventStderr EventKind = "stderr"
	// EventDisplay carries a display() bundle.
	EventDisplay EventKind = "display"
	// EventResult carries the rendering of a cell's last expression value.
	EventResult EventKind = "result"
	// EventStatus carries a status event (log, phase, progress).
	EventStatus EventKind = "status"
	// EventCellStart says a cell begins, with its title and language. It
	// comes before any of the cell's output; cells that never run (those
	// after a failed one) have none.
	EventCellStart EventKind = "cell_start"
	// EventCellEnd says a cell ended, with its status and duration. Every
	// cell_start has one, also when the host could not run the cell (then
	// Status is "error", Text says why, and Eval returns the error).
	EventCellEnd EventKind = "cell_end"
)

// Event is one piece of a cell's output, seen while the cell runs.
type Event struct {
	// Cell is the index of the cell in its request.
	Cell int `json:"cell"`
	// Kind says which of the other fields is set.
	Kind EventKind `json:"type"`
	// Text is the text of stdout and stderr events and the message of
	// status events. On a cell_end it is why the cell failed when the
	// sandbox stopped or failed it (like "timed out after 5 seconds"; a
	// guest's own error is in its stderr events), or why the host could
	// not run it.
	Text string `json:"text,omitempty"`
	// Status is the kind of a status event, like "log" or "phase", and on
	// cell_end how the cell ended, as CellResult.Status: "complete",
	// "error" or "cancelled".
	Status string `json:"status,omitempty"`
	// Bundle is the MIME bundle of display and result events.
	Bundle map[string]string `json:"data,omitempty"`
	// Title and Language are the cell's, as in CellResult, on cell_start
	// and cell_end.
	Title    string `json:"title,omitempty"`
	Language string `json:"language,omitempty"`
	// DurationMs is the cell's run time in milliseconds, as in
	// CellResult, on cell_end (nil on the other kinds).
	DurationMs *int64 `json:"durationMs,omitempty"`
}

// DisplayText is the text that a display or result event adds to its
// cell's output (CellResult.Output): the bundle's Markdown, else its plain
// text, else its HTML as Markdown, else its JSON; "" for an image, which
// stands for its bundle, and for the other kinds of event.
func (e Event) DisplayText() string {
	if e.Kind != EventDisplay && e.Kind != EventResult {
		return ""
	}
	b := e.Bundle
	for _, mt := range imageTypes {
		if _, ok := b[mt]; ok {
			return ""
		}
	}
	if t, ok := b["text/markdown"]; ok {
		return t
	}
	if t, ok := b["text/plain"]; ok {
		return t
	}
	if t, ok := b["text/html"]; ok {
		return htmlToMarkdown(t)
	}
	return b["application/json"]
}

// EventFunc receives a cell's output as it is produced, in order, from the
// goroutine that runs the cell, between the cell's cell_start and cell_end
// events. It must not block for long: the cell waits
// for it. The Result still holds everything, bounded as usual; events are
// not cut.
type EventFunc func(Event)

type eventKey struct{}

// WithEventFunc returns a context under which Session.Eval also passes each
// piece of output to fn while its cell runs. It is how servers stream.
func WithEventFunc(ctx context.Context, fn EventFunc) context.Context {
	return context.WithValue(ctx, eventKey{}, fn)
}

// cellStarted tells the EventFunc of ctx, if any, that cell i begins.
// Nested evals (nest.go) run their cells through evalCells too, so they
// report them to their own caller's EventFunc: a Host call's context has
// none (hostCallContext).
func cellStarted(ctx context.Context, i int, r *CellResult) {
	if fn, _ := ctx.Value(eventKey{}).(EventFunc); fn != nil {
		fn(Event{Cell: i, Kind: EventCellStart, Title: r.Title, Language: r.Language})
	}
}

// cellEnded tells the EventFunc of ctx, if any, that cell i ended as r
// says, with note the sandbox's word on why it failed (a timeout, fuel),
// or that the host failed running it (err).
func cellEnded(ctx context.Context, i int, r *CellResult, note string, err error) {
	fn, _ := ctx.Value(eventKey{}).(EventFunc)
	if fn == nil {
		return
	}
	ms := r.DurationMs
	ev := Event{Cell: i, Kind: EventCellEnd, Title: r.Title, Language: r.Language, Status: string(r.Status), DurationMs: &ms}
	if r.Status != StatusComplete {
		ev.Text = note
	}
	if err != nil {
		ev.Status, ev.Text = string(StatusError), err.Error()
	}
	fn(ev)
}

// observed wraps sink so that the EventFunc of ctx, if any, sees its
// output too.
func observed(ctx context.Context, cell int, sink runtimes.Sink) runtimes.Sink {
	fn, _ := ctx.Value(eventKey{}).(EventFunc)
	if fn == nil {
		return sink
	}
	return &observedSink{Sink: sink, cell: cell, fn: fn}
}

type observedSink struct {
	runtimes.Sink
	cell int
	fn   EventFunc
}

func (o *observedSink) Stdout(text string) {
	o.Sink.Stdout(text)
	o.fn(Event{Cell: o.cell, Kind: EventStdout, Text: text})
}

func (o *observedSink) Stderr(text string) {
	o.Sink.Stderr(text)
	o.fn(Event{Cell: o.cell, Kind: EventStderr, Text: text})
}

func (o *observedSink) Display(b runtimes.Bundle, result bool) {
	o.Sink.Display(b, result)
	kind := EventDisplay
	if result {
		kind = EventResult
	}
	o.fn(Event{Cell: o.cell, Kind: kind, Bundle: map[string]string(b)})
}

func (o *observedSink) Status(kind, message string) {
	o.Sink.Status(kind, message)
	o.fn(Event{Cell: o.cell, Kind: EventStatus, Status: kind, Text: message})
}
