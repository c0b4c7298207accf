package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

func init() {
	Register("postgres", openPostgres)
	Register("postgresql", openPostgres)
}

// Timeouts of the PostgreSQL store: how long one operation may wait for
// the database before it fails with ErrUnavailable (an eval then answers
// 503 rather than hanging on a database that is gone).
const (
	pgConnectTimeout = 5 * time.Second
	pgOpTimeout      = 30 * time.Second
	pgLeaseTimeout   = 10 * time.Second
)

// pgSchema makes the tables: one row per session (its record and the
// record's checksum), one per file of a session root, the chunks of the
// sessions' Python frames, one lease per session. A lease row outlives a
// released lease so that its epoch only grows. A session's row holds its
// Python index (pyindex) and the hashes of its frames in order (python);
// the frames (zstd, so not compressed again: STORAGE EXTERNAL) are rows
// of wasmeval_chunks by content: a save after a light eval inserts the
// one frame it made and updates the session's row, not the whole state.
const pgSchema = `
CREATE TABLE IF NOT EXISTS wasmeval_sessions (
	id        text PRIMARY KEY,
	owner     text NOT NULL,
	artifact  text NOT NULL,
	format    integer NOT NULL,
	epoch     bigint NOT NULL,
	options   bytea NOT NULL,
	python    bytea[] NOT NULL,
	outputs   bytea NOT NULL,
	js        bytea NOT NULL,
	meta      bytea NOT NULL,
	fuel_used bigint NOT NULL,
	checksum  bytea NOT NULL,
	saved     timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE wasmeval_sessions ADD COLUMN IF NOT EXISTS pyindex bytea NOT NULL DEFAULT '';
CREATE TABLE IF NOT EXISTS wasmeval_files (
	id       text NOT NULL REFERENCES wasmeval_sessions (id) ON DELETE CASCADE,
	path     text NOT NULL,
	mode     bigint NOT NULL,
	mod_time bigint NOT NULL,
	data     bytea NOT NULL,
	checksum bytea NOT NULL,
	PRIMARY KEY (id, path)
);
CREATE TABLE IF NOT EXISTS wasmeval_chunks (
	id   text NOT NULL REFERENCES wasmeval_sessions (id) ON DELETE CASCADE,
	hash bytea NOT NULL,
	data bytea NOT NULL,
	PRIMARY KEY (id, hash)
);
ALTER TABLE wasmeval_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
ALTER TABLE wasmeval_files ALTER COLUMN data SET STORAGE EXTERNAL;
CREATE TABLE IF NOT EXISTS wasmeval_leases (
	id      text PRIMARY KEY,
	holder  text NOT NULL,
	addr    text NOT NULL,
	epoch   bigint NOT NULL,
	expires timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS wasmeval_leases_holder ON wasmeval_leases (holder);
`

// Postgres is the postgres:// Store and Leaser: session records, files
// and leases in three tables of one PostgreSQL database, shared by every
// node (Open("postgres://user@host/db")). A Save checks the session's
// lease in the same transaction, so a write from a node whose lease was
// taken over fails with ErrStaleEpoch even before the new holder wrote.
type Postgres struct {
	pool *pgxpool.Pool
	dsn  string // the URL without its password, for messages
	// frames are the frames of each id this node last saved, whose Sum
	// it checked then: a save checks only the frames it has not seen.
	framesMu sync.Mutex
	frames   map[string]map[[32]byte]bool
}

var (
	_ Store  = (*Postgres)(nil)
	_ Leaser = (*Postgres)(nil)
	_ Aged   = (*Postgres)(nil)
)

func openPostgres(rawURL string) (Store, error) { return OpenPostgres(context.Background(), rawURL) }

