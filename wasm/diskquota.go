package wasm

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Default disk quota of a session root: what NewRootQuota gives for caps
// of zero.
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
		SizeText(e.Used), SizeText(e.Max), SizeText(e.Asked))
}

// Is makes errors.Is(err, ErrDiskQuota) true.
func (e *QuotaError) Is(target error) bool { return target == ErrDiskQuota }

// SizeText writes n bytes for people: "512 bytes", "3.5 MiB", "1 GiB".
func SizeText(n int64) string {
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

// DiskQuota is a session's disk quota as the code that changes its root
// uses it: GuestFS for the guest's own file calls, and the host's file
// helpers (package hostcalls). The rule of what counts lives behind it,
// in one place (RootQuota): callers hand it the Lstat of what they
// change, never a count of their own.
//
// A change is measured, made and recorded between Lock and Unlock, so
// that what it did is known exactly even when the guest and several
// helpers change the same file at once. Hold the lock only around one
// change of the filesystem. Every Check method returns an error matching
// ErrDiskQuota (a *QuotaError) when the change would pass the quota;
// growth of zero or less always passes, so a root over its quota can
// still shrink.
type DiskQuota interface {
	Lock()
	Unlock()
	// CheckLocked checks a change that adds files entries holding bytes
	// (a new directory: 0, 1; a new symlink: its target's length, 1).
	CheckLocked(bytes, files int64) error
	// CheckEntryLocked checks a new entry like info (a hard link of it).
	CheckEntryLocked(info fs.FileInfo) error
	// CheckGrowLocked checks taking the file before (its stat) to size
	// bytes.
	CheckGrowLocked(before fs.FileInfo, size int64) error
	// CheckReplaceLocked checks a new regular file of size bytes taking
	// the place of the entry old (its Lstat; nil when there is none).
	CheckReplaceLocked(old fs.FileInfo, size int64) error
	// AddedLocked records a new entry (info: its Lstat).
	AddedLocked(info fs.FileInfo)
	// ChangedLocked records that a file went from before to after (two
	// stats of the same file).
	ChangedLocked(before, after fs.FileInfo)
	// RemovedLocked records that an entry (info: its Lstat) went away.
	RemovedLocked(info fs.FileInfo)
	// OpenedLocked and ClosedLocked record the guest's open files (info is
	// the file's stat), so that a file removed while open keeps its bytes
	// counted until its last close.
	OpenedLocked(info fs.FileInfo)
	ClosedLocked(info fs.FileInfo)
}

// RootQuota is the DiskQuota of one session root: bytes and files. One
// RootQuota serves a session's guest filesystem (GuestFS) and its file
// helpers, which both record every change they make through it.
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
// # Changes made by others
//
// The counts start from a walk of the root when the quota is made
// (symbolic links are not followed), and are then kept by the changes the
// session makes. Others may change the root too: the host (a fork's copy,
// an operator, a files API), another session or process on the same root.
// So the quota walks the root again, lazily, before it trusts its counts
// for a growing change:
//
//   - when the change would pass a cap (what others removed is then
//     given back; after a change refused despite a walk, the next walk
//     waits ten times as long as that walk took, so a guest retrying in
//     a loop spends at most a tenth of its time walking a large root);
//   - when the session's own growth since the last walk passes half of
//     the room that walk left (at least 1 MiB or 64 entries), so that
//     what others added is seen before the guest could use that room
//     twice.
//
// A walk cannot see the files the guest holds open and has removed; their
// bytes are kept on top of what it finds until their last close. A root
// that already holds more than its caps works, but may not grow. The walk
// stops past the file cap.
type RootQuota struct {
	mu                 sync.Mutex
	dir                string
	maxBytes, maxFiles int64 // < 0: no cap
	bytes, files       int64
	open               map[fileKey]int // regular files open in the guest: how many times
	// held are the bytes of files open in the guest whose last link this
	// quota saw go: counted until their last close.
	held map[fileKey]int64

	// At the last walk: the counts, and when a change was last refused
	// after a walk.
	walkBytes, walkFiles int64
	walkCost             time.Duration
	refusedAt            time.Time
	// walks counts the walks after the first, for tests.
	walks int
}

var _ DiskQuota = (*RootQuota)(nil)

// Least growth since the last walk that walks again (see RootQuota).
const (
	remeasureMinBytes = 1 << 20
	remeasureMinFiles = 64
)

type fileKey struct{ dev, ino uint64 }

// NewRootQuota returns the quota of the session root dir with caps of
// maxBytes and maxFiles. Zero means the default (DefaultDiskQuotaBytes,
// DefaultDiskQuotaFiles), a negative value no cap. It walks the root to
// count what it already holds; the walk stops past the file cap (the root
// is then over quota and may not grow).
func NewRootQuota(dir string, maxBytes, maxFiles int64) (*RootQuota, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("wasm: session root %q is not an absolute path", dir)
	}
	if maxBytes == 0 {
		maxBytes = DefaultDiskQuotaBytes
	}
	if maxFiles == 0 {
		maxFiles = DefaultDiskQuotaFiles
	}
	q := &RootQuota{dir: filepath.Clean(dir), maxBytes: max(maxBytes, -1), maxFiles: max(maxFiles, -1), open: map[fileKey]int{}, held: map[fileKey]int64{}}
	if q.unlimited() {
		return q, nil // nothing to compare with: no need to count what is there
	}
	bytes, files, err := q.walk()
	if err != nil {
		return nil, fmt.Errorf("wasm: counting the session root for its disk quota: %w", err)
	}
	q.bytes, q.files = bytes, files
	q.walkBytes, q.walkFiles = bytes, files
	return q, nil
}

