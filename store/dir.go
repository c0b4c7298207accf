package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

func init() { Register("dir", openDirURL) }

// Dir is the store of one process's sessions in a folder (dir:///path):
// sessions survive a restart of that process. Each session is a folder
// named by its id holding one file, its log:
//
//	<id>/log   a header, then commit records, each a whole saved state
//	           over the ones before it
//
// A Save appends one record holding what the state adds (the new Python
// frame, changed files' contents, the metadata and the Python index) and
// syncs the file once (fdatasync): a light eval's save is one write and
// one sync, with no file made, renamed or removed. Each record carries a
// CRC-32C (over a salt of its log, its sequence number and its bytes); a
// load takes the last record whose check holds, so a crash at any point,
// even mid-write, leaves the state of the last completed Save (or of the
// one in flight, when its bytes all reached the disk), never a mix. Once
// the log holds much more than the state needs (dropped frames, files
// changed since), a Save writes the state whole to a new log, synced,
// renamed over the old one and its folder synced (as the first save of a
// session does). Load checks every file's and frame's SHA-256 besides.
//
// By default every Save is synced before it returns, so a saved state
// survives a crash of the machine too; with NoSync (dir:///path?sync=none)
// nothing is synced, so a saved state survives the process being killed
// (the kernel keeps what it wrote) but a machine crash may lose recent
// saves; a record is never taken half written either way.
//
// Two processes must not share a Dir: it locks within the process only.
type Dir struct {
	root   string
	noSync bool
	// mu: Save, Load and the rest take it shared (each session's log has
	// a lock of its own); Delete takes it alone.
	mu     sync.RWMutex
	logsMu sync.Mutex
	logs   map[string]*dirLog
}

// dirHeader is a record's metadata and file list.
type dirHeader struct {
	ID        string         `json:"id"`
	Owner     string         `json:"owner"`
	Artifact  string         `json:"artifact"`
	Format    int            `json:"format"`
	Epoch     int64          `json:"epoch"`
	Options   []byte         `json:"options,omitempty"`
	Outputs   string         `json:"outputs,omitempty"` // the SHA-256 of its blob
	FuelUsed  uint64         `json:"fuelUsed"`
	JS        string         `json:"js,omitempty"` // the SHA-256 of its blob
	Meta      []byte         `json:"meta,omitempty"`
	Files     []dirFileEntry `json:"files"`
	PythonLen int            `json:"pythonLen"`
	// Frames are the SHA-256 of the Python frames, in order; each is a
	// blob of the log.
	Frames []string `json:"frames,omitempty"`
}

// dirFileEntry is one file of a record: a regular file's content is the
// blob named by its SHA256; a symlink's target is in Target.
type dirFileEntry struct {
	Path    string      `json:"path"`
	Mode    fs.FileMode `json:"mode"`
	ModTime int64       `json:"modTime"`
	SHA256  string      `json:"sha256,omitempty"`
	Size    int64       `json:"size,omitempty"`
	Target  string      `json:"target,omitempty"`
}

// OpenDir opens (making it when missing) the folder store at path, an
// absolute path.
func OpenDir(path string) (*Dir, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("store: dir store path %q is not absolute; give dir:///absolute/path", path)
	}
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("store: dir store: %w", err)
	}
	return &Dir{root: filepath.Clean(path), logs: map[string]*dirLog{}}, nil
}

// NoSync makes d skip syncing (see Dir); for tests and for operators who
// accept losing recent saves to a machine crash.
func (d *Dir) NoSync() *Dir { d.noSync = true; return d }

func openDirURL(rawURL string) (Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("store: %q: %w", rawURL, err)
	}
	q := u.Query()
	syncMode := q.Get("sync")
	q.Del("sync")
	if u.Host != "" || u.Path == "" || len(q) > 0 || u.Fragment != "" || syncMode != "" && syncMode != "full" && syncMode != "none" {
		return nil, fmt.Errorf("store: %q is not a dir store URL; want dir:///absolute/path (three slashes, no host), optionally ?sync=none", rawURL)
	}
	d, err := OpenDir(u.Path)
	if err != nil {
		return nil, err
	}
	if syncMode == "none" {
		d.NoSync()
	}
	return d, nil
}

// unavailable wraps an error of the store's folder (not writable, full,
// gone) in ErrUnavailable: the state stays as last saved, and a server
// answers 503 until the folder works again.
func (d *Dir) unavailable(op string, err error) error {
	return fmt.Errorf("%w: dir store %s: %s: %w", ErrUnavailable, d.root, op, err)
}