// OpenPostgres connects to the database rawURL names (any URL or
// parameter that pgx takes, like pool_max_conns) and makes the tables
// when they are missing.
func OpenPostgres(ctx context.Context, rawURL string) (*Postgres, error) {
	redacted := rawURL
	if u, err := url.Parse(rawURL); err == nil {
		redacted = u.Redacted()
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("store: postgres URL %q: %v; want postgres://user[:password]@host[:port]/database", redacted, err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = pgConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: postgres %s: %w", redacted, err)
	}
	p := &Postgres{pool: pool, dsn: redacted, frames: map[string]map[[32]byte]bool{}}
	sctx, cancel := context.WithTimeout(ctx, pgOpTimeout)
	defer cancel()
	// Nodes that start together would race on CREATE TABLE IF NOT
	// EXISTS (it is not atomic in PostgreSQL): one at a time.
	err = pgx.BeginFunc(sctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(sctx, `SELECT pg_advisory_xact_lock(7226571846)`); err != nil {
			return err
		}
		_, err := tx.Exec(sctx, pgSchema)
		return err
	})
	if err != nil {
		pool.Close()
		return nil, p.fail(sctx, "making the tables", err)
	}
	return p, nil
}

// fail wraps a database error: errors of reaching the database wrap
// ErrUnavailable, and name the database.
func (p *Postgres) fail(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"), // connection exception
			pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", // shutting down, starting up
			pgErr.Code == "53300": // too many connections
		default:
			return fmt.Errorf("store: postgres %s: %w", op, err)
		}
	} else if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("store: postgres %s: %w", op, err) // the caller gave up
	}
	return fmt.Errorf("%w: postgres at %s, %s: %w", ErrUnavailable, p.dsn, op, err)
}

// Ping checks that the database answers.
func (p *Postgres) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pgLeaseTimeout)
	defer cancel()
	return p.fail(ctx, "ping", p.pool.Ping(ctx))
}

// Close closes the connections.
func (p *Postgres) Close() error {
	p.pool.Close()
	return nil
}

// pgFile is a file's row without its data: what the record's checksum
// covers of it.
type pgFile struct {
	mode, modTime int64
	sum           []byte
}

