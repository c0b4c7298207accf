// Package store keeps the persisted state of wasmeval sessions, so that a
// session outlives the process that ran it (a `serve` restart) and can move
// to another node. It is used by the sandbox package's Manager; `serve`
// only wires it (`--store URL`).
//
// # Contract (for every Store implementation)
//
//   - A State is one session's record: metadata, the Python memory as the
//     pages written over the template (an index and zstd frames), and the
//     session root's files.
//     Save is atomic: after a crash at any point, Load returns either the
//     previous saved state or the new one, never a mix.
//   - State.Files in Save is a delta against the last successful Save of
//     that id: changed or new files, and Deleted entries for removed ones.
//     With State.FullFiles set it is the complete set and replaces every
//     stored file (the first save of a session, and after a failed save
//     the caller cannot account for). Load always returns the complete set
//     (FullFiles true, no Deleted entries). A delta Save for an id with
//     no stored record (or one that cannot be read) fails with ErrNotFound
//     (or ErrCorrupt) and stores nothing; the caller then saves the whole
//     set, so a record is never a delta alone. When a Save fails, the caller
//     keeps its baseline and sends every change since the last successful
//     Save next time, so a store need not keep half-applied deltas.
//   - Fencing: a Save carries an epoch. A store keeps the highest epoch it
//     has stored per id and rejects a Save whose epoch is lower with
//     ErrStaleEpoch (and stores nothing). Equal or higher is accepted and
//     becomes the stored epoch. Load returns it in State.Epoch. A
//     single-node store may always be given the same epoch. Leases (who
//     may run a session, and the epoch they hand out) live beside the
//     Store, not in it.
//   - State.PythonFrames are immutable and named by content (Frame.Sum):
//     a Save after a light eval hands back the frames of the last Save
//     and one new frame, and a store writes only the frames it does not
//     hold yet (and drops those no longer named), not the whole state. A
//     Save refuses a new frame whose Sum does not match its bytes.
//   - Integrity: a store checks what it reads back (a checksum over the
//     record and every file and frame); a record that fails the check gives an error
//     wrapping ErrCorrupt, naming the id, and nothing of it is returned.
//   - The artifact hash is part of the key: Load(ctx, id, artifact) of a
//     record made by another Python build (or another template) fails with
//     an error wrapping ErrArtifactMismatch, never returning the state.
//     A record of another Format fails with ErrFormat.
//   - Paths in Files are slash-separated, relative to the session root,
//     clean, never absolute, never "..": a store never sees a path outside
//     a session root. CheckPath says which are valid; stores refuse others.
//   - Errors for an unreachable backend wrap ErrUnavailable, so servers can
//     answer 503 and retry; a Store never corrupts state on such errors.
//   - Save may keep references to st's slices (a store may remember what
//     it wrote last); the caller does not change them afterwards.
//   - Every method is safe for concurrent use.
//
// # Adding a store
//
// A store for a URL scheme registers itself from an init function in its
// own file with Register("postgres", openPostgres); Open dispatches on the
// URL's scheme. "dir" (dir.go) is built in.
package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

// Format is the version of the State record this code writes. A record of
// another version is refused (ErrFormat) rather than guessed at.
//
// Format 2: the Python state is an index and frames stored apart (1 held
// it in one piece).
const Format = 2

// Errors of a Store.
var (
	// ErrNotFound: no state is stored under the id.
	ErrNotFound = errors.New("store: no such session")
	// ErrStaleEpoch: a Save's epoch is lower than the stored one, so a newer
	// owner has written the session since; the write is dropped.
	ErrStaleEpoch = errors.New("store: stale epoch")
	// ErrCorrupt: a stored record failed its checksum or could not be
	// decoded; it is not loaded.
	ErrCorrupt = errors.New("store: corrupt record")
	// ErrArtifactMismatch: the record was made by another Python build
	// (or template) than the one loading it; it is not loaded.
	ErrArtifactMismatch = errors.New("store: state of another Python build")
	// ErrFormat: the record has another format version.
	ErrFormat = errors.New("store: unsupported record format")
	// ErrUnavailable: the store's backend cannot be reached now.
	ErrUnavailable = errors.New("store: unavailable")
)

// State is the persisted state of one session.
type State struct {
	// ID is the session's id (as sandbox.Manager names it).
	ID string
	// Owner is the hash of the owner's token (never the token itself), as
	// the Manager keeps it: a load for another owner is refused above the
	// store.
	Owner string
	// Artifact identifies the Python build and template the pages were
	// written over (python.Runtime.ArtifactKey); part of the key.
	Artifact string
	// Format is the record's version; Save writes Format whatever it is.
	Format int
	// Epoch is the fencing epoch of the last Save (filled by Load).
	Epoch int64
	// Options are the session's options, JSON (sandbox's persisted subset).
	Options []byte
	// Python is the Python instance's state index (which pages each of
	// PythonFrames holds, and what the runtime needs to resume them);
	// empty when the session never ran Python. Opaque to the store.
	Python []byte
	// PythonFrames are the session's immutable zstd frames: first the
	// pages the Python instance wrote over the template, in the index's
	// order, then the frames of its JavaScript journal (JS says how many;
	// sandbox/jsjournal.go). A frame never changes: a store keeps each
	// once, by its Sum.
	PythonFrames []Frame
	// Files are the session root's files: a delta in Save (see the package
	// contract), the complete set from Load.
	Files []File
	// FullFiles says Files is the complete set, replacing all stored files.
	FullFiles bool
	// Outputs is the session's output store (full texts of cut outputs
	// that output() reads back), JSON; opaque to the store.
	Outputs []byte
	// FuelUsed is the Python fuel the session has burnt so far.
	FuelUsed uint64
	// JS records the session's JavaScript state: whether it had any, and
	// its cells, for a later replay (JSON; opaque to the store).
	JS []byte
	// Meta is any other session metadata, JSON; opaque to the store.
	Meta []byte
}

