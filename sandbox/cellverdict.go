package sandbox

import "context"

type verdictKey struct{}

// WithCellVerdict returns a context under which Eval asks verdict about
// each cell of its request that ran to its end (index is the cell's in the
// request): a non-empty note fails the cell, with the note in its output
// and on its cell_end event as the sandbox's own notes are, and the cells
// after it do not run, as after any failed cell. The python profile fails
// a cell that asked for stdin so, as the seed's tool does, also when the
// code caught the error and went on. verdict is called from the goroutine
// that runs the cells, after the cell's events.
func WithCellVerdict(ctx context.Context, verdict func(index int) string) context.Context {
	return context.WithValue(ctx, verdictKey{}, verdict)
}

// cellVerdict is the note of WithCellVerdict's function for cell index,
// "" when ctx has none.
func cellVerdict(ctx context.Context, index int) string {
	if f, ok := ctx.Value(verdictKey{}).(func(int) string); ok && f != nil {
		return f(index)
	}
	return ""
}