// Root is the store's folder.
func (d *Dir) Root() string { return d.root }

func (d *Dir) sessionDir(id string) string { return filepath.Join(d.root, id) }

// The log's layout (little endian):
//
//	header:  "wasmeval-log\n" | Format u32 | salt [8]
//	record:  recMagic u32 | payload length u64 | sequence u64 | CRC u32 | payload
//	payload: header length u32 | header JSON | Python index length u64 | Python index |
//	         blob count u32 | per blob: SHA-256 [32] | length u64 | bytes
//
// A record's CRC-32C covers the log's salt, its length and sequence and
// its payload; sequence numbers count from 1 with no gap. The salt is
// random per log, so bytes of a file (a session's own content, inside a
// blob) cannot pass for a record of the log. A record's header names the
// blobs of its state, each in it or in an earlier record of the log.
const (
	logName    = "log"
	logMagic   = "wasmeval-log\n"
	logHeadLen = len(logMagic) + 4 + 8
	recMagic   = 0x31636572 // "rec1"
	recHeadLen = 4 + 8 + 8 + 4
	// maxLogs bounds the sessions whose log a Dir keeps open; past it, it
	// forgets some (they are read again on their next use).
	maxLogs = 1024
)

// compactSlack: a log is written anew once it holds more than twice what
// its state needs plus this (a light eval's record is some tens of KiB: a
// compaction every hundred saves or so). A variable for tests.
var compactSlack int64 = 4 << 20

// dirLog is what a Dir knows of one session's log, under mu.
type dirLog struct {
	mu   sync.Mutex
	gone bool     // no longer in Dir.logs: look the id up again
	f    *os.File // open for appending; nil when there is no log
	// fi is the log as this Dir last left it: a log changed or replaced
	// behind its back (its folder moved away, a file written over it) is
	// read again.
	fi   os.FileInfo
	end  int64 // where the next record goes
	seq  uint64
	salt [8]byte
	// The last commit: its header (nil when none), and its record's
	// place.
	head             *dirHeader
	lastOff, lastLen int64
	blobs            map[string]blobLoc // every blob of the log, by hex SHA-256
	live             int64              // bytes the last commit's state needs
	// bad is why the log cannot be read (wrapping ErrCorrupt or
	// ErrFormat): loads fail with it, a full save replaces the log.
	bad error
	// oldLayout: the session is in the layout of an earlier build (a
	// state file and blob files), which a full save replaces.
	oldLayout bool
	// scanned is the log's bytes as last read whole, kept for the Load
	// that follows the read (then dropped).
	scanned []byte
	lastOut map[string]lastBlob // by field
}

// blobLoc is where a blob's bytes are in the log.
type blobLoc struct {
	off int64
	n   int64
}

// lastBlob remembers the slice a Save wrote as a blob, and its hash.
type lastBlob struct {
	p   *byte
	n   int
	sum string
}

func (l *dirLog) reset() {
	if l.f != nil {
		l.f.Close()
	}
	l.f, l.fi, l.end, l.seq, l.salt = nil, nil, 0, 0, [8]byte{}
	l.head, l.lastOff, l.lastLen, l.blobs, l.live = nil, 0, 0, nil, 0
	l.bad, l.oldLayout, l.scanned, l.lastOut = nil, false, nil, nil
}

// logFor returns id's log, locked and up to date with the file.
func (d *Dir) logFor(id string) (*dirLog, error) {
	for {
		d.logsMu.Lock()
		l := d.logs[id]
		if l == nil {
			d.forgetSome()
			l = &dirLog{}
			d.logs[id] = l
		}
		d.logsMu.Unlock()
		l.mu.Lock()
		if l.gone {
			l.mu.Unlock()
			continue
		}
		if err := d.refresh(id, l); err != nil {
			l.mu.Unlock()
			return nil, err
		}
		return l, nil
	}
}

// forgetSome drops logs nobody uses when there are too many (under
// logsMu).
func (d *Dir) forgetSome() {
	if len(d.logs) < maxLogs {
		return
	}
	for id, l := range d.logs {
		if len(d.logs) < maxLogs*3/4 {
			return
		}
		if l.mu.TryLock() {
			l.gone = true
			l.reset()
			l.mu.Unlock()
			delete(d.logs, id)
		}
	}
}