// Frame is one frame of a Python state, named by the SHA-256 of its
// bytes.
type Frame struct {
	Sum  [32]byte
	Data []byte
}

// checkFrame reports whether f's Sum is its bytes' SHA-256.
func checkFrame(id string, i int, f Frame) error {
	if sha256.Sum256(f.Data) != f.Sum {
		return fmt.Errorf("store: save %s: Python frame %d does not match its Sum; nothing was saved", id, i)
	}
	return nil
}

// File is one entry of a session root.
type File struct {
	// Path is slash-separated and relative to the session root (CheckPath).
	Path string
	// Mode holds the permission bits and the type: a regular file,
	// fs.ModeDir or fs.ModeSymlink.
	Mode fs.FileMode
	// ModTime is the modification time, Unix nanoseconds.
	ModTime int64
	// Data is a regular file's content or a symlink's target.
	Data []byte
	// Deleted marks a removed path in a Save delta (Data, Mode ignored).
	Deleted bool
}

// Store keeps session states. See the package doc for the contract.
type Store interface {
	// Save writes st under st.ID at epoch, atomically; ErrStaleEpoch when
	// a higher epoch is stored. Files is a delta unless st.FullFiles.
	Save(ctx context.Context, st *State, epoch int64) error
	// Load reads the state of id, with every file. ErrNotFound when none
	// is stored; ErrArtifactMismatch when it was made by another artifact;
	// ErrCorrupt or ErrFormat when it cannot be trusted or read.
	Load(ctx context.Context, id, artifact string) (*State, error)
	// Delete removes the state of id; no error when there is none.
	Delete(ctx context.Context, id string) error
	// List returns the ids stored, sorted.
	List(ctx context.Context) ([]string, error)
	// Ping checks that the store is reachable (for /readyz).
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}

// Aged is implemented by a Store that knows when each session was last
// saved, so that a manager can delete the records of sessions nobody has
// used for its idle timeout, also those no process has loaded since a
// restart.
type Aged interface {
	// SavedBefore returns the ids whose last save is older than t.
	SavedBefore(ctx context.Context, t time.Time) ([]string, error)
}

// Opener opens a store from its URL.
type Opener func(rawURL string) (Store, error)

var (
	openersMu sync.Mutex
	openers   = map[string]Opener{}
)

// Register makes Open hand URLs of scheme to open. It panics when scheme is
// registered twice (a programming error, found at init).
func Register(scheme string, open Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	if _, dup := openers[scheme]; dup {
		panic("store: scheme registered twice: " + scheme)
	}
	openers[scheme] = open
}

// Schemes lists the registered URL schemes, sorted.
func Schemes() []string {
	openersMu.Lock()
	defer openersMu.Unlock()
	var s []string
	for k := range openers {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// Open opens the store a URL names, by its scheme: dir:///path, or one
// another file registered (postgres://...).
func Open(rawURL string) (Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return nil, fmt.Errorf("store: %q is not a store URL; want one of %s", rawURL, schemeExamples())
	}
	openersMu.Lock()
	open := openers[u.Scheme]
	openersMu.Unlock()
	if open == nil {
		return nil, fmt.Errorf("store: unknown store scheme %q in %q; want one of %s", u.Scheme, rawURL, schemeExamples())
	}
	return open(rawURL)
}

func schemeExamples() string {
	var ex []string
	for _, s := range Schemes() {
		if s == "dir" {
			ex = append(ex, "dir:///path")
		} else {
			ex = append(ex, s+"://...")
		}
	}
	return strings.Join(ex, ", ")
}

// CheckPath reports whether p is a valid File.Path: non-empty, relative,
// slash-separated, clean, with no ".." element and no NUL.
func CheckPath(p string) error {
	if p == "" || p == "." || strings.HasPrefix(p, "/") || path.Clean(p) != p ||
		p == ".." || strings.HasPrefix(p, "../") || strings.ContainsRune(p, 0) || strings.Contains(p, "\\") {
		return fmt.Errorf("store: file path %q is not a clean relative path inside the session root", p)
	}
	return nil
}

// CheckID reports whether id can name a stored session: 1 to 128 letters,
// digits, '-' or '_' (sandbox ids are 24 hex digits).
func CheckID(id string) error {
	if id == "" || len(id) > 128 {
		return fmt.Errorf("store: session id %q: want 1 to 128 letters, digits, '-' or '_'", id)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("store: session id %q: want 1 to 128 letters, digits, '-' or '_'", id)
		}
	}
	return nil
}