// recordSum is the checksum of a session row: its fields, and the path,
// mode, time and checksum of every file, so that a lost, added or altered
// file row fails the check as an altered field does.
func recordSum(st *State, files map[string]pgFile) []byte {
	h := sha256.New()
	field := func(b []byte) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	num := func(v int64) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(v))
		h.Write(n[:])
	}
	field([]byte(st.ID))
	field([]byte(st.Owner))
	field([]byte(st.Artifact))
	num(int64(st.Format))
	field(st.Options)
	field(st.Python)
	num(int64(len(st.PythonFrames)))
	for _, f := range st.PythonFrames {
		field(f.Sum[:])
	}
	field(st.Outputs)
	field(st.JS)
	field(st.Meta)
	num(int64(st.FuelUsed))
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		f := files[p]
		field([]byte(p))
		num(f.mode)
		num(f.modTime)
		field(f.sum)
	}
	return h.Sum(nil)
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Save writes st at epoch in one transaction: refused with ErrStaleEpoch
// when the stored state or the session's lease has a higher epoch. The
// transaction takes two round trips to the database (each a pipelined
// batch): the checks and the stored files' manifest, then the writes and
// the commit.
func (p *Postgres) Save(ctx context.Context, st *State, epoch int64) error {
	if err := CheckID(st.ID); err != nil {
		return err
	}
	for _, f := range st.Files {
		if err := CheckPath(f.Path); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, pgOpTimeout)
	defer cancel()
	p.framesMu.Lock()
	known := p.frames[st.ID] // the frames of this node's last save of the id
	p.framesMu.Unlock()
	for i, f := range st.PythonFrames {
		if !known[f.Sum] {
			if err := checkFrame(st.ID, i, f); err != nil {
				return err
			}
		}
	}
	rec := *st
	rec.Format = Format
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return p.fail(ctx, "saving session "+st.ID, err)
	}
	defer conn.Release()
	committed := false
	defer func() {
		if !committed {
			rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), pgLeaseTimeout)
			defer rcancel()
			if _, err := conn.Exec(rctx, "ROLLBACK"); err != nil {
				conn.Conn().Close(rctx) // in an unknown state: not back to the pool
			}
		}
	}()
	var check pgx.Batch
	check.Queue("BEGIN")
	// One Save of an id at a time: the manifest read below must not
	// change under us.
	check.Queue(`SELECT pg_advisory_xact_lock(hashtextextended($1, 16))`, st.ID)
	check.Queue(`SELECT (SELECT epoch FROM wasmeval_leases WHERE id = $1), (SELECT epoch FROM wasmeval_sessions WHERE id = $1)`, st.ID)
	check.Queue(`SELECT hash FROM wasmeval_chunks WHERE id = $1`, st.ID)
	if !st.FullFiles {
		check.Queue(`SELECT path, mode, mod_time, checksum FROM wasmeval_files WHERE id = $1`, st.ID)
	}
	files := map[string]pgFile{}
	stored := map[string]bool{} // the chunks stored for the id
	var leaseEpoch, storedEpoch *int64
	err = func() error {
		br := conn.SendBatch(ctx, &check)
		defer br.Close()
		for range 2 {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		if err := br.QueryRow().Scan(&leaseEpoch, &storedEpoch); err != nil {
			return err
		}
		hs, err := br.Query()
		if err != nil {
			return err
		}
		for hs.Next() {
			var h []byte
			if err := hs.Scan(&h); err != nil {
				hs.Close()
				return err
			}
			stored[string(h)] = true
		}
		hs.Close()
		if err := hs.Err(); err != nil {
			return err
		}
		if st.FullFiles {
			return br.Close()
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		for rows.Next() {
			var path string
			var f pgFile
			if err := rows.Scan(&path, &f.mode, &f.modTime, &f.sum); err != nil {
				rows.Close()
				return err
			}
			files[path] = f
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		return br.Close()
	}()
	if err != nil {
		return p.fail(ctx, "saving session "+st.ID, err)
	}
	if leaseEpoch != nil && *leaseEpoch > epoch {
		return fmt.Errorf("%w: session %s is leased at epoch %d, this write is at %d (another node took it over)", ErrStaleEpoch, st.ID, *leaseEpoch, epoch)
	}
	if storedEpoch != nil && *storedEpoch > epoch {
		return fmt.Errorf("%w: session %s is stored at epoch %d, this write is at %d", ErrStaleEpoch, st.ID, *storedEpoch, epoch)
	}
	if storedEpoch == nil && !st.FullFiles {
		// A delta alone is never a record: the caller saves the whole set.
		return fmt.Errorf("%w: session %s has no record for a delta of its files to apply to", ErrNotFound, st.ID)
	}
	var write pgx.Batch
	if st.FullFiles {
		write.Queue(`DELETE FROM wasmeval_files WHERE id = $1`, st.ID)
	}
	var fileOps pgx.Batch
	for _, f := range st.Files {
		if f.Deleted {
			if !st.FullFiles {
				delete(files, f.Path)
				fileOps.Queue(`DELETE FROM wasmeval_files WHERE id = $1 AND path = $2`, st.ID, f.Path)
			}
			continue
		}
		sum := sha256.Sum256(f.Data)
		files[f.Path] = pgFile{mode: int64(f.Mode), modTime: f.ModTime, sum: sum[:]}
		fileOps.Queue(`INSERT INTO wasmeval_files (id, path, mode, mod_time, data, checksum) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (id, path) DO UPDATE SET mode = EXCLUDED.mode, mod_time = EXCLUDED.mod_time, data = EXCLUDED.data, checksum = EXCLUDED.checksum`,
			st.ID, f.Path, int64(f.Mode), f.ModTime, nonNil(f.Data), sum[:])
	}
	// The record first: the files' and frames' rows reference it.
	hashes := make([][]byte, len(rec.PythonFrames))
	saved := make(map[[32]byte]bool, len(rec.PythonFrames))
	for i := range rec.PythonFrames {
		f := &rec.PythonFrames[i]
		hashes[i] = f.Sum[:]
		saved[f.Sum] = true
	}
	write.Queue(`INSERT INTO wasmeval_sessions (id, owner, artifact, format, epoch, options, python, pyindex, outputs, js, meta, fuel_used, checksum, saved)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, now())
		ON CONFLICT (id) DO UPDATE SET owner = EXCLUDED.owner, artifact = EXCLUDED.artifact, format = EXCLUDED.format,
			epoch = EXCLUDED.epoch, options = EXCLUDED.options, python = EXCLUDED.python, pyindex = EXCLUDED.pyindex, outputs = EXCLUDED.outputs,
			js = EXCLUDED.js, meta = EXCLUDED.meta, fuel_used = EXCLUDED.fuel_used, checksum = EXCLUDED.checksum, saved = now()`,
		rec.ID, rec.Owner, rec.Artifact, rec.Format, epoch, nonNil(rec.Options), hashes, nonNil(rec.Python), nonNil(rec.Outputs),
		nonNil(rec.JS), nonNil(rec.Meta), int64(rec.FuelUsed), recordSum(&rec, files))
	// The bytes the save sends to be written (WithWritten): the record's
	// row, the new frames' and the changed files' rows.
	written := int64(len(rec.ID) + len(rec.Owner) + len(rec.Artifact) + len(rec.Options) + 32*len(hashes) +
		len(rec.Python) + len(rec.Outputs) + len(rec.JS) + len(rec.Meta) + 32 + 3*8)
	for _, f := range st.Files {
		written += int64(len(f.Path) + len(f.Data))
		if !f.Deleted {
			written += 32 + 2*8
		}
	}
	queued := map[[32]byte]bool{}
	for _, f := range rec.PythonFrames {
		if !stored[string(f.Sum[:])] && !queued[f.Sum] {
			queued[f.Sum] = true
			written += int64(32 + len(f.Data))
			write.Queue(`INSERT INTO wasmeval_chunks (id, hash, data) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, st.ID, f.Sum[:], nonNil(f.Data))
		}
	}
	if len(stored) > 0 {
		write.Queue(`DELETE FROM wasmeval_chunks WHERE id = $1 AND hash <> ALL($2)`, st.ID, hashes)
	}
	write.QueuedQueries = append(write.QueuedQueries, fileOps.QueuedQueries...)
	write.Queue("COMMIT")
	if err := conn.SendBatch(ctx, &write).Close(); err != nil {
		return p.fail(ctx, "saving session "+st.ID, err)
	}
	committed = true
	addWritten(ctx, written)
	p.framesMu.Lock()
	p.frames[st.ID] = saved
	p.framesMu.Unlock()
	return nil
}

// Load reads the state of id and checks it against its checksums: one
// round trip (a read-only snapshot, the record, its files).
func (p *Postgres) Load(ctx context.Context, id, artifact string) (*State, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, pgOpTimeout)
	defer cancel()
	var b pgx.Batch
	b.Queue("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
	b.Queue(`SELECT owner, artifact, format, epoch, options, python, pyindex, outputs, js, meta, fuel_used, checksum
		FROM wasmeval_sessions WHERE id = $1`, id)
	b.Queue(`SELECT path, mode, mod_time, data, checksum FROM wasmeval_files WHERE id = $1 ORDER BY path`, id)
	b.Queue(`SELECT hash, data FROM wasmeval_chunks WHERE id = $1`, id)
	b.Queue("COMMIT")
	s := &State{ID: id}
	var sum []byte
	var fuel int64
	found := true
	type fileRow struct {
		f    File
		mode int64
		sum  []byte
	}
	var rows []fileRow
	var hashes [][]byte
	pieces := map[string][]byte{}
	err := func() error {
		br := p.pool.SendBatch(ctx, &b)
		defer br.Close()
		if _, err := br.Exec(); err != nil {
			return err
		}
		err := br.QueryRow().Scan(&s.Owner, &s.Artifact, &s.Format, &s.Epoch, &s.Options, &hashes, &s.Python,
			&s.Outputs, &s.JS, &s.Meta, &fuel, &sum)
		if errors.Is(err, pgx.ErrNoRows) {
			found = false
		} else if err != nil {
			return err
		}
		fr, err := br.Query()
		if err != nil {
			return err
		}
		for fr.Next() {
			var r fileRow
			if err := fr.Scan(&r.f.Path, &r.mode, &r.f.ModTime, &r.f.Data, &r.sum); err != nil {
				fr.Close()
				return err
			}
			rows = append(rows, r)
		}
		fr.Close()
		if err := fr.Err(); err != nil {
			return err
		}
		cr, err := br.Query()
		if err != nil {
			return err
		}
		for cr.Next() {
			var h, data []byte
			if err := cr.Scan(&h, &data); err != nil {
				cr.Close()
				return err
			}
			pieces[string(h)] = data
		}
		cr.Close()
		if err := cr.Err(); err != nil {
			return err
		}
		return br.Close()
	}()
	if err != nil {
		return nil, p.fail(ctx, "loading session "+id, err)
	}
	switch {
	case !found:
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	case s.Format != Format:
		return nil, fmt.Errorf("%w: session %s was stored in format %d; this wasmeval reads format %d", ErrFormat, id, s.Format, Format)
	case s.Artifact != artifact:
		return nil, fmt.Errorf("%w: session %s was saved by Python build %q, this node runs %q; it is not loaded (run the same wasmeval on every node)", ErrArtifactMismatch, id, s.Artifact, artifact)
	}
	s.FuelUsed = uint64(fuel)
	for i, h := range hashes {
		data, ok := pieces[string(h)]
		f := Frame{Sum: sha256.Sum256(data), Data: data}
		if !ok || !bytes.Equal(f.Sum[:], h) {
			return nil, fmt.Errorf("%w: session %s: Python frame %d is missing or does not match its hash", ErrCorrupt, id, i)
		}
		s.PythonFrames = append(s.PythonFrames, f)
	}
	files := map[string]pgFile{}
	for _, r := range rows {
		if got := sha256.Sum256(r.f.Data); !bytes.Equal(got[:], r.sum) {
			return nil, fmt.Errorf("%w: session %s: file %s does not match its checksum", ErrCorrupt, id, r.f.Path)
		}
		if CheckPath(r.f.Path) != nil {
			return nil, fmt.Errorf("%w: session %s: file path %q is not inside a session root", ErrCorrupt, id, r.f.Path)
		}
		r.f.Mode = fs.FileMode(r.mode)
		files[r.f.Path] = pgFile{mode: r.mode, modTime: r.f.ModTime, sum: r.sum}
		s.Files = append(s.Files, r.f)
	}
	if !bytes.Equal(recordSum(s, files), sum) {
		return nil, fmt.Errorf("%w: session %s does not match its checksum", ErrCorrupt, id)
	}
	s.FullFiles = true
	return s, nil
}

// SavedBefore implements Aged: the ids whose last save (the database's
// clock) is older than t.
func (p *Postgres) SavedBefore(ctx context.Context, t time.Time) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, pgOpTimeout)
	defer cancel()
	rows, err := p.pool.Query(ctx, `SELECT id FROM wasmeval_sessions WHERE saved < $1 ORDER BY id`, t)
	if err != nil {
		return nil, p.fail(ctx, "listing idle sessions", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, p.fail(ctx, "listing idle sessions", err)
	}
	return ids, nil
}

// Delete removes the state of id and its files.
func (p *Postgres) Delete(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, pgOpTimeout)
	defer cancel()
	p.framesMu.Lock()
	delete(p.frames, id)
	p.framesMu.Unlock()
	_, err := p.pool.Exec(ctx, `DELETE FROM wasmeval_sessions WHERE id = $1`, id)
	return p.fail(ctx, "deleting session "+id, err)
}

// List returns the stored ids, sorted.
func (p *Postgres) List(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, pgOpTimeout)
	defer cancel()
	rows, err := p.pool.Query(ctx, `SELECT id FROM wasmeval_sessions ORDER BY id`)
	if err != nil {
		return nil, p.fail(ctx, "listing sessions", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, p.fail(ctx, "listing sessions", err)
	}
	return ids, nil
}

func millis(d time.Duration) int64 { return d.Milliseconds() }

// Acquire implements Leaser. The lease's epoch on a change of holder is
// one more than the higher of the lease's and the stored state's.
func (p *Postgres) Acquire(ctx context.Context, id, holder, addr string, ttl time.Duration) (Lease, error) {
	if err := CheckID(id); err != nil {
		return Lease{}, err
	}
	if holder == "" {
		return Lease{}, errors.New("store: a lease needs a holder (the node id)")
	}
	ctx, cancel := context.WithTimeout(ctx, pgLeaseTimeout)
	defer cancel()
	l := Lease{ID: id, Live: true}
	err := p.pool.QueryRow(ctx, `
		INSERT INTO wasmeval_leases AS l (id, holder, addr, epoch, expires)
		VALUES ($1, $2, $3, COALESCE((SELECT epoch FROM wasmeval_sessions WHERE id = $1), 0) + 1,
			clock_timestamp() + $4 * interval '1 millisecond')
		ON CONFLICT (id) DO UPDATE SET holder = EXCLUDED.holder, addr = EXCLUDED.addr, expires = EXCLUDED.expires,
			epoch = CASE WHEN l.holder = EXCLUDED.holder THEN l.epoch ELSE GREATEST(l.epoch + 1, EXCLUDED.epoch) END
		WHERE l.holder = EXCLUDED.holder OR l.holder = '' OR l.expires <= clock_timestamp()
		RETURNING holder, addr, epoch, expires`, id, holder, addr, millis(ttl)).Scan(&l.Holder, &l.Addr, &l.Epoch, &l.Expires)
	if errors.Is(err, pgx.ErrNoRows) {
		cur, gerr := p.Get(ctx, id)
		if gerr != nil {
			return Lease{}, gerr
		}
		return cur, fmt.Errorf("%w: session %s is held by node %s (%s) until %s", ErrLeaseHeld, id, cur.Holder, cur.Addr, cur.Expires.Format(time.RFC3339Nano))
	}
	if err != nil {
		return Lease{}, p.fail(ctx, "taking the lease on "+id, err)
	}
	return l, nil
}

// Renew implements Leaser.
func (p *Postgres) Renew(ctx context.Context, holder string, ttl time.Duration) (map[string]Lease, error) {
	ctx, cancel := context.WithTimeout(ctx, pgLeaseTimeout)
	defer cancel()
	rows, err := p.pool.Query(ctx, `UPDATE wasmeval_leases SET expires = clock_timestamp() + $2 * interval '1 millisecond'
		WHERE holder = $1 RETURNING id, addr, epoch, expires`, holder, millis(ttl))
	if err != nil {
		return nil, p.fail(ctx, "renewing leases", err)
	}
	defer rows.Close()
	held := map[string]Lease{}
	for rows.Next() {
		l := Lease{Holder: holder, Live: true}
		if err := rows.Scan(&l.ID, &l.Addr, &l.Epoch, &l.Expires); err != nil {
			return nil, p.fail(ctx, "renewing leases", err)
		}
		held[l.ID] = l
	}
	if err := rows.Err(); err != nil {
		return nil, p.fail(ctx, "renewing leases", err)
	}
	return held, nil
}

// Release implements Leaser.
func (p *Postgres) Release(ctx context.Context, id, holder string) error {
	ctx, cancel := context.WithTimeout(ctx, pgLeaseTimeout)
	defer cancel()
	_, err := p.pool.Exec(ctx, `UPDATE wasmeval_leases SET holder = '', addr = '', expires = clock_timestamp()
		WHERE id = $1 AND holder = $2`, id, holder)
	return p.fail(ctx, "releasing the lease on "+id, err)
}

// Get implements Leaser.
func (p *Postgres) Get(ctx context.Context, id string) (Lease, error) {
	ctx, cancel := context.WithTimeout(ctx, pgLeaseTimeout)
	defer cancel()
	l := Lease{ID: id}
	err := p.pool.QueryRow(ctx, `SELECT holder, addr, epoch, expires, expires > clock_timestamp() AND holder <> ''
		FROM wasmeval_leases WHERE id = $1`, id).Scan(&l.Holder, &l.Addr, &l.Epoch, &l.Expires, &l.Live)
	if errors.Is(err, pgx.ErrNoRows) {
		return Lease{}, fmt.Errorf("%w: no lease on %s", ErrNotFound, id)
	}
	if err != nil {
		return Lease{}, p.fail(ctx, "reading the lease on "+id, err)
	}
	return l, nil
}

// StoredOwner implements Leaser.
func (p *Postgres) StoredOwner(ctx context.Context, id string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, pgLeaseTimeout)
	defer cancel()
	var owner string
	err := p.pool.QueryRow(ctx, `SELECT owner FROM wasmeval_sessions WHERE id = $1`, id).Scan(&owner)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return "", p.fail(ctx, "reading the owner of "+id, err)
	}
	return owner, nil
}

// Forget implements Leaser.
func (p *Postgres) Forget(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, pgLeaseTimeout)
	defer cancel()
	_, err := p.pool.Exec(ctx, `DELETE FROM wasmeval_leases WHERE id = $1`, id)
	return p.fail(ctx, "forgetting the lease on "+id, err)
}
