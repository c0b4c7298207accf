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
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

func init() { Register("dir", openDirURL) }

// Dir is the store of one process's sessions in a folder (dir:///path):
// sessions survive a restart of that process. Each session is a folder
// named by its id:
//
//	<id>/state          the record: magic, checksum, header (JSON), Python index
//	<id>/frame-<sha256> each Python frame, named by its hash
//	<id>/files/<sha256> each regular file's content, named by its hash
//
// A Save writes the files and frames it adds first (each to a temporary
// name, synced, then renamed), then the record the same way, then removes
// the files no record names any more: a crash at any point leaves the old
// record or the new one, each with all its files. A Save after a light
// eval writes one new frame and the record, not the whole Python state.
// Load checks the record's checksum and every file's and frame's hash.
//
// By default every file and folder change is synced before a Save
// returns, so a saved state survives a crash of the machine too; with
// NoSync (dir:///path?sync=none) nothing is synced, so a saved state
// survives the process being killed (the kernel keeps what it wrote) but
// a machine crash may lose recent saves; a record is never left half
// written either way (it is renamed into place whole).
//
// Two processes must not share a Dir: it locks within the process only.
type Dir struct {
	root   string
	noSync bool
	mu     sync.RWMutex // Save and Delete exclude Load
	// last is the header each id was last saved with, so a Save
	// need not read the record back (this process is the Dir's only
	// writer).
	last    map[string]*dirHeader
	lastOut map[string]lastBlob // by id/field
	// blobsWritten says the Save in progress wrote a blob whose folder
	// is not synced yet (under mu).
	blobsWritten bool
}

// dirMagic starts every record; the version after it is Format.
const dirMagic = "wasmeval-state\n"

// dirHeader is a record's metadata and file list.
type dirHeader struct {
	ID        string         `json:"id"`
	Owner     string         `json:"owner"`
	Artifact  string         `json:"artifact"`
	Format    int            `json:"format"`
	Epoch     int64          `json:"epoch"`
	Options   []byte         `json:"options,omitempty"`
	Outputs   string         `json:"outputs,omitempty"` // the SHA-256 of its blob in files/
	FuelUsed  uint64         `json:"fuelUsed"`
	JS        string         `json:"js,omitempty"` // the SHA-256 of its blob in files/
	Meta      []byte         `json:"meta,omitempty"`
	Files     []dirFileEntry `json:"files"`
	PythonLen int            `json:"pythonLen"`
	// Frames are the SHA-256 of the Python frames, in order; each is a
	// blob in files/.
	Frames []string `json:"frames,omitempty"`
}