// refresh makes l what id's log on disk holds: as l has it when the file
// is the one l last wrote, else read again.
func (d *Dir) refresh(id string, l *dirLog) error {
	path := filepath.Join(d.sessionDir(id), logName)
	fi, err := os.Lstat(path)
	if l.f != nil && err == nil && os.SameFile(fi, l.fi) && fi.Size() == l.fi.Size() && fi.ModTime().Equal(l.fi.ModTime()) {
		return nil
	}
	l.reset()
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return d.unavailable("open "+id, err)
		}
		if _, rerr := os.Stat(d.root); rerr != nil {
			// The store's folder itself is gone (an unmounted disk): an
			// outage, not a session that does not exist.
			return d.unavailable("open "+id, rerr)
		}
		if _, serr := os.Lstat(filepath.Join(d.sessionDir(id), "state")); serr == nil {
			l.oldLayout = true
			l.bad = fmt.Errorf("%w: session %s was stored by an earlier wasmeval build in the folder layout (a state file), which this build does not read; run that build to use it, or delete the session", ErrFormat, id)
		}
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return d.unavailable("open "+id, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return d.unavailable("read "+id, err)
	}
	l.f = f
	if err := l.scan(id, data); err != nil {
		l.bad = err
	} else if l.end < int64(len(data)) {
		// A record cut short by a crash (its check fails): the next one
		// goes in its place.
		if err := f.Truncate(l.end); err != nil {
			l.reset()
			return d.unavailable("open "+id, err)
		}
	}
	if l.fi, err = f.Stat(); err != nil {
		l.reset()
		return d.unavailable("open "+id, err)
	}
	l.scanned = data
	return nil
}

// scan reads a log's records into l; the last whose check holds is the
// state. It fails (ErrCorrupt, ErrFormat) for a file that is no log, or
// whose first record does not check.
func (l *dirLog) scan(id string, data []byte) error {
	corrupt := func(why string) error {
		return fmt.Errorf("%w: session %s: %s; it is not loaded", ErrCorrupt, id, why)
	}
	if len(data) < logHeadLen || string(data[:len(logMagic)]) != logMagic {
		return corrupt("its log is not a wasmeval session log")
	}
	if v := binary.LittleEndian.Uint32(data[len(logMagic):]); v != Format {
		return fmt.Errorf("%w: session %s was stored in format %d; this build reads format %d", ErrFormat, id, v, Format)
	}
	copy(l.salt[:], data[len(logMagic)+4:])
	l.blobs = map[string]blobLoc{}
	off := int64(logHeadLen)
	for off+recHeadLen <= int64(len(data)) {
		rec := data[off:]
		n := binary.LittleEndian.Uint64(rec[4:])
		seq := binary.LittleEndian.Uint64(rec[12:])
		if binary.LittleEndian.Uint32(rec) != recMagic || seq != l.seq+1 || n > uint64(len(rec)-recHeadLen) {
			break
		}
		if recCRC(l.salt, rec[:recHeadLen], rec[recHeadLen:recHeadLen+n]) != binary.LittleEndian.Uint32(rec[20:]) {
			// The last record cut short or half written by a crash is
			// dropped; a damaged record that whole ones follow is not a
			// crash's, and the state past it is lost: the log is refused
			// rather than loaded as it was some saves ago.
			if next := rec[recHeadLen+n:]; len(next) >= recHeadLen && binary.LittleEndian.Uint32(next) == recMagic &&
				binary.LittleEndian.Uint64(next[12:]) == seq+1 {
				return corrupt(fmt.Sprintf("record %d of its log is damaged", seq))
			}
			break
		}
		h, _, blobs, err := parsePayload(rec[recHeadLen:recHeadLen+n], off+recHeadLen)
		if err != nil || h.ID != id {
			return corrupt(fmt.Sprintf("record %d does not decode (%v)", seq, err))
		}
		for _, b := range blobs {
			l.blobs[b.name] = b.loc
		}
		l.head, l.seq, l.lastOff, l.lastLen = h, seq, off, recHeadLen+int64(n)
		off += recHeadLen + int64(n)
	}
	if l.head == nil {
		return corrupt("its log holds no whole record")
	}
	l.end = off
	l.live = liveBytes(l.head, l.blobs)
	return nil
}

