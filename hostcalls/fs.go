package hostcalls

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"
)

// FS is the confined filesystem of a session: every path is resolved
// inside its root through an os.Root, so neither `..` nor a symbolic link
// (planted before or during the call) can lead out of it. It is safe for
// concurrent use.
type FS struct {
	root *os.Root
	dir  string // the root's absolute, clean host path
	// MaxReadBytes caps the text one Read returns.
	maxRead int64
	// quota, if not nil, is the session's disk quota: Write and Append
	// record their changes in it and refuse one past it.
	quota *DiskQuota
	// owner, once set, is given what the host creates in the root
	// (owner.go).
	owner *RootOwner
}

// OpenFS opens the session root dir, an absolute path to a directory.
func OpenFS(dir string) (*FS, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("hostcalls: session root %q is not an absolute path", dir)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("hostcalls: session root: %w", err)
	}
	f := &FS{root: r, dir: filepath.Clean(dir), maxRead: DefaultMaxReadBytes, owner: &RootOwner{}}
	f.owner.fs = f
	return f, nil
}

// Close closes the root.
func (f *FS) Close() error { return f.root.Close() }

// Dir returns the root's absolute host path.
func (f *FS) Dir() string { return f.dir }

// FSError is a refused or failed file operation. Its message says which
// helper, which path and why.
type FSError struct {
	Op     string // the helper: read, write, append, tree
	Path   string // as the guest gave it
	Reason string
	Err    error // the underlying error, if any
}

func (e *FSError) Error() string {
	return fmt.Sprintf("%s(%s): %s", e.Op, quote(e.Path), e.Reason)
}

func (e *FSError) Unwrap() error { return e.Err }

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "\\'") + "'" }

// Resolve maps a guest path to a slash-separated path relative to the root,
// or refuses it. It does not look at the filesystem: symbolic links are
// the os.Root's to refuse.
func (f *FS) Resolve(op, p string) (string, error) {
	// An error quotes a long path's start only: it goes back to the guest,
	// which need not get megabytes of its own path.
	short := p
	if len(p) > 64 {
		cut := 64
		for cut > 0 && !utf8.RuneStart(p[cut]) {
			cut--
		}
		short = p[:cut] + "..."
	}
	refuse := func(why string) (string, error) { return "", &FSError{Op: op, Path: short, Reason: why} }
	switch {
	case p == "":
		return refuse("the path is empty; give a path relative to the session root")
	case strings.ContainsRune(p, 0):
		return refuse("the path contains a NUL byte")
	case strings.Contains(p, "://"):
		return refuse("a URI is not a file; give a path inside the session root " + f.dir)
	}
	q := p
	if filepath.IsAbs(q) {
		rel, err := filepath.Rel(f.dir, filepath.Clean(q))
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return refuse("the path is outside the session root " + f.dir + "; give a path relative to it, or an absolute path inside it")
		}
		q = rel
	}
	q = filepath.Clean(q)
	if q == ".." || strings.HasPrefix(q, ".."+string(filepath.Separator)) {
		return refuse("the path leads outside the session root " + f.dir + " through '..'")
	}
	// os.Root walks a path a folder at a time, so it would make files at
	// host paths past PATH_MAX, where no walk by path reaches them (the
	// disk quota's recount would miss them): refuse what the guest's own
	// file calls refuse too.
	if n := len(f.abs(q)); n >= pathMax {
		return refuse(fmt.Sprintf("the path is %d bytes long on the host; a path in the session root must be shorter than %d bytes (PATH_MAX)", n, pathMax))
	}
	return filepath.ToSlash(q), nil
}

// pathMax bounds a host path in the session root, like Linux's PATH_MAX
// (which counts the terminating NUL) and the guest filesystem.
const pathMax = 4096

// abs is the host path of a resolved path, which the guest sees too.
func (f *FS) abs(rel string) string {
	if rel == "." {
		return f.dir
	}
	return filepath.Join(f.dir, filepath.FromSlash(rel))
}