func (q *RootQuota) unlimited() bool { return q.maxBytes < 0 && q.maxFiles < 0 }

// walk counts what the root holds, without following links; it stops past
// the file cap.
func (q *RootQuota) walk() (bytes, files int64, err error) {
	errStop := errors.New("stop")
	err = filepath.WalkDir(q.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == q.dir {
				return err
			}
			return nil // an unreadable folder: its content cannot be counted
		}
		if p == q.dir {
			return nil
		}
		info, err := d.Info() // an lstat: links are counted, not followed
		if err != nil {
			return nil // removed while walking
		}
		files++
		bytes = addSat(bytes, entryBytes(info))
		if q.maxFiles >= 0 && files > q.maxFiles {
			return errStop
		}
		return nil
	})
	if err == errStop {
		err = nil
	}
	return bytes, files, err
}

// remeasureLocked walks the root again and takes what it finds as the
// counts. A failed walk (the root is gone) keeps the counts.
func (q *RootQuota) remeasureLocked() {
	start := time.Now()
	bytes, files, err := q.walk()
	q.walkCost = time.Since(start)
	if err != nil {
		return
	}
	for _, n := range q.held {
		bytes = addSat(bytes, n)
	}
	q.bytes, q.files = bytes, files
	q.walkBytes, q.walkFiles = bytes, files
	q.walks++
}

// Usage returns what the root holds, as the quota counts it.
func (q *RootQuota) Usage() (bytes, files int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.bytes, q.files
}

// Limits returns the caps; a negative value means none.
func (q *RootQuota) Limits() (maxBytes, maxFiles int64) {
	return q.maxBytes, q.maxFiles
}

