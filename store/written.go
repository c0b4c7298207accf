package store

import (
	"context"
	"sync/atomic"
)

// writtenKey carries the counter of WithWritten in a context.
type writtenKey struct{}

// WithWritten returns a context under which a Save (of any store here)
// adds to n the bytes it wrote to the store's backend: a dir store's
// record (or whole log), a PostgreSQL store's rows. It is what a save
// costs the backend, for metrics (wasmeval_persist_bytes_total).
func WithWritten(ctx context.Context, n *atomic.Int64) context.Context {
	return context.WithValue(ctx, writtenKey{}, n)
}

// addWritten adds n bytes to ctx's WithWritten counter, if any.
func addWritten(ctx context.Context, n int64) {
	if c, ok := ctx.Value(writtenKey{}).(*atomic.Int64); ok {
		c.Add(n)
	}
}