// fail turns an error of the os.Root into an FSError that says why.
func fail(op, p string, err error) error {
	var why string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "no such file or directory"
	case errors.Is(err, fs.ErrExist):
		why = "the file exists"
	case errors.Is(err, fs.ErrPermission):
		why = "permission denied"
	case strings.Contains(err.Error(), "escapes from parent"):
		why = "the path leads outside the session root (through a symbolic link or '..')"
	default:
		why = err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			why = pe.Err.Error()
		}
	}
	return &FSError{Op: op, Path: p, Reason: why, Err: err}
}

// Read returns lines offset .. offset+limit-1 of a text file (1-indexed,
// with their line ends); limit <= 0 means to the end. Directories are
// refused, and so is a selection larger than the read cap.
func (f *FS) Read(p string, offset, limit int) (string, error) {
	return f.read(p, offset, limit, nil)
}

// read is Read, taking the memory the text will need from charge (if not
// nil) before it reads.
func (f *FS) read(p string, offset, limit int, charge func(int64) error) (string, error) {
	rel, err := f.Resolve("read", p)
	if err != nil {
		return "", err
	}
	if offset < 1 {
		return "", &FSError{Op: "read", Path: p, Reason: fmt.Sprintf("offset is %d; lines count from 1", offset)}
	}
	// O_NONBLOCK: opening a named pipe planted in the root must not hang
	// the host; it is refused below, as anything but a regular file is.
	file, err := f.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", fail("read", p, err)
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return "", fail("read", p, err)
	}
	if st.IsDir() {
		return "", &FSError{Op: "read", Path: p, Reason: "it is a directory; use tree() to list it"}
	}
	if !st.Mode().IsRegular() {
		return "", &FSError{Op: "read", Path: p, Reason: "it is not a regular file"}
	}
	// The text is at most the file's size and the cap. Read whole, it is
	// read into a buffer of that size; a selection grows its buffer by
	// doubling, to at most twice the text.
	whole := offset == 1 && limit <= 0
	size := min(max(st.Size(), 0), f.maxRead)
	if charge != nil {
		need := size
		if !whole {
			need = 2 * size
		}
		if err := charge(need); err != nil {
			return "", &FSError{Op: "read", Path: p, Reason: "the file was not read: " + err.Error() + "; give offset and limit to read it in parts"}
		}
	}
	br := bufio.NewReaderSize(file, 64<<10)
	var out strings.Builder
	if whole {
		out.Grow(int(size))
	}
	line := 1
	for limit <= 0 || line < offset+limit {
		chunk, err := br.ReadSlice('\n')
		if line >= offset && len(chunk) > 0 {
			if int64(out.Len()+len(chunk)) > f.maxRead {
				return "", &FSError{Op: "read", Path: p, Reason: fmt.Sprintf(
					"the selected text is larger than the %d MiB one read may return; give offset and limit to read it in parts", f.maxRead>>20)}
			}
			out.Write(chunk)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue // the same line goes on
		case err == io.EOF:
			return out.String(), nil
		case err != nil:
			return "", fail("read", p, err)
		}
		line++
	}
	return out.String(), nil
}

// Write replaces (or creates) a file with content, creating its parent
// directories, and returns the file's absolute path. It is atomic: the
// content goes to a temporary file in the same directory, which is then
// renamed over the target. A symbolic link at the target (inside the root)
// is replaced by the file, not followed.
func (f *FS) Write(p, content string) (string, error) {
	rel, err := f.Resolve("write", p)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", &FSError{Op: "write", Path: p, Reason: "it is the session root, a directory"}
	}
	if q := f.quota; q != nil {
		q.Lock()
		defer q.Unlock()
	}
	if err := f.mkdirs("write", p, rel); err != nil {
		return "", err
	}
	// A link that leads out is refused, as append refuses it, although
	// the rename would only replace the link.
	if st, err := f.root.Stat(rel); err == nil && st.IsDir() {
		return "", &FSError{Op: "write", Path: p, Reason: "it is a directory"}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fail("write", p, err)
	}
	// The new file replaces the entry at rel (a file, or a link itself).
	old, oerr := f.root.Lstat(rel)
	if q := f.quota; q != nil {
		var replaced fs.FileInfo
		if oerr == nil {
			replaced = old
		}
		if err := q.CheckReplaceLocked(replaced, int64(len(content))); err != nil {
			return "", quotaFail("write", p, err)
		}
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(path.Dir(rel), "."+path.Base(rel)+".wasmeval-"+hex.EncodeToString(rnd[:])+".tmp")
	file, err := f.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", fail("write", p, err)
	}
	err = f.giveFile("write", p, file)
	if err == nil {
		_, err = io.WriteString(file, content)
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.root.Rename(tmp, rel)
	}
	if err != nil {
		_ = f.root.Remove(tmp)
		return "", fail("write", p, err)
	}
	if q := f.quota; q != nil {
		if info, err := f.root.Lstat(rel); err == nil {
			q.AddedLocked(info)
		}
		if oerr == nil {
			q.RemovedLocked(old)
		}
	}
	return f.abs(rel), nil
}

