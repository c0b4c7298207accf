package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/wasmeval/wasmeval/tape"
)

// checkRecordDir checks ManagerOptions.RecordDir.
func checkRecordDir(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("sandbox: ManagerOptions.RecordDir: %w; give an existing folder for the sessions' tapes", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("sandbox: ManagerOptions.RecordDir %s is not a folder; give an existing folder for the sessions' tapes", dir)
	}
	return nil
}

// recordTo gives the session id a tape file of its own in RecordDir.
func (m *Manager) recordTo(id string, so *SessionOptions) error {
	so.Record, so.ownRecord = nil, false
	if m.opts.RecordDir == "" {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(m.opts.RecordDir, id+".wtape"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("sandbox: the session's tape: %w", err)
	}
	so.Record, so.ownRecord = f, true
	return nil
}

// closeRecord closes a tape file the session owns.
func closeRecord(so SessionOptions) error {
	if c, ok := so.Record.(io.Closer); ok && so.ownRecord {
		return c.Close()
	}
	return nil
}

// ErrNotRecorded is Manager.Tape's error for a session that has no tape
// (the manager was made without ManagerOptions.RecordDir).
var ErrNotRecorded = errors.New("sandbox: the session is not recorded")

// Tape returns the owner's session's tape so far: every request that has
// finished (while a request runs, those that finished more than
// tape.FlushDelay before), as a complete tape (package tape) that replays
// on its own.
// An unknown session is ErrNoSession; one without a tape ErrNotRecorded.
func (m *Manager) Tape(owner, id string) ([]byte, error) {
	r, n, err := m.OpenTape(owner, id)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("sandbox: reading the session's tape: %w", err)
	}
	return b, nil
}

// OpenTape is Tape as a reader of the tape's n bytes, for a caller that
// streams it (serve's GET /v1/sessions/{id}/tape): a tape is as long as
// its guest makes it (random bytes are recorded as read), and a copy in
// memory at every request would let one tenant's tape take the server's
// memory many times over. The caller closes r.
func (m *Manager) OpenTape(owner, id string) (r io.ReadCloser, n int64, err error) {
	s, err := m.Session(owner, id)
	if err != nil {
		return nil, 0, err
	}
	f, ok := s.opts.Record.(*os.File)
	if !ok || !s.opts.ownRecord || s.bound == nil || s.bound.tape == nil {
		return nil, 0, ErrNotRecorded
	}
	// An idle session's tape is ended now. A running request's is not (it
	// would end the tape in its middle): once the wait for it has taken
	// tape.FlushDelay, every request that finished before has its frame.
	ctx, cancel := context.WithTimeout(context.Background(), tape.FlushDelay)
	defer cancel()
	if acquire(ctx, s.sem) == nil {
		err := s.bound.tape.Flush()
		<-s.sem
		if err != nil {
			return nil, 0, fmt.Errorf("sandbox: the session's tape: %w", err)
		}
	}
	n = s.bound.tape.Complete()
	rf, err := os.Open(f.Name()) // the session writes it write-only
	if err != nil {
		return nil, 0, fmt.Errorf("sandbox: reading the session's tape: %w", err)
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(rf, 0, n), rf}, n, nil
}
