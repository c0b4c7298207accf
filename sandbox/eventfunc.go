package sandbox

import "context"

// EventFuncFrom returns the EventFunc of ctx (WithEventFunc), or nil. A
// wrapper that watches a run's events with its own EventFunc passes them
// on to this one, so that streaming still sees them.
func EventFuncFrom(ctx context.Context) EventFunc {
	fn, _ := ctx.Value(eventKey{}).(EventFunc)
	return fn
}