// quotaFail is an FSError for a change the disk quota refused; it matches
// ErrDiskQuota.
func quotaFail(op, p string, err error) error {
	return &FSError{Op: op, Path: p, Reason: err.Error(), Err: err}
}

// Append adds content at the end of a file, creating it and its parent
// directories, and returns the file's absolute path.
func (f *FS) Append(p, content string) (string, error) {
	rel, err := f.Resolve("append", p)
	if err != nil {
		return "", err
	}
	q := f.quota
	if q != nil {
		q.Lock()
		defer q.Unlock()
	}
	if err := f.mkdirs("append", p, rel); err != nil {
		return "", err
	}
	before, berr := f.root.Stat(rel) // the file the open below reaches
	if errors.Is(berr, fs.ErrNotExist) {
		if info, err := f.root.Lstat(rel); err == nil && info.Mode()&fs.ModeSymlink != 0 {
			// Created through the link, the file could land anywhere the
			// link leads (past PATH_MAX among others): only existing
			// targets are appended to through links.
			return "", &FSError{Op: "append", Path: p, Reason: "it is a symbolic link to a file that does not exist; append creates files only where its path names them"}
		}
	}
	if q != nil {
		var err error
		if berr == nil {
			err = q.CheckGrowLocked(before, before.Size()+int64(len(content)))
		} else {
			err = q.CheckLocked(int64(len(content)), 1)
		}
		if err != nil {
			return "", quotaFail("append", p, err)
		}
	}
	// O_NONBLOCK: a named pipe planted in the root must not hang the host.
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND | syscall.O_NONBLOCK
	var (
		file    *os.File
		created bool
	)
	if f.owner.tracks() && berr != nil {
		// A file to give to the root's owner: only one this open made
		// (O_EXCL, which follows no link), not one that appeared meanwhile.
		file, err = f.root.OpenFile(rel, flags|os.O_EXCL, 0o644)
		created = err == nil
	}
	if !created {
		file, err = f.root.OpenFile(rel, flags, 0o644)
	}
	if err != nil {
		return "", fail("append", p, err)
	}
	if created {
		if err := f.giveFile("append", p, file); err != nil {
			file.Close()
			return "", err
		}
	}
	if st, err := file.Stat(); err != nil || !st.Mode().IsRegular() {
		file.Close()
		if err != nil {
			return "", fail("append", p, err)
		}
		return "", &FSError{Op: "append", Path: p, Reason: "it is not a regular file"}
	}
	_, err = io.WriteString(file, content)
	if q != nil {
		if after, serr := file.Stat(); serr == nil {
			switch {
			case berr != nil:
				q.AddedLocked(after)
			case os.SameFile(before, after):
				q.ChangedLocked(before, after)
			}
		}
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fail("append", p, err)
	}
	return f.abs(rel), nil
}

// mkdirs makes the missing parents of rel, each within the disk quota
// (whose lock the caller holds), and checks that the file rel fits within
// PATH_MAX where it really lands (see fitsPathMax).
func (f *FS) mkdirs(op, p, rel string) (err error) {
	dir := path.Dir(rel)
	if dir == "." {
		return nil
	}
	defer func() {
		if err == nil {
			err = f.fitsPathMax(op, p, rel)
		}
	}()
	parts := strings.Split(dir, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		if _, err := f.root.Stat(sub); err == nil {
			continue // MkdirAll's habit: a file in the way fails below, at the open
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fail(op, p, err)
		}
		if err := f.fitsPathMax(op, p, sub); err != nil {
			return err
		}
		if q := f.quota; q != nil {
			if err := q.CheckLocked(0, 1); err != nil {
				return quotaFail(op, p, err)
			}
		}
		if err := f.root.Mkdir(sub, 0o755); err != nil {
			return fail(op, p, err)
		}
		if q := f.quota; q != nil {
			if info, err := f.root.Lstat(sub); err == nil {
				q.AddedLocked(info)
			}
		}
		if err := f.giveDir(op, p, sub); err != nil {
			return err
		}
	}
	return nil
}