// dirFileEntry is one file of a record: a regular file's content is in
// files/<SHA256>; a symlink's target is in Target.
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
	return &Dir{root: filepath.Clean(path), last: map[string]*dirHeader{}, lastOut: map[string]lastBlob{}}, nil
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
	d.mu.Lock()
	defer d.mu.Unlock()
	d.blobsWritten = false
	dir := d.sessionDir(st.ID)
	prev, err := d.last[st.ID], error(nil)
	if prev == nil {
		prev, _, err = d.readHeader(st.ID)
	}
	switch {
	case errors.Is(err, ErrNotFound) && !st.FullFiles:
		return fmt.Errorf("store: save %s: no record to apply a delta of files to (deleted meanwhile?); save the whole set: %w", st.ID, err)
	case errors.Is(err, ErrNotFound):
		prev = nil
	case err != nil && !st.FullFiles:
		return fmt.Errorf("store: save %s: the stored record cannot be read, so a delta cannot be applied to it: %w", st.ID, err)
	case err != nil:
		prev = nil // a full save replaces a corrupt record
	}
	if prev != nil && epoch < prev.Epoch {
		return fmt.Errorf("%w: session %s is stored at epoch %d, this save has %d", ErrStaleEpoch, st.ID, prev.Epoch, epoch)
	}
	files := map[string]dirFileEntry{}
	if prev != nil && !st.FullFiles {
		for _, e := range prev.Files {
			files[e.Path] = e
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "files"), 0o700); err != nil {
		return d.unavailable("save "+st.ID, err)
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
			if err := d.writeBlob(filepath.Join(dir, "files", e.SHA256), f.Data); err != nil {
				return d.unavailable("save "+st.ID+": "+f.Path, err)
			}
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
	// The Python frames: the ones the last record named are there (a
	// light eval adds one frame); a new one is checked, then written.
	var known map[string]bool
	if prev != nil {
		known = make(map[string]bool, len(prev.Frames))
		for _, f := range prev.Frames {
			known[f] = true
		}
	}
	h.Frames = make([]string, len(st.PythonFrames))
	var frames []*pendingFrame
	defer func() {
		for _, w := range frames {
			<-w.done // no write outlives the Save
			if w.tmp != "" {
				os.Remove(w.tmp) // not renamed: the save failed
			}
		}
	}()
	for i, f := range st.PythonFrames {
		name := hex.EncodeToString(f.Sum[:])
		h.Frames[i] = name
		if !known[name] {
			if err := checkFrame(st.ID, i, f); err != nil {
				return err
			}
		}
		path := filepath.Join(dir, framePrefix+name)
		if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(f.Data)) {
			continue
		}
		// Written and synced while the record is (below): their syncs
		// overlap.
		w := &pendingFrame{path: path, done: make(chan error, 1)}
		go func(data []byte) {
			var err error
			w.tmp, err = d.writeTemp(dir, data)
			w.done <- err
		}(f.Data)
		frames = append(frames, w)
	}
	// The cut outputs (up to 64 MiB) and the JavaScript log (up to 1 MiB
	// of code) are blobs of their own, written only when they change.
	if h.Outputs, err = d.fieldBlob(st.ID, "outputs", st.Outputs); err != nil {
		return err
	}
	if h.JS, err = d.fieldBlob(st.ID, "js", st.JS); err != nil {
		return err
	}
	if d.blobsWritten && !d.noSync {
		// The blobs' names in files/ last before a record names them.
		if err := syncDir(filepath.Join(dir, "files")); err != nil {
			return d.unavailable("save "+st.ID, err)
		}
	}
	d.blobsWritten = false
	head, err := encodeRecord(&h, st.Python)
	if err != nil {
		return fmt.Errorf("store: save %s: %w", st.ID, err)
	}
	tmp, err := d.writeTemp(dir, head, st.Python)
	if err != nil {
		return d.unavailable("save "+st.ID, err)
	}
	defer func() {
		if tmp != "" {
			os.Remove(tmp) // not renamed: the save failed
		}
	}()
	for i, w := range frames {
		err := <-w.done
		w.done <- err // for the deferred wait
		if err != nil {
			return d.unavailable(fmt.Sprintf("save %s: new Python frame %d", st.ID, i), err)
		}
		if err := os.Rename(w.tmp, w.path); err != nil {
			return d.unavailable("save "+st.ID, err)
		}
		w.tmp = ""
	}
	// The frames' renames come before the record's in the same folder,
	// and one sync of the folder makes both last (see pendingFrame).
	if err := os.Rename(tmp, filepath.Join(dir, "state")); err != nil {
		return d.unavailable("save "+st.ID, err)
	}
	tmp = ""
	if !d.noSync {
		if err := syncDir(dir); err != nil {
			return d.unavailable("save "+st.ID, err)
		}
	}
	if prev == nil && !d.noSync {
		// A new session folder: its entry in the store's folder must last.
		if err := syncDir(d.root); err != nil {
			return d.unavailable("save "+st.ID, err)
		}
	}
	d.last[st.ID] = &h
	switch {
	case prev == nil:
	case prev.Outputs != h.Outputs || prev.JS != h.JS || !sameBlobs(prev.Files, h.Files):
		d.collect(dir, &h)
	case !slices.Equal(prev.Frames, h.Frames):
		// Only frames changed (a light eval): the ones the last record
		// named and this one does not go, without listing the folders.
		keep := make(map[string]bool, len(h.Frames))
		for _, f := range h.Frames {
			keep[f] = true
		}
		for _, f := range prev.Frames {
			if !keep[f] {
				os.Remove(filepath.Join(dir, framePrefix+f))
			}
		}
	}
	return nil
}

// fieldBlob writes b, a field of id's state, as a blob named by its
// SHA-256 and returns the name ("" for none). A save handing the very
// slice it handed last time (the Store contract lets a store keep it) does
// not even hash it again.
func (d *Dir) fieldBlob(id, field string, b []byte) (string, error) {
	if len(b) == 0 {
		return "", nil
	}
	key := id + "/" + field
	if o := d.lastOut[key]; o.n == len(b) && o.p == &b[0] {
		return o.sum, nil
	}
	sum := sha256.Sum256(b)
	name := hex.EncodeToString(sum[:])
	if err := d.writeBlob(filepath.Join(d.sessionDir(id), "files", name), b); err != nil {
		return "", d.unavailable("save "+id+": "+field, err)
	}
	d.lastOut[key] = lastBlob{p: &b[0], n: len(b), sum: name}
	return name, nil
}

