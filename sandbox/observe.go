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
)

// Event is one piece of a cell's output, seen while the cell runs.
type Event struct {
	// Cell is the index of the cell in its request.
	Cell int `json:"cell"`
	// Kind says which of the other fields is set.
	Kind EventKind `json:"type"`
	// Text is the text of stdout and stderr events, and the message of
	// status events.
	Text string `json:"text,omitempty"`
	// Status is the kind of a status event, like "log" or "phase".
	Status string `json:"status,omitempty"`
	// Bundle is the MIME bundle of display and result events.
	Bundle map[string]string `json:"data,omitempty"`
}

// EventFunc receives a cell's output as it is produced, in order, from the
// goroutine that runs the cell. It must not block for long: the cell waits
// for it. The Result still holds everything, bounded as usual; events are
// not cut.
type EventFunc func(Event)

type eventKey struct{}

// WithEventFunc returns a context under which Session.Eval also passes each
// piece of output to fn while its cell runs. It is how servers stream.
func WithEventFunc(ctx context.Context, fn EventFunc) context.Context {
	return context.WithValue(ctx, eventKey{}, fn)
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
