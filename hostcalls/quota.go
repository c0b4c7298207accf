package hostcalls

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"sync"
	"syscall"
)

// Default disk quota of a session root: what DispatcherOptions and
// sandbox.SessionOptions give when their quota fields are zero.
const (
	DefaultDiskQuotaBytes = 1 << 30 // 1 GiB
	DefaultDiskQuotaFiles = 100_000
)

// ErrDiskQuota is what every refusal for the disk quota matches with
// errors.Is. The error itself is a *QuotaError.
var ErrDiskQuota = errors.New("disk quota exceeded")

// QuotaError is a change of the session root that the disk quota refused.
type QuotaError struct {
	// Files is true when the cap on files was the one passed, false for bytes.
	Files bool
	// Used and Max are what the root holds and its cap (bytes, or files).
	Used, Max int64
	// Asked is the growth the change needed.
	Asked int64
}

func (e *QuotaError) Error() string {
	if e.Files {
		return fmt.Sprintf("disk quota exceeded: the session root holds %d of its %d files and directories; remove some first", e.Used, e.Max)
	}
	return fmt.Sprintf("disk quota exceeded: the session root holds %s of its %s (this change needs %s more); remove or shorten files first",
		sizeText(e.Used), sizeText(e.Max), sizeText(e.Asked))
}

// Is makes errors.Is(err, ErrDiskQuota) true.
func (e *QuotaError) Is(target error) bool { return target == ErrDiskQuota }

// sizeText writes n bytes for people: "512 bytes", "3.5 MiB", "1 GiB".
func sizeText(n int64) string {
	const (
		kib = 1 << 10
		mib = 1 << 20
		gib = 1 << 30
		tib = 1 << 40
	)
	unit, name := int64(0), ""
	switch {
	case n >= tib:
		unit, name = tib, "TiB"
	case n >= gib:
		unit, name = gib, "GiB"
	case n >= mib:
		unit, name = mib, "MiB"
	case n >= kib:
		unit, name = kib, "KiB"
	default:
		return fmt.Sprintf("%d bytes", n)
	}
	if n%unit == 0 {
		return fmt.Sprintf("%d %s", n/unit, name)
	}
	return fmt.Sprintf("%.1f %s", float64(n)/float64(unit), name)
}

// DiskQuota bounds what one session stores in its root: bytes and files.
// One DiskQuota serves a session's guest filesystem (wasm.GuestFS) and its
// file helpers (FS), which both record every change they make through it.
//
// # What counts
//
// Every directory entry below the root counts as one file: regular files,
// directories, symbolic links, hard links (each link is an entry). Bytes are
// the logical sizes of regular files, one per entry (a file with two hard
// links counts twice, as a copy of the root would hold it twice; a sparse
// file counts at its full size), plus the length of each symbolic link's
// target. A regular file that is removed while the guest holds it open is
// released when the guest closes it, for its space lives until then.
//
// The counts start from a walk of the root when the quota is made (symbolic
// links are not followed), and are then kept by the changes the session
// makes. Changes made by others (the host, another session on the same
// root) are not seen until a new DiskQuota walks the root again. A root
// that already holds more than its caps works, but may not grow.
//
// # Locking
//
// A change is measured, made and recorded with the lock held (Lock, the
// *Locked methods, Unlock), so that what a change did is known exactly
// even when the guest and several helpers change the same file at once.
// Hold the lock only around one change of the filesystem.
type DiskQuota struct {
	mu                 sync.Mutex
	maxBytes, maxFiles int64 // < 0: no cap
	bytes, files       int64
	open               map[fileKey]int // regular files open in the guest: how many times
}

type fileKey struct{ dev, ino uint64 }

// NewDiskQuota returns the quota of the session root dir with caps of
// maxBytes and maxFiles. Zero means the default (DefaultDiskQuotaBytes,
// DefaultDiskQuotaFiles), a negative value no cap. It walks the root to
// count what it already holds; the walk stops past the file cap (the root
// is then over quota and may not grow).
func NewDiskQuota(dir string, maxBytes, maxFiles int64) (*DiskQuota, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("hostcalls: session root %q is not an absolute path", dir)
	}
	if maxBytes == 0 {
		maxBytes = DefaultDiskQuotaBytes
	}
	if maxFiles == 0 {
		maxFiles = DefaultDiskQuotaFiles
	}
	q := &DiskQuota{maxBytes: max(maxBytes, -1), maxFiles: max(maxFiles, -1), open: map[fileKey]int{}}
	if maxBytes < 0 && maxFiles < 0 {
		return q, nil // nothing to compare with: no need to count what is there
	}
	errStop := errors.New("stop")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // an unreadable folder: its content cannot be counted
		}
		if p == dir {
			return nil
		}
		info, err := d.Info() // an lstat: links are counted, not followed
		if err != nil {
			return nil // removed while walking
		}
		q.files++
		q.bytes = addSat(q.bytes, entryBytes(info))
		if q.maxFiles >= 0 && q.files > q.maxFiles {
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		return nil, fmt.Errorf("hostcalls: counting the session root for its disk quota: %w", err)
	}
	return q, nil
}