// lastBlob remembers the slice a Save wrote as a blob, and its hash.
type lastBlob struct {
	p   *byte
	n   int
	sum string
}

// sameBlobs reports whether two file lists name the same contents, so no
// blob became garbage.
func sameBlobs(a, b []dirFileEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].SHA256 != b[i].SHA256 {
			return false
		}
	}
	return true
}

// collect removes the file blobs and frames of dir that no entry names
// (left by earlier records), and temporary files of interrupted saves.
func (d *Dir) collect(dir string, h *dirHeader) {
	keep := map[string]bool{h.Outputs: true, h.JS: true}
	for _, f := range h.Frames {
		keep[f] = true
	}
	for _, e := range h.Files {
		if e.SHA256 != "" {
			keep[e.SHA256] = true
		}
	}
	if blobs, err := os.ReadDir(filepath.Join(dir, "files")); err == nil {
		for _, b := range blobs {
			if !keep[b.Name()] {
				os.Remove(filepath.Join(dir, "files", b.Name()))
			}
		}
	}
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if name, ok := strings.CutPrefix(e.Name(), framePrefix); ok && !keep[name] || strings.HasPrefix(e.Name(), ".tmp-") {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
}

// encodeRecord lays a record out: magic, format (u32), CRC-32C of the
// rest (u32; the files' contents are checked by their SHA-256 names),
// header length (u32), header JSON, Python state. It returns the record
// up to the Python state, which follows it unchanged.
func encodeRecord(h *dirHeader, python []byte) ([]byte, error) {
	hj, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(dirMagic)+12+len(hj))
	out = append(out, dirMagic...)
	out = binary.LittleEndian.AppendUint32(out, Format)
	out = binary.LittleEndian.AppendUint32(out, 0) // the CRC, below
	body := len(out)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(hj)))
	out = append(out, hj...)
	crc := crc32.Update(crc32.Checksum(out[body:], castagnoli), castagnoli, python)
	binary.LittleEndian.PutUint32(out[body-4:], crc)
	return out, nil
}

