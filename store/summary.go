package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Summary is what a listing shows of a stored session without loading
// it: its record's metadata, not its Python state or files.
type Summary struct {
	ID    string
	Owner string
	// Saved is when the record was last saved.
	Saved time.Time
	// FuelUsed is State.FuelUsed as last saved.
	FuelUsed uint64
	// HasPython says the record holds a Python state.
	HasPython bool
	// Meta is State.Meta as last saved (opaque to the store).
	Meta []byte
}

// Summarizer is implemented by a Store that can list one owner's records
// without reading their Python states and files, for GET /v1/sessions:
// a server lists the sessions it does not hold (saved before a restart,
// or held by another node) with it.
type Summarizer interface {
	// Summaries returns the records of owner, sorted by id. Checksums are
	// not checked (a Load does that): a record whose metadata cannot be
	// read is left out.
	Summaries(ctx context.Context, owner string) ([]Summary, error)
}

var (
	_ Summarizer = (*Dir)(nil)
	_ Summarizer = (*Postgres)(nil)
)

// Summaries implements Summarizer: it reads the header at the start of
// every record, not its Python state or files.
func (d *Dir) Summaries(ctx context.Context, owner string) ([]Summary, error) {
	ids, err := d.List(ctx)
	if err != nil {
		return nil, err
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	var out []Summary
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, saved, err := d.readHeaderOnly(id)
		if err != nil || h.Owner != owner || h.ID != id {
			continue // gone meanwhile, unreadable, or another owner's
		}
		out = append(out, Summary{ID: id, Owner: h.Owner, Saved: saved, FuelUsed: h.FuelUsed, HasPython: h.PythonLen > 0 || len(h.Frames) > 0, Meta: h.Meta})
	}
	return out, nil
}

// readHeaderOnly returns the header of id's last record and when it was
// saved (its log's modification time).
func (d *Dir) readHeaderOnly(id string) (*dirHeader, time.Time, error) {
	l, err := d.logFor(id)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer l.mu.Unlock()
	l.scanned = nil
	if l.bad != nil {
		return nil, time.Time{}, l.bad
	}
	if l.head == nil {
		return nil, time.Time{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return l.head, l.fi.ModTime(), nil
}

// Summaries implements Summarizer with one query on the sessions table.
func (p *Postgres) Summaries(ctx context.Context, owner string) ([]Summary, error) {
	ctx, cancel := context.WithTimeout(ctx, pgOpTimeout)
	defer cancel()
	rows, err := p.pool.Query(ctx, `SELECT id, saved, fuel_used, cardinality(python) > 0 OR length(pyindex) > 0, meta
		FROM wasmeval_sessions WHERE owner = $1 ORDER BY id`, owner)
	if err != nil {
		return nil, p.fail(ctx, "listing an owner's sessions", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Summary, error) {
		s := Summary{Owner: owner}
		var fuel int64
		var hasPy *bool
		err := row.Scan(&s.ID, &s.Saved, &fuel, &hasPy, &s.Meta)
		s.FuelUsed = uint64(max(fuel, 0))
		s.HasPython = hasPy != nil && *hasPy
		return s, err
	})
	if err != nil {
		return nil, p.fail(ctx, "listing an owner's sessions", err)
	}
	return out, nil
}