// Usage returns what the root holds, as the quota counts it.
func (q *DiskQuota) Usage() (bytes, files int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.bytes, q.files
}

// Limits returns the caps; a negative value means none.
func (q *DiskQuota) Limits() (maxBytes, maxFiles int64) {
	return q.maxBytes, q.maxFiles
}

// Lock starts a change of the root: measure it, make it, record it, then Unlock.
func (q *DiskQuota) Lock() { q.mu.Lock() }

// Unlock ends a change started with Lock.
func (q *DiskQuota) Unlock() { q.mu.Unlock() }

// CheckLocked returns a *QuotaError when growing the root by bytes and
// files would pass a cap; growth of zero or less always passes, so a root
// over its quota can still shrink. It records nothing.
func (q *DiskQuota) CheckLocked(bytes, files int64) error {
	if files > 0 && q.maxFiles >= 0 && files > q.maxFiles-q.files {
		return &QuotaError{Files: true, Used: q.files, Max: q.maxFiles, Asked: files}
	}
	if bytes > 0 && q.maxBytes >= 0 && bytes > q.maxBytes-q.bytes {
		return &QuotaError{Used: q.bytes, Max: q.maxBytes, Asked: bytes}
	}
	return nil
}

// AddLocked records that the root grew by bytes and files (shrank, when
// negative). The counts never go below zero.
func (q *DiskQuota) AddLocked(bytes, files int64) {
	q.bytes = max(addSat(q.bytes, bytes), 0)
	q.files = max(q.files+files, 0)
}

// OpenedLocked records that the guest opened a regular file; info is its
// stat. Directories and other kinds are ignored.
func (q *DiskQuota) OpenedLocked(info fs.FileInfo) {
	if k, ok := keyOf(info); ok && info.Mode().IsRegular() {
		q.open[k]++
	}
}

// ClosedLocked records that the guest closed a regular file it opened;
// info is its stat just before the close. When that was the last open
// handle of a file with no links left, its bytes are released.
func (q *DiskQuota) ClosedLocked(info fs.FileInfo) {
	k, ok := keyOf(info)
	if !ok || !info.Mode().IsRegular() || q.open[k] == 0 {
		return
	}
	if q.open[k]--; q.open[k] > 0 {
		return
	}
	delete(q.open, k)
	if links(info) == 0 {
		q.AddLocked(-info.Size(), 0)
	}
}

// RemovedLocked records that an entry went away (unlink, rmdir, or a
// rename over it); info is its Lstat from before. The last link of a
// regular file that the guest holds open keeps its bytes until it is
// closed (ClosedLocked).
func (q *DiskQuota) RemovedLocked(info fs.FileInfo) {
	q.AddLocked(-q.releasableLocked(info), -1)
}

// releasableLocked is how many bytes removing the entry info describes
// gives back now.
func (q *DiskQuota) releasableLocked(info fs.FileInfo) int64 {
	if k, ok := keyOf(info); ok && info.Mode().IsRegular() && links(info) <= 1 && q.open[k] > 0 {
		return 0
	}
	return entryBytes(info)
}

// entryBytes is what one directory entry counts against the quota's bytes:
// a regular file's size, a symbolic link's target length, zero otherwise.
func entryBytes(info fs.FileInfo) int64 {
	if m := info.Mode(); m.IsRegular() || m&fs.ModeSymlink != 0 {
		return max(info.Size(), 0)
	}
	return 0
}

// links returns the number of hard links of the file info describes (1
// when the platform does not say).
func links(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int64(st.Nlink)
	}
	return 1
}

func keyOf(info fs.FileInfo) (fileKey, bool) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fileKey{uint64(st.Dev), st.Ino}, true
	}
	return fileKey{}, false
}

// growthOf is how much a change that takes a file from size before to
// size after, with links hard links, grows the quota's bytes: every link
// counts. A file with no links left (removed while open) counts once.
// The product saturates instead of overflowing.
func growthOf(before, after, links int64) int64 {
	return mulSat(after-before, max(links, 1))
}

func addSat(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}

func mulSat(a, n int64) int64 {
	switch {
	case a == 0 || n == 0:
		return 0
	case a > 0 && a > math.MaxInt64/n:
		return math.MaxInt64
	case a < 0 && a < math.MinInt64/n:
		return math.MinInt64
	}
	return a * n
}