// decodeRecord checks a record and splits it into its header and Python
// state.
func decodeRecord(id string, b []byte) (*dirHeader, []byte, error) {
	corrupt := func(why string) error {
		return fmt.Errorf("%w: session %s: %s; it is not loaded", ErrCorrupt, id, why)
	}
	if len(b) < len(dirMagic)+12 || string(b[:len(dirMagic)]) != dirMagic {
		return nil, nil, corrupt("not a wasmeval state record")
	}
	b = b[len(dirMagic):]
	if v := binary.LittleEndian.Uint32(b); v != Format {
		return nil, nil, fmt.Errorf("%w: session %s was stored in format %d; this build reads format %d", ErrFormat, id, v, Format)
	}
	want, body := binary.LittleEndian.Uint32(b[4:]), b[8:]
	if crc32.Checksum(body, castagnoli) != want {
		return nil, nil, corrupt("the record's checksum does not match")
	}
	n := binary.LittleEndian.Uint32(body)
	if uint64(n) > uint64(len(body)-4) {
		return nil, nil, corrupt("the header runs past the record")
	}
	var h dirHeader
	if err := json.Unmarshal(body[4:4+n], &h); err != nil {
		return nil, nil, corrupt("the header does not decode: " + err.Error())
	}
	python := body[4+n:]
	if h.ID != id || len(python) != h.PythonLen {
		return nil, nil, corrupt("the header does not fit the record")
	}
	return &h, python, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// readHeader reads and checks the record of id.
func (d *Dir) readHeader(id string) (*dirHeader, []byte, error) {
	b, err := os.ReadFile(filepath.Join(d.sessionDir(id), "state"))
	if errors.Is(err, fs.ErrNotExist) {
		if _, rerr := os.Stat(d.root); rerr != nil {
			// The store's folder itself is gone (an unmounted disk): an
			// outage, not a session that does not exist.
			return nil, nil, d.unavailable("load "+id, rerr)
		}
		return nil, nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, nil, d.unavailable("load "+id, err)
	}
	return decodeRecord(id, b)
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
	h, python, err := d.readHeader(id)
	if err != nil {
		return nil, err
	}
	if h.Artifact != artifact {
		return nil, fmt.Errorf("%w: session %s was saved by a build whose Python template is %q, this one's is %q; it cannot be resumed here (run the build that saved it)", ErrArtifactMismatch, id, h.Artifact, artifact)
	}
	st := &State{
		ID: h.ID, Owner: h.Owner, Artifact: h.Artifact, Format: h.Format, Epoch: h.Epoch,
		Options: h.Options, Python: python, FullFiles: true,
		FuelUsed: h.FuelUsed, Meta: h.Meta, Files: make([]File, 0, len(h.Files)),
	}
	for i, name := range h.Frames {
		f := Frame{}
		data, err := os.ReadFile(filepath.Join(d.sessionDir(id), framePrefix+name))
		if err == nil {
			f.Sum, f.Data = sha256.Sum256(data), data
		}
		if err != nil || hex.EncodeToString(f.Sum[:]) != name {
			return nil, fmt.Errorf("%w: session %s: Python frame %d is missing or does not match its checksum (%v); it is not loaded", ErrCorrupt, id, i, err)
		}
		st.PythonFrames = append(st.PythonFrames, f)
	}
	for _, f := range []struct {
		name, sum string
		to        *[]byte
	}{{"outputs", h.Outputs, &st.Outputs}, {"JavaScript log", h.JS, &st.JS}} {
		if f.sum == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d.sessionDir(id), "files", f.sum))
		if sum := sha256.Sum256(b); err != nil || hex.EncodeToString(sum[:]) != f.sum {
			return nil, fmt.Errorf("%w: session %s: its %s is missing or does not match its checksum (%v); it is not loaded", ErrCorrupt, id, f.name, err)
		}
		*f.to = b
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
			data, err := os.ReadFile(filepath.Join(d.sessionDir(id), "files", e.SHA256))
			if err != nil {
				return nil, fmt.Errorf("%w: session %s: the content of %s is missing: %v", ErrCorrupt, id, e.Path, err)
			}
			if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != e.SHA256 || int64(len(data)) != e.Size {
				return nil, fmt.Errorf("%w: session %s: the content of %s does not match its checksum; it is not loaded", ErrCorrupt, id, e.Path)
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
	dir := d.sessionDir(id)
	delete(d.last, id)
	delete(d.lastOut, id+"/outputs")
	delete(d.lastOut, id+"/js")
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
		if _, err := os.Lstat(filepath.Join(d.root, e.Name(), "state")); err == nil {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// SavedBefore implements Aged, by the time of each record's file.
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
		if fi, err := os.Lstat(filepath.Join(d.root, e.Name(), "state")); err == nil && fi.ModTime().Before(t) {
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

// Close implements Store.
func (d *Dir) Close() error { return nil }

// writeBlob writes a content-addressed file, unless it is there already.
// Its folder is synced once before the record is written (Save), not
// after every blob.
func (d *Dir) writeBlob(path string, data []byte) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
		return nil
	}
	d.blobsWritten = true
	return d.writeFile(path, false, data)
}

// framePrefix names a Python frame's file in a session's folder.
const framePrefix = "frame-"

// pendingFrame is a new Python frame being written by a Save: to tmp,
// then renamed to path once it is synced (done).
//
// A frame's file is synced, but not its folder: the frames are in the
// record's folder, which Save syncs once the record is renamed into
// place, and the frames' and the record's syncs overlap, so a light
// eval's save waits for two rounds of syncs, not four. A crash before the
// folder's sync cannot leave the new record without its frames on the
// file systems this runs on (ext4, xfs: a folder's changes reach the disk
// in the order they were made, and the frames' renames come first).
type pendingFrame struct {
	path, tmp string
	done      chan error // the write's result (read twice: put back)
}

// writeAtomic writes data to path through a synced temporary file renamed
// over it, then syncs the folder, so path holds the old bytes or the new
// ones after a crash (without syncing: after the process is killed).
func (d *Dir) writeAtomic(path string, pieces ...[]byte) error {
	return d.writeFile(path, true, pieces...)
}

// writeTemp writes pieces to a new temporary file in dir, synced (unless
// NoSync), and returns its name.
func (d *Dir) writeTemp(dir string, pieces ...[]byte) (string, error) {
	f, err := os.CreateTemp(dir, ".tmp-")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	for _, p := range pieces {
		if err == nil {
			_, err = f.Write(p)
		}
	}
	if err == nil && !d.noSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// writeFile is writeAtomic, syncing the folder only when syncFolder.
func (d *Dir) writeFile(path string, syncFolder bool, pieces ...[]byte) error {
	dir := filepath.Dir(path)
	tmp, err := d.writeTemp(dir, pieces...)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	if d.noSync || !syncFolder {
		return nil
	}
	return syncDir(dir)
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