// fitsPathMax refuses the new entry rel when, through the links on its
// way, it would land at a host path of PATH_MAX or more (Resolve checks
// the path as written; a link to a deep folder makes a short path long),
// where walks by path, the disk quota's recount among them, cannot reach
// it. Where the real path cannot be read (not Linux), it lets rel pass.
func (f *FS) fitsPathMax(op, p, rel string) error {
	d, err := f.root.Open(path.Dir(rel))
	if err != nil {
		return nil // the open or mkdir that follows says why
	}
	defer d.Close()
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", d.Fd()))
	if err != nil {
		return nil
	}
	// Write's temporary file beside it has the longer name.
	if n := len(real) + 1 + len(".wasmeval-000000000000.tmp") + len(path.Base(rel)) + 1; n >= pathMax {
		_, err := refuseLong(op, p, n)
		return err
	}
	return nil
}

// refuseLong is the error for a path that lands n bytes deep on the host.
func refuseLong(op, p string, n int) (string, error) {
	short := p
	if len(p) > 64 {
		cut := 64
		for cut > 0 && !utf8.RuneStart(p[cut]) {
			cut--
		}
		short = p[:cut] + "..."
	}
	return "", &FSError{Op: op, Path: short, Reason: fmt.Sprintf("the path is %d bytes long on the host (through its links); a path in the session root must be shorter than %d bytes (PATH_MAX)", n, pathMax)}
}

// maxTreeEntries caps the lines of one tree.
const maxTreeEntries = 2000

// Tree lists a directory and its subdirectories down to maxDepth levels,
// as the tree command draws it. Names starting with a dot are left out
// unless showHidden. Symbolic links are shown with an @ and not followed.
func (f *FS) Tree(p string, maxDepth int, showHidden bool) (string, error) {
	rel, err := f.Resolve("tree", p)
	if err != nil {
		return "", err
	}
	if maxDepth < 1 {
		return "", &FSError{Op: "tree", Path: p, Reason: fmt.Sprintf("max_depth is %d; give 1 or more", maxDepth)}
	}
	st, err := f.root.Stat(rel)
	if err != nil {
		return "", fail("tree", p, err)
	}
	if !st.IsDir() {
		return "", &FSError{Op: "tree", Path: p, Reason: "it is not a directory; use read() for a file"}
	}
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(p, "/") + "/\n")
	n, more := 0, 0
	fsys := f.root.FS()
	var walk func(dir, prefix string, depth int) error
	walk = func(dir, prefix string, depth int) error {
		ents, err := fs.ReadDir(fsys, dir)
		if err != nil {
			return err
		}
		kept := ents[:0]
		for _, e := range ents {
			if showHidden || !strings.HasPrefix(e.Name(), ".") {
				kept = append(kept, e)
			}
		}
		sort.Slice(kept, func(i, j int) bool { return kept[i].Name() < kept[j].Name() })
		for i, e := range kept {
			if n >= maxTreeEntries {
				more++
				continue
			}
			n++
			branch, next := "├── ", "│   "
			if i == len(kept)-1 {
				branch, next = "└── ", "    "
			}
			name := e.Name()
			switch {
			case e.Type()&fs.ModeSymlink != 0:
				name += "@"
			case e.IsDir():
				name += "/"
			}
			b.WriteString(prefix + branch + name + "\n")
			if e.IsDir() && depth < maxDepth {
				if err := walk(path.Join(dir, e.Name()), prefix+next, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(rel, "", 1); err != nil {
		return "", fail("tree", p, err)
	}
	if more > 0 {
		fmt.Fprintf(&b, "… %d more entries not shown (tree shows at most %d); list a subdirectory or lower max_depth\n", more, maxTreeEntries)
	}
	return b.String(), nil
}