// Remeasure walks the root again now, for hosts that changed it
// themselves and want the change seen at once.
func (q *RootQuota) Remeasure() {
	if q.unlimited() {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.remeasureLocked()
}

// Lock starts a change of the root: measure it, make it, record it, then Unlock.
func (q *RootQuota) Lock() { q.mu.Lock() }

// Unlock ends a change started with Lock.
func (q *RootQuota) Unlock() { q.mu.Unlock() }

// CheckLocked implements DiskQuota. It records nothing.
func (q *RootQuota) CheckLocked(bytes, files int64) error {
	if (bytes <= 0 && files <= 0) || q.unlimited() {
		return q.compare(bytes, files)
	}
	err := q.compare(bytes, files)
	switch {
	case err != nil && time.Since(q.refusedAt) >= 10*q.walkCost,
		err == nil && q.stale(bytes, files):
		q.remeasureLocked()
		if err = q.compare(bytes, files); err != nil {
			q.refusedAt = time.Now()
		}
	}
	return err
}

// stale reports whether the session's own growth since the last walk,
// with this change, passes half of the room that walk left.
func (q *RootQuota) stale(bytes, files int64) bool {
	if q.maxBytes >= 0 && bytes > 0 {
		room := max((q.maxBytes-q.walkBytes)/2, remeasureMinBytes)
		if addSat(q.bytes, bytes)-q.walkBytes > room {
			return true
		}
	}
	if q.maxFiles >= 0 && files > 0 {
		room := max((q.maxFiles-q.walkFiles)/2, remeasureMinFiles)
		if q.files+files-q.walkFiles > room {
			return true
		}
	}
	return false
}

// compare returns a *QuotaError when growing the root by bytes and files
// would pass a cap.
func (q *RootQuota) compare(bytes, files int64) error {
	if files > 0 && q.maxFiles >= 0 && files > q.maxFiles-q.files {
		return &QuotaError{Files: true, Used: q.files, Max: q.maxFiles, Asked: files}
	}
	if bytes > 0 && q.maxBytes >= 0 && bytes > q.maxBytes-q.bytes {
		return &QuotaError{Used: q.bytes, Max: q.maxBytes, Asked: bytes}
	}
	return nil
}

// CheckEntryLocked implements DiskQuota.
func (q *RootQuota) CheckEntryLocked(info fs.FileInfo) error {
	return q.CheckLocked(entryBytes(info), 1)
}

// CheckGrowLocked implements DiskQuota.
func (q *RootQuota) CheckGrowLocked(before fs.FileInfo, size int64) error {
	return q.CheckLocked(growth(before.Size(), size, links(before)), 0)
}

// CheckReplaceLocked implements DiskQuota.
func (q *RootQuota) CheckReplaceLocked(old fs.FileInfo, size int64) error {
	if old == nil {
		return q.CheckLocked(size, 1)
	}
	return q.CheckLocked(size-q.releasableLocked(old), 0)
}

// AddedLocked implements DiskQuota.
func (q *RootQuota) AddedLocked(info fs.FileInfo) {
	q.addLocked(entryBytes(info), 1)
}

// ChangedLocked implements DiskQuota: every link of the file counts the
// change; a file with no links left (removed while open) counts it once.
func (q *RootQuota) ChangedLocked(before, after fs.FileInfo) {
	q.addLocked(growth(before.Size(), after.Size(), links(before)), 0)
	if k, ok := keyOf(after); ok {
		if _, held := q.held[k]; held {
			q.held[k] = max(after.Size(), 0)
		}
	}
}

// addLocked records that the root grew by bytes and files (shrank, when
// negative). The counts never go below zero.
func (q *RootQuota) addLocked(bytes, files int64) {
	q.bytes = max(addSat(q.bytes, bytes), 0)
	q.files = max(q.files+files, 0)
}

// OpenedLocked implements DiskQuota. Directories and other kinds are
// ignored.
func (q *RootQuota) OpenedLocked(info fs.FileInfo) {
	if k, ok := keyOf(info); ok && info.Mode().IsRegular() {
		q.open[k]++
	}
}

// ClosedLocked implements DiskQuota: when that was the last open handle of
// a file with no links left, its bytes are released.
func (q *RootQuota) ClosedLocked(info fs.FileInfo) {
	k, ok := keyOf(info)
	if !ok || !info.Mode().IsRegular() || q.open[k] == 0 {
		return
	}
	if q.open[k]--; q.open[k] > 0 {
		return
	}
	delete(q.open, k)
	if n, ok := q.held[k]; ok {
		delete(q.held, k)
		q.addLocked(-n, 0)
	}
}

// RemovedLocked implements DiskQuota (an unlink, rmdir, or a rename over
// the entry). The last link of a regular file that the guest holds open
// keeps its bytes until it is closed (ClosedLocked).
func (q *RootQuota) RemovedLocked(info fs.FileInfo) {
	n := q.releasableLocked(info)
	if n == 0 && info.Mode().IsRegular() {
		if k, ok := keyOf(info); ok && q.open[k] > 0 && links(info) <= 1 {
			q.held[k] = max(info.Size(), 0)
		}
	}
	q.addLocked(-n, -1)
}

// releasableLocked is how many bytes removing the entry info describes
// gives back now.
func (q *RootQuota) releasableLocked(info fs.FileInfo) int64 {
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
	switch st := info.Sys().(type) {
	case *syscall.Stat_t:
		return int64(st.Nlink)
	case *entryIDs:
		return int64(min(st.nlink, math.MaxInt64))
	}
	return 1
}

func keyOf(info fs.FileInfo) (fileKey, bool) {
	switch st := info.Sys().(type) {
	case *syscall.Stat_t:
		return fileKey{uint64(st.Dev), st.Ino}, true
	case *entryIDs:
		return fileKey{st.dev, st.ino}, true
	}
	return fileKey{}, false
}

// EntryInfo describes one directory entry to the quota's methods, for
// code that walks a root by file descriptor and has a raw lstat rather
// than an fs.FileInfo (a fork's copy): mode is its type and permission
// bits, size what an lstat gives (a symbolic link's target length), dev,
// ino and nlink its identity and hard links. The quota then counts it by
// its one rule (see RootQuota), not by a copy of it.
func EntryInfo(name string, mode fs.FileMode, size int64, dev, ino, nlink uint64) fs.FileInfo {
	return &entryInfo{name: name, mode: mode, size: size, ids: entryIDs{dev: dev, ino: ino, nlink: nlink}}
}

type entryIDs struct{ dev, ino, nlink uint64 }

type entryInfo struct {
	name string
	mode fs.FileMode
	size int64
	ids  entryIDs
}

func (e *entryInfo) Name() string       { return e.name }
func (e *entryInfo) Size() int64        { return e.size }
func (e *entryInfo) Mode() fs.FileMode  { return e.mode }
func (e *entryInfo) ModTime() time.Time { return time.Time{} } // not counted
func (e *entryInfo) IsDir() bool        { return e.mode.IsDir() }
func (e *entryInfo) Sys() any           { return &e.ids }

// growth is how much taking a file with n links from size before to size
// after grows the quota's bytes: each link counts, and a file removed
// while open (no links) once. It saturates instead of overflowing.
func growth(before, after, n int64) int64 {
	d, n := after-before, max(n, 1)
	switch {
	case d > 0 && d > math.MaxInt64/n:
		return math.MaxInt64
	case d < 0 && d < math.MinInt64/n:
		return math.MinInt64
	}
	return d * n
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
