package sandbox

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
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
