package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// maxDirHeader bounds the header a summary reads: a header lists the
// session's files, so a session of many files has a long one.
const maxDirHeader = 64 << 20

// readHeaderOnly reads the header of id's record (as decodeRecord lays
// it out) and the record's modification time, without its Python state
// and without checking its checksum.
func (d *Dir) readHeaderOnly(id string) (*dirHeader, time.Time, error) {
	f, err := os.Open(filepath.Join(d.sessionDir(id), "state"))
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	pre := make([]byte, len(dirMagic)+12)
	if _, err := io.ReadFull(f, pre); err != nil || string(pre[:len(dirMagic)]) != dirMagic {
		return nil, time.Time{}, fmt.Errorf("%w: session %s: not a wasmeval state record", ErrCorrupt, id)
	}
	if v := binary.LittleEndian.Uint32(pre[len(dirMagic):]); v != Format {
		return nil, time.Time{}, fmt.Errorf("%w: session %s was stored in format %d", ErrFormat, id, v)
	}
	n := binary.LittleEndian.Uint32(pre[len(dirMagic)+8:])
	if n > maxDirHeader || int64(n) > fi.Size() {
		return nil, time.Time{}, fmt.Errorf("%w: session %s: the header runs past the record", ErrCorrupt, id)
	}
	hj := make([]byte, n)
	if _, err := io.ReadFull(f, hj); err != nil {
		return nil, time.Time{}, err
	}
	var h dirHeader
	if err := json.Unmarshal(hj, &h); err != nil {
		return nil, time.Time{}, fmt.Errorf("%w: session %s: %v", ErrCorrupt, id, err)
	}
	return &h, fi.ModTime(), nil
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