// recCRC is a record's check: CRC-32C of the salt, the record's length and
// sequence, and its payload.
func recCRC(salt [8]byte, head, payload []byte) uint32 {
	c := crc32.Checksum(salt[:], castagnoli)
	c = crc32.Update(c, castagnoli, head[4:20])
	return crc32.Update(c, castagnoli, payload)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type blobEntry struct {
	name string
	loc  blobLoc
}

// parsePayload splits a record's payload (at offset base of its log) into
// its header, Python index and blobs.
func parsePayload(p []byte, base int64) (*dirHeader, []byte, []blobEntry, error) {
	short := errors.New("cut short")
	if len(p) < 4 {
		return nil, nil, nil, short
	}
	hn := uint64(binary.LittleEndian.Uint32(p))
	if hn+12 > uint64(len(p)) {
		return nil, nil, nil, short
	}
	var h dirHeader
	if err := json.Unmarshal(p[4:4+hn], &h); err != nil {
		return nil, nil, nil, err
	}
	at := 4 + hn
	pn := binary.LittleEndian.Uint64(p[at:])
	at += 8
	if pn > uint64(len(p))-at || uint64(h.PythonLen) != pn {
		return nil, nil, nil, errors.New("the Python index does not fit")
	}
	python := p[at : at+pn]
	at += pn
	if uint64(len(p))-at < 4 {
		return nil, nil, nil, short
	}
	count := binary.LittleEndian.Uint32(p[at:])
	at += 4
	blobs := make([]blobEntry, 0, count)
	for range count {
		if uint64(len(p))-at < 40 {
			return nil, nil, nil, short
		}
		name := hex.EncodeToString(p[at : at+32])
		n := binary.LittleEndian.Uint64(p[at+32:])
		at += 40
		if n > uint64(len(p))-at {
			return nil, nil, nil, short
		}
		blobs = append(blobs, blobEntry{name, blobLoc{base + int64(at), int64(n)}})
		at += n
	}
	if at != uint64(len(p)) {
		return nil, nil, nil, errors.New("trailing bytes")
	}
	return &h, python, blobs, nil
}

// liveBytes is what h's state takes in a log: its blobs (each once).
func liveBytes(h *dirHeader, blobs map[string]blobLoc) int64 {
	seen := map[string]bool{}
	var n int64
	for _, name := range h.blobNames() {
		if !seen[name] {
			seen[name] = true
			n += blobs[name].n + 40
		}
	}
	return n
}

// blobNames lists the blobs h's state names, in the order a whole log
// holds them.
func (h *dirHeader) blobNames() []string {
	var out []string
	if h.Outputs != "" {
		out = append(out, h.Outputs)
	}
	if h.JS != "" {
		out = append(out, h.JS)
	}
	out = append(out, h.Frames...)
	for _, e := range h.Files {
		if e.SHA256 != "" {
			out = append(out, e.SHA256)
		}
	}
	return out
}

// record lays out a record of l's log: its pieces (large blobs are
// written from the caller's slices, not copied) and its length.
type record struct {
	pieces [][]byte
	n      int64
	head   [recHeadLen]byte
}

func (r *record) add(b []byte) {
	r.n += int64(len(b))
	if k := len(r.pieces) - 1; len(b) < 32<<10 && k > 0 && cap(r.pieces[k])-len(r.pieces[k]) >= len(b) {
		r.pieces[k] = append(r.pieces[k], b...)
		return
	}
	if len(b) < 32<<10 {
		r.pieces = append(r.pieces, append(make([]byte, 0, 64<<10), b...))
		return
	}
	r.pieces = append(r.pieces, b)
}

// newRecord starts a record whose payload is the header hj, the Python
// index and n blobs (added with addBlob).
func newRecord(hj, python []byte, n int) *record {
	r := &record{pieces: [][]byte{nil}}
	var b [8]byte
	binary.LittleEndian.PutUint32(b[:], uint32(len(hj)))
	r.add(b[:4])
	r.add(hj)
	binary.LittleEndian.PutUint64(b[:], uint64(len(python)))
	r.add(b[:])
	r.add(python)
	binary.LittleEndian.PutUint32(b[:], uint32(n))
	r.add(b[:4])
	return r
}

// addBlob adds a blob, returning its bytes' offset in the payload.
func (r *record) addBlob(sum []byte, data []byte) int64 {
	var b [8]byte
	r.add(sum)
	binary.LittleEndian.PutUint64(b[:], uint64(len(data)))
	r.add(b[:])
	off := r.n
	r.add(data)
	return off
}

// finish fills the record's head for sequence seq of a log salted salt.
func (r *record) finish(salt [8]byte, seq uint64) {
	binary.LittleEndian.PutUint32(r.head[:], recMagic)
	binary.LittleEndian.PutUint64(r.head[4:], uint64(r.n))
	binary.LittleEndian.PutUint64(r.head[12:], seq)
	c := crc32.Checksum(salt[:], castagnoli)
	c = crc32.Update(c, castagnoli, r.head[4:20])
	for _, p := range r.pieces {
		c = crc32.Update(c, castagnoli, p)
	}
	binary.LittleEndian.PutUint32(r.head[20:], c)
	r.pieces[0] = r.head[:]
}

// writeAt writes the record's pieces at off of f.
func (r *record) writeAt(f *os.File, off int64) error {
	for _, p := range r.pieces {
		if _, err := f.WriteAt(p, off); err != nil {
			return err
		}
		off += int64(len(p))
	}
	return nil
}

// Save implements Store.
func (d *Dir) Save(ctx context.Context, st *State, epoch int64) error {
	if err := CheckID(st.ID); err != nil {
		return err
	}
	for _, f := range st.Files {
		if err := CheckPath(f.Path); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	l, err := d.logFor(st.ID)
	if err != nil {
		return err
	}
	defer l.mu.Unlock()
	l.scanned = nil
	prev := l.head
	switch {
	case l.bad != nil && !st.FullFiles:
		return fmt.Errorf("store: save %s: the stored record cannot be read, so a delta cannot be applied to it: %w", st.ID, l.bad)
	case prev == nil && !st.FullFiles:
		return fmt.Errorf("store: save %s: no record to apply a delta of files to (deleted meanwhile?); save the whole set: %w", st.ID, ErrNotFound)
	}
	if prev != nil && epoch < prev.Epoch {
		return fmt.Errorf("%w: session %s is stored at epoch %d, this save has %d", ErrStaleEpoch, st.ID, prev.Epoch, epoch)
	}
	// The blobs this save adds to the log, and every blob's bytes it has
	// at hand (for a log written whole).
	var added []string
	have := map[string][]byte{}
	addBlob := func(name string, data []byte) {
		if _, ok := have[name]; ok {
			return
		}
		have[name] = data
		if _, ok := l.blobs[name]; !ok {
			added = append(added, name)
		}
	}
	files := map[string]dirFileEntry{}
	if prev != nil && !st.FullFiles {
		for _, e := range prev.Files {
			files[e.Path] = e
		}
	}
	for _, f := range st.Files {
		if f.Deleted {
			delete(files, f.Path)
			for p := range files {
				if strings.HasPrefix(p, f.Path+"/") {
					delete(files, p)
				}
			}
			continue
		}
		e := dirFileEntry{Path: f.Path, Mode: f.Mode, ModTime: f.ModTime}
		switch {
		case f.Mode.IsDir():
		case f.Mode&fs.ModeSymlink != 0:
			e.Target = string(f.Data)
		case f.Mode.IsRegular():
			sum := sha256.Sum256(f.Data)
			e.SHA256, e.Size = hex.EncodeToString(sum[:]), int64(len(f.Data))
			addBlob(e.SHA256, f.Data)
		default:
			return fmt.Errorf("store: save %s: %s has mode %v; a store keeps regular files, folders and symlinks only", st.ID, f.Path, f.Mode)
		}
		files[f.Path] = e
	}
	h := dirHeader{
		ID: st.ID, Owner: st.Owner, Artifact: st.Artifact, Format: Format, Epoch: epoch,
		Options: st.Options, FuelUsed: st.FuelUsed, Meta: st.Meta,
		Files: make([]dirFileEntry, 0, len(files)), PythonLen: len(st.Python),
	}
	for _, e := range files {
		h.Files = append(h.Files, e)
	}
	sort.Slice(h.Files, func(i, j int) bool { return h.Files[i].Path < h.Files[j].Path })
	// The Python frames: the ones the log holds are not written again
	// (a light eval adds one frame); a new one is checked first.
	h.Frames = make([]string, len(st.PythonFrames))
	for i, f := range st.PythonFrames {
		name := hex.EncodeToString(f.Sum[:])
		h.Frames[i] = name
		if _, ok := l.blobs[name]; !ok {
			if err := checkFrame(st.ID, i, f); err != nil {
				return err
			}
		}
		addBlob(name, f.Data)
	}
	// The cut outputs (up to 64 MiB) and the JavaScript log (up to 1 MiB
	// of code) are blobs of their own, written only when they change.
	h.Outputs = l.fieldBlob("outputs", st.Outputs, addBlob)
	h.JS = l.fieldBlob("js", st.JS, addBlob)
	hj, err := json.Marshal(&h)
	if err != nil {
		return fmt.Errorf("store: save %s: %w", st.ID, err)
	}
	// Appended, unless the log would then hold much more than the state
	// needs (or there is no log to append to).
	var live int64
	for _, name := range h.blobNames() {
		if b, ok := have[name]; ok {
			live += int64(len(b)) + 40
		} else {
			live += l.blobs[name].n + 40
		}
	}
	var recLen int64
	for _, name := range added {
		recLen += int64(len(have[name])) + 40
	}
	if l.f == nil || l.bad != nil || l.end+recLen > 2*live+compactSlack {
		return d.rewrite(ctx, l, &h, hj, st.Python, have)
	}
	rec := newRecord(hj, st.Python, len(added))
	locs := make([]int64, len(added))
	for i, name := range added {
		sum, _ := hex.DecodeString(name)
		locs[i] = rec.addBlob(sum, have[name])
	}
	rec.finish(l.salt, l.seq+1)
	if err := rec.writeAt(l.f, l.end); err != nil {
		l.f.Truncate(l.end) // best effort: a later record goes there anyway
		l.fi = nil          // read again next time
		return d.unavailable("save "+st.ID, err)
	}
	if !d.noSync {
		if err := unix.Fdatasync(int(l.f.Fd())); err != nil {
			l.fi = nil
			return d.unavailable("save "+st.ID, err)
		}
	}
	fi, err := l.f.Stat()
	if err != nil {
		l.fi = nil
		return d.unavailable("save "+st.ID, err)
	}
	addWritten(ctx, recHeadLen+rec.n)
	base := l.end + recHeadLen
	for i, name := range added {
		l.blobs[name] = blobLoc{base + locs[i], int64(len(have[name]))}
	}
	l.fi, l.head, l.seq, l.lastOff, l.lastLen = fi, &h, l.seq+1, l.end, recHeadLen+rec.n
	l.end += recHeadLen + rec.n
	l.live = live
	return nil
}

// fieldBlob names the blob of a field of the state ("" for none) and adds
// it. A save handing the very slice it handed last time (the Store
// contract lets a store keep it) does not even hash it again.
func (l *dirLog) fieldBlob(field string, b []byte, add func(string, []byte)) string {
	if len(b) == 0 {
		return ""
	}
	if l.lastOut == nil {
		l.lastOut = map[string]lastBlob{}
	}
	name := ""
	if o := l.lastOut[field]; o.n == len(b) && o.p == &b[0] {
		name = o.sum
	} else {
		sum := sha256.Sum256(b)
		name = hex.EncodeToString(sum[:])
		l.lastOut[field] = lastBlob{p: &b[0], n: len(b), sum: name}
	}
	add(name, b)
	return name
}

// rewrite writes the state h whole to a new log (synced) renamed over
// l's, then syncs the folder: the first save of a session, a log that
// could not be read, and compaction.
func (d *Dir) rewrite(ctx context.Context, l *dirLog, h *dirHeader, hj, python []byte, have map[string][]byte) error {
	dir := d.sessionDir(h.ID)
	fail := func(err error) error { return d.unavailable("save "+h.ID, err) }
	_, statErr := os.Lstat(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(err)
	}
	names := h.blobNames()
	seen := map[string]bool{}
	var uniq []string
	for _, name := range names {
		if !seen[name] {
			seen[name] = true
			uniq = append(uniq, name)
		}
	}
	rec := newRecord(hj, python, len(uniq))
	locs := make([]int64, len(uniq))
	sizes := make([]int64, len(uniq))
	for i, name := range uniq {
		data, ok := have[name]
		if !ok {
			loc, ok := l.blobs[name]
			if !ok || l.f == nil {
				return fmt.Errorf("%w: session %s: blob %s is not in its log; save the whole set", ErrCorrupt, h.ID, name)
			}
			data = make([]byte, loc.n)
			if _, err := l.f.ReadAt(data, loc.off); err != nil {
				return fail(err)
			}
			if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != name {
				return fmt.Errorf("%w: session %s: a file's content in its log does not match its checksum; save the whole set", ErrCorrupt, h.ID)
			}
		}
		sum, _ := hex.DecodeString(name)
		locs[i], sizes[i] = rec.addBlob(sum, data), int64(len(data))
	}
	var salt [8]byte
	rand.Read(salt[:])
	rec.finish(salt, 1)
	head := make([]byte, logHeadLen)
	copy(head, logMagic)
	binary.LittleEndian.PutUint32(head[len(logMagic):], Format)
	copy(head[len(logMagic)+4:], salt[:])
	f, err := os.CreateTemp(dir, ".tmp-")
	if err != nil {
		return fail(err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(head); err != nil {
		return fail(err)
	}
	if err := rec.writeAt(f, int64(logHeadLen)); err != nil {
		return fail(err)
	}
	if !d.noSync {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	if err := os.Rename(tmp, filepath.Join(dir, logName)); err != nil {
		return fail(err)
	}
	if !d.noSync {
		if err := syncDir(dir); err != nil {
			return fail(err)
		}
		if statErr != nil {
			// A new session folder: its entry in the store's folder must
			// last.
			if err := syncDir(d.root); err != nil {
				return fail(err)
			}
		}
	}
	ok = true
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		l.reset()
		return fail(err)
	}
	addWritten(ctx, int64(logHeadLen)+recHeadLen+rec.n)
	if l.oldLayout {
		// What an earlier build left goes.
		os.Remove(filepath.Join(dir, "state"))
		os.RemoveAll(filepath.Join(dir, "files"))
		if old, err := filepath.Glob(filepath.Join(dir, "frame-*")); err == nil {
			for _, p := range old {
				os.Remove(p)
			}
		}
	}
	lastOut := l.lastOut
	l.reset()
	l.f, l.fi, l.salt, l.seq, l.head, l.lastOut = f, fi, salt, 1, h, lastOut
	l.lastOff, l.lastLen = int64(logHeadLen), recHeadLen+rec.n
	l.end = l.lastOff + l.lastLen
	l.blobs = make(map[string]blobLoc, len(uniq))
	base := int64(logHeadLen) + recHeadLen
	for i, name := range uniq {
		l.blobs[name] = blobLoc{base + locs[i], sizes[i]}
	}
	l.live = liveBytes(h, l.blobs)
	// Temporary files of saves a crash interrupted.
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".tmp-") {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	return nil
}

// read returns n bytes of l's log at off: from the bytes last read whole,
// else from the file.
func (l *dirLog) read(off, n int64) ([]byte, error) {
	if l.scanned != nil && off+n <= int64(len(l.scanned)) {
		return l.scanned[off : off+n : off+n], nil
	}
	b := make([]byte, n)
	_, err := l.f.ReadAt(b, off)
	return b, err
}

// Load implements Store.
func (d *Dir) Load(ctx context.Context, id, artifact string) (*State, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	l, err := d.logFor(id)
	if err != nil {
		return nil, err
	}
	defer l.mu.Unlock()
	defer func() { l.scanned = nil }()
	if l.bad != nil {
		return nil, l.bad
	}
	if l.head == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	// The last record is read back and checked again (its bytes may have
	// changed on disk since this Dir wrote them); the blobs of earlier
	// records are checked by their SHA-256 below.
	rec, err := l.read(l.lastOff, l.lastLen)
	if err != nil {
		return nil, d.unavailable("load "+id, err)
	}
	if binary.LittleEndian.Uint32(rec) != recMagic || recCRC(l.salt, rec[:recHeadLen], rec[recHeadLen:]) != binary.LittleEndian.Uint32(rec[20:]) {
		l.fi = nil // read again next time
		return nil, fmt.Errorf("%w: session %s: its last record does not match its checksum; it is not loaded", ErrCorrupt, id)
	}
	h, python, _, err := parsePayload(rec[recHeadLen:], 0)
	if err != nil || h.ID != id {
		return nil, fmt.Errorf("%w: session %s: its last record does not decode (%v); it is not loaded", ErrCorrupt, id, err)
	}
	if h.Artifact != artifact {
		return nil, fmt.Errorf("%w: session %s was saved by a build whose Python template is %q, this one's is %q; it cannot be resumed here (run the build that saved it)", ErrArtifactMismatch, id, h.Artifact, artifact)
	}
	blob := func(name, what string) ([]byte, error) {
		loc, ok := l.blobs[name]
		if !ok {
			return nil, fmt.Errorf("%w: session %s: %s is missing from its log; it is not loaded", ErrCorrupt, id, what)
		}
		b, err := l.read(loc.off, loc.n)
		if err != nil {
			return nil, d.unavailable("load "+id, err)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != name {
			l.fi = nil
			return nil, fmt.Errorf("%w: session %s: %s does not match its checksum; it is not loaded", ErrCorrupt, id, what)
		}
		return b, nil
	}
	st := &State{
		ID: h.ID, Owner: h.Owner, Artifact: h.Artifact, Format: h.Format, Epoch: h.Epoch,
		Options: h.Options, Python: python, FullFiles: true,
		FuelUsed: h.FuelUsed, Meta: h.Meta, Files: make([]File, 0, len(h.Files)),
	}
	for i, name := range h.Frames {
		data, err := blob(name, fmt.Sprintf("Python frame %d", i))
		if err != nil {
			return nil, err
		}
		f := Frame{Data: data}
		hex.Decode(f.Sum[:], []byte(name))
		st.PythonFrames = append(st.PythonFrames, f)
	}
	if h.Outputs != "" {
		if st.Outputs, err = blob(h.Outputs, "its outputs"); err != nil {
			return nil, err
		}
	}
	if h.JS != "" {
		if st.JS, err = blob(h.JS, "its JavaScript log"); err != nil {
			return nil, err
		}
	}
	for _, e := range h.Files {
		if err := CheckPath(e.Path); err != nil {
			return nil, fmt.Errorf("%w: session %s: %v", ErrCorrupt, id, err)
		}
		f := File{Path: e.Path, Mode: e.Mode, ModTime: e.ModTime}
		switch {
		case e.Mode&fs.ModeSymlink != 0:
			f.Data = []byte(e.Target)
		case e.Mode.IsRegular():
			data, err := blob(e.SHA256, "the content of "+e.Path)
			if err != nil {
				return nil, err
			}
			if int64(len(data)) != e.Size {
				return nil, fmt.Errorf("%w: session %s: the content of %s does not match its size; it is not loaded", ErrCorrupt, id, e.Path)
			}
			f.Data = data
		}
		st.Files = append(st.Files, f)
	}
	return st, nil
}

// Delete implements Store.
func (d *Dir) Delete(ctx context.Context, id string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.logsMu.Lock()
	if l := d.logs[id]; l != nil {
		l.mu.Lock()
		l.gone = true
		l.reset()
		l.mu.Unlock()
		delete(d.logs, id)
	}
	d.logsMu.Unlock()
	dir := d.sessionDir(id)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	// Out of the way first, so a crash halfway through the removal
	// leaves no half session under the id.
	gone := filepath.Join(d.root, ".deleted-"+id+"-"+randHex())
	if err := os.Rename(dir, gone); err != nil {
		return fmt.Errorf("store: delete %s: %w", id, err)
	}
	if err := os.RemoveAll(gone); err != nil {
		return fmt.Errorf("store: delete %s: %w", id, err)
	}
	return nil
}

// recordFile is the file that tells a session's folder holds a record:
// its log, or the state file of an earlier build's layout.
func (d *Dir) recordFile(id string) (os.FileInfo, error) {
	fi, err := os.Lstat(filepath.Join(d.sessionDir(id), logName))
	if errors.Is(err, fs.ErrNotExist) {
		return os.Lstat(filepath.Join(d.sessionDir(id), "state"))
	}
	return fi, err
}

// List implements Store.
func (d *Dir) List(ctx context.Context) ([]string, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	entries, err := os.ReadDir(d.root)
	if err != nil {
		return nil, fmt.Errorf("store: list: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if !e.IsDir() || CheckID(e.Name()) != nil {
			continue
		}
		if _, err := d.recordFile(e.Name()); err == nil {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// SavedBefore implements Aged, by the time of each log's file.
func (d *Dir) SavedBefore(ctx context.Context, t time.Time) ([]string, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	entries, err := os.ReadDir(d.root)
	if err != nil {
		return nil, fmt.Errorf("store: list: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if !e.IsDir() || CheckID(e.Name()) != nil {
			continue
		}
		if fi, err := d.recordFile(e.Name()); err == nil && fi.ModTime().Before(t) {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// Ping implements Store: the folder is there and writable.
func (d *Dir) Ping(ctx context.Context) error {
	f, err := os.CreateTemp(d.root, ".ping-")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// Close implements Store: it closes the logs it holds open.
func (d *Dir) Close() error {
	d.logsMu.Lock()
	defer d.logsMu.Unlock()
	for id, l := range d.logs {
		l.mu.Lock()
		l.gone = true
		l.reset()
		l.mu.Unlock()
		delete(d.logs, id)
	}
	return nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func randHex() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
