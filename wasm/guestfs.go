package wasm

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wasmeval/wasmeval/internal/rootlink"
)

// maxSymlinks bounds symlink expansions in one path lookup, like Linux's MAXSYMLINKS.
const maxSymlinks = 40

// pathMax bounds the length of a path or symlink target, like Linux's PATH_MAX
// (which counts the terminating NUL). It also bounds the work of one lookup,
// which costs a few system calls per component inside the root.
const pathMax = 4096

// seekOffset is int64. The Seek methods below spell it so, because go vet's
// stdmethods check takes any method named Seek(int64, int) for an io.Seeker
// and rejects the Errno result that experimental/sys.File requires.
type seekOffset = int64

// syntheticDev is the st_dev of the read-only in-memory files and the synthetic directories.
const syntheticDev = 0x7761736d // "wasm"

// GuestFS is the filesystem a guest sees, mounted once at guest path "/"
// (wazero's sysfs.FSConfig.WithSysFSMount(fs, "/")). It holds:
//
//   - the session root, a host directory shown read-write at the same absolute
//     path as on the host. Every host access goes through an os.Root opened on it.
//   - read-only in-memory files at fixed absolute paths (the stdlib zip, ...).
//   - synthetic read-only directories on the way to those two (/, /usr, /tmp, ...),
//     whose listings show only the next component toward them.
//
// Nothing else exists: /etc/passwd, /proc or the host's home are ENOENT.
// Because the mount is always "/", the guest's preopen table does not depend on
// the session, so one CPython memory snapshot serves sessions with different roots.
//
// # Paths and symlinks
//
// wazero hands the FS paths relative to "/" (cleaned, no leading slash, "." for
// "/" itself), or a directory's path joined with "/" and a relative name. GuestFS
// resolves every path itself, in guest space, one component at a time: ".." never
// goes above "/", and a symlink inside the root is expanded against the guest
// tree (an absolute target from "/", a relative one from the link's directory).
// A pre-existing link to /etc/passwd therefore resolves to the guest's
// /etc/passwd, which does not exist. Only the resolved, symlink-free path is
// handed to os.Root, which would refuse to leave the root anyway.
//
// The guest's symlinks must be safe for the host too: host code (fork, the
// files API, an operator's tools, tar) resolves them with the kernel, where
// "l/.." goes to the parent of l's target, not of l. So a guest may create a
// symlink only when its target points strictly downward: one or more plain
// names ("data.csv", "a/b/c"), read from the link's own directory, with no
// empty, "." or ".." component. An absolute target naming a path strictly
// below the link's directory is stored in that relative form (Readlink then
// returns the relative text); any other target is EPERM. When every link in
// the root points downward, a host path that stays inside the root lexically
// stays inside it for real: each link only goes deeper, so the real depth is
// never less than the lexical one. Renames and hard links move links but do
// not change their text, so they keep that property. Links planted in the
// root by the host before the session are the host's own: the guest's view
// confines them, host tools follow them as the host made them, and the
// guest may remove such a link but not rename it or link it elsewhere (a
// link moved up the tree leads further out), nor rename a directory that
// holds one at any depth (which would move the link too).
// Hard links need a source inside the root.
//
// # Errors
//
// After the usual checks (ENOENT, EEXIST, EISDIR, ENOTDIR, ELOOP):
//
//   - EROFS: creating, writing, truncating, removing or renaming anything
//     outside the root, including the in-memory files, the synthetic
//     directories and the root's own directory entry. (A rename across the
//     boundary would be EXDEV, which wazero's errno set lacks.)
//   - EPERM: a symlink whose target does not point strictly downward (see
//     above), or a rename or hard link of one; a hard link whose source is
//     outside the root.
//   - EMFILE: an open past MaxOpenHostFiles files open at once in this
//     GuestFS, or past half the process's descriptor limit in all of them
//     (GuestFS says ERANGE, as wazero has no EMFILE; InstantiateWASI's
//     module translates it, see guestfds.go).
//   - EACCES: opening a FIFO, socket or device file found in the root (opening
//     one could block the host thread).
//   - ENOENT: anything that is not part of the guest's tree.
//
// # Disk quota
//
// With a DiskQuota, every change of the root (creating, writing, truncating,
// linking, removing, renaming) is measured and recorded in it, and a change
// that would pass it fails with ENOSPC. wazero's errno set lacks ENOSPC, so
// GuestFS returns ENOTSOCK for it, which InstantiateWASI's WASI module
// turns into ENOSPC for the guest; with a WASI module instantiated otherwise
// the guest sees ENOTSOCK.
//
// GuestFS is safe for concurrent use; files it opens are not.
type GuestFS struct {
	experimentalsys.UnimplementedFS

	quota    DiskQuota // nil: none
	fds      fdCount   // host files open (guestfds.go)
	root     *os.Root
	rootPath string                       // guest path of the session root: clean, absolute, never "/"
	files    map[string][]byte            // read-only in-memory files by guest path
	dirs     map[string][]string          // synthetic directories by guest path: sorted child names
	stamp    func() time.Time             // the root's clock (SetRootClock); nil: the host's
	created  func(rel string, f *os.File) // OnCreate's; nil: none
}

// OnCreate makes fn be told of every file and folder the guest creates in
// the root, after it is made: rel is its path in the root, f the
// descriptor a file was created with (valid only during the call), nil
// for a folder. A session whose code also runs as another user (a local
// Jupyter kernel, when wasmeval runs as root) gives those entries to that
// user through it (hostcalls.RootOwner.GuestCreated). Call it before the
// GuestFS is used.
func (g *GuestFS) OnCreate(fn func(rel string, f *os.File)) { g.created = fn }

var _ experimentalsys.FS = (*GuestFS)(nil)

// errnoQuota is the errno of a change the disk quota refused: ENOTSOCK,
// which no file operation returns otherwise, stands for ENOSPC (missing
// from wazero's errno set) until InstantiateWASI's module translates it.
const errnoQuota = experimentalsys.ENOTSOCK

// NewGuestFS returns the filesystem for a session whose root is the host
// directory root, with the read-only in-memory files given by guest path.
//
// root must be an absolute path to an existing directory other than "/".
// Each key of files must be a clean absolute path that is neither inside the
// root nor on the way to the root or to another file. The byte slices are
// used, not copied: the caller must not change them afterwards. quota, if
// not nil, is the session's disk quota.
//
// Close the GuestFS when the session ends.
func NewGuestFS(root string, files map[string][]byte, quota DiskQuota) (*GuestFS, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("wasm: session root %q: not an absolute path", root)
	}
	root = filepath.Clean(root)
	guestRoot := filepath.ToSlash(root)
	if !strings.HasPrefix(guestRoot, "/") {
		return nil, fmt.Errorf("wasm: session root %s: must be a path that starts with /", root)
	}
	if guestRoot == "/" {
		return nil, errors.New("wasm: session root /: must be a directory below /, not the whole host filesystem")
	}
	info, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("wasm: session root %s: %w", root, unwrapPathError(err))
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("wasm: session root %s: not a directory", root)
	}

	g := &GuestFS{
		quota:    quota,
		rootPath: guestRoot,
		files:    make(map[string][]byte, len(files)),
		dirs:     map[string][]string{"/": nil},
	}
	g.addAncestors(guestRoot)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names) // deterministic error messages
	for _, name := range names {
		if !strings.HasPrefix(name, "/") || path.Clean(name) != name || name == "/" {
			return nil, fmt.Errorf("wasm: read-only file %q: must be a clean absolute path such as /usr/local/lib/python311.zip", name)
		}
		if _, inRoot := g.relPath(name); inRoot {
			return nil, fmt.Errorf("wasm: read-only file %s: inside the session root %s", name, guestRoot)
		}
		g.files[name] = files[name]
		g.addAncestors(name)
	}
	for _, name := range names {
		if _, ok := g.dirs[name]; ok {
			return nil, fmt.Errorf("wasm: read-only file %s: the session root or another read-only file lies under it", name)
		}
	}

	if g.root, err = os.OpenRoot(root); err != nil {
		return nil, fmt.Errorf("wasm: session root %s: %w", root, unwrapPathError(err))
	}
	if c, ok := rootClocks.Load(root); ok {
		g.stamp = c.(*rootClock).now
	}
	return g, nil
}

// addAncestors records p as a child of its parent, and so on up to "/".
func (g *GuestFS) addAncestors(p string) {
	for p != "/" {
		parent, name := path.Dir(p), path.Base(p)
		children := g.dirs[parent]
		if i, found := slices.BinarySearch(children, name); !found {
			g.dirs[parent] = slices.Insert(children, i, name)
		}
		p = parent
	}
}

// unwrapPathError drops the *PathError wrapper, whose path the caller already prints.
func unwrapPathError(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}

// Close closes the os.Root of the session root. Files already open stay usable.
func (g *GuestFS) Close() error {
	g.fds.close()
	return g.root.Close()
}

// String implements fmt.Stringer.
func (g *GuestFS) String() string {
	return "guestfs:" + g.rootPath
}

// nodeKind says what a guest path names.
type nodeKind uint8

const (
	kindNone nodeKind = iota // nothing: the path does not exist
	kindHost                 // the session root or something in it
	kindFile                 // a read-only in-memory file
	kindDir                  // a synthetic read-only directory
)

// node is a resolved guest path.
type node struct {
	kind nodeKind
	path string      // absolute guest path; symlink-free except possibly the last component
	rel  string      // path for os.Root when the node is in the root ("." for the root); "" otherwise
	info fs.FileInfo // kindHost: the Lstat of the node
}

func (n *node) isDir() bool {
	return n.kind == kindDir || (n.kind == kindHost && n.info.IsDir())
}

func (n *node) isSymlink() bool {
	return n.kind == kindHost && n.info.Mode()&fs.ModeSymlink != 0
}

// writable reports whether the directory entry of n may be created, removed
// or replaced: only entries strictly inside the root.
func (n *node) writable() bool {
	return n.rel != "" && n.rel != "."
}

// relPath returns the os.Root path of guest path p, if p is the root or in it.
func (g *GuestFS) relPath(p string) (string, bool) {
	if p == g.rootPath {
		return ".", true
	}
	if rest, ok := strings.CutPrefix(p, g.rootPath); ok && rest[0] == '/' {
		return rest[1:], true
	}
	return "", false
}

// lookup classifies the clean, absolute, symlink-free (but for the last
// component) guest path p, without following a symlink in its last component.
func (g *GuestFS) lookup(p string) (node, experimentalsys.Errno) {
	if rel, ok := g.relPath(p); ok {
		info, err := g.root.Lstat(rel)
		if err != nil {
			if errno := experimentalsys.UnwrapOSError(err); errno != experimentalsys.ENOENT {
				return node{}, errno
			}
			return node{kind: kindNone, path: p, rel: rel}, 0
		}
		return node{kind: kindHost, path: p, rel: rel, info: info}, 0
	}
	if _, ok := g.files[p]; ok {
		return node{kind: kindFile, path: p}, 0
	}
	if _, ok := g.dirs[p]; ok {
		return node{kind: kindDir, path: p}, 0
	}
	return node{kind: kindNone, path: p}, 0
}

// resolve walks name from "/" in guest space. Symlinks in directory components
// are always followed; one in the last component only when followLast is set
// or name ends in a slash. A missing last component yields a kindNone node
// whose parent exists (rel says whether that parent is in the root); a
// missing directory component is ENOENT.
func (g *GuestFS) resolve(name string, followLast bool) (node, experimentalsys.Errno) {
	if len(name) >= pathMax {
		return node{}, experimentalsys.ENAMETOOLONG
	}
	trimmed := strings.TrimRight(name, "/")
	mustBeDir := trimmed != name && trimmed != ""
	if mustBeDir {
		followLast = true // POSIX: "link/" names the link's target
	}

	cur := node{kind: kindDir, path: "/"}
	rest := strings.Split(trimmed, "/")
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			// cur is a symlink-free directory, so its lexical parent is its real one;
			// "/.." is "/".
			parent, errno := g.lookup(path.Dir(cur.path))
			if errno != 0 {
				return node{}, errno
			}
			cur = parent
			continue
		}

		p := path.Join(cur.path, c)
		if len(p) >= pathMax {
			// Through a link, a short name can reach a long path: nothing
			// the guest names may lie past PATH_MAX on the host, where
			// walks by path (the disk quota's recount) cannot reach it.
			return node{}, experimentalsys.ENAMETOOLONG
		}
		next, errno := g.lookup(p)
		if errno != 0 {
			return node{}, errno
		}
		last := len(rest) == 0
		if next.kind == kindNone {
			if last {
				return next, 0
			}
			return node{}, experimentalsys.ENOENT
		}
		if next.isSymlink() && (!last || followLast) {
			if links++; links > maxSymlinks {
				return node{}, experimentalsys.ELOOP
			}
			target, err := g.root.Readlink(next.rel)
			if err != nil {
				return node{}, experimentalsys.UnwrapOSError(err)
			}
			target = filepath.ToSlash(target)
			switch {
			case target == "":
				return node{}, experimentalsys.ENOENT
			case len(target) >= pathMax:
				return node{}, experimentalsys.ENAMETOOLONG
			}
			if strings.HasPrefix(target, "/") {
				cur = node{kind: kindDir, path: "/"}
			} // else: relative to the link's directory, which is cur.
			rest = append(strings.Split(target, "/"), rest...)
			continue
		}
		if !last && !next.isDir() {
			return node{}, experimentalsys.ENOTDIR
		}
		cur = next
	}
	if mustBeDir && !cur.isDir() {
		return node{}, experimentalsys.ENOTDIR
	}
	return cur, 0
}

// OpenFile implements the same method as documented on experimental/sys.FS.
func (g *GuestFS) OpenFile(name string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	creat := flag&experimentalsys.O_CREAT != 0
	excl := creat && flag&experimentalsys.O_EXCL != 0
	// POSIX: O_CREAT|O_EXCL never follows a symlink in the last component.
	follow := flag&experimentalsys.O_NOFOLLOW == 0 && !excl
	n, errno := g.resolve(name, follow)
	if errno != 0 {
		return nil, errno
	}
	if excl && n.kind != kindNone {
		return nil, experimentalsys.EEXIST
	}
	write := flag&(experimentalsys.O_RDWR|experimentalsys.O_WRONLY) != 0
	isDirFlag := flag&experimentalsys.O_DIRECTORY != 0

	switch n.kind {
	case kindNone:
		switch {
		case !creat:
			return nil, experimentalsys.ENOENT
		case n.rel == "":
			return nil, experimentalsys.EROFS
		}
		return g.openHost(n.rel, flag, perm)
	case kindFile:
		switch {
		case isDirFlag:
			return nil, experimentalsys.ENOTDIR
		case write, flag&(experimentalsys.O_TRUNC|experimentalsys.O_APPEND) != 0:
			return nil, experimentalsys.EROFS
		}
		return &memFile{path: n.path, data: g.files[n.path]}, 0
	case kindDir:
		if write || flag&experimentalsys.O_TRUNC != 0 {
			return nil, experimentalsys.EISDIR
		}
		return g.openDir(n.path), 0
	}

	mode := n.info.Mode()
	switch {
	case mode&fs.ModeSymlink != 0: // not followed: O_NOFOLLOW
		return nil, experimentalsys.ELOOP
	case isDirFlag && !mode.IsDir():
		return nil, experimentalsys.ENOTDIR
	case !mode.IsDir() && !mode.IsRegular():
		return nil, experimentalsys.EACCES
	}
	return g.openHost(n.rel, flag, perm)
}

// openHost opens rel in the root. rel is symlink-free as far as resolve could tell.
func (g *GuestFS) openHost(rel string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if g.stamp != nil && flag&(experimentalsys.O_CREAT|experimentalsys.O_TRUNC) != 0 {
		if _, err := g.root.Lstat(rel); err != nil || flag&experimentalsys.O_TRUNC != 0 {
			defer g.stamped(0, rel, true) // created or truncated
		}
	}
	q := g.quota
	if q != nil {
		q.Lock()
		defer q.Unlock()
	}
	// A file created or truncated changes the root: measure it before.
	var before fs.FileInfo
	changes := q != nil && flag&(experimentalsys.O_CREAT|experimentalsys.O_TRUNC) != 0
	creates := false
	if !changes && g.created != nil && flag&experimentalsys.O_CREAT != 0 {
		_, err := g.root.Lstat(rel)
		creates = errors.Is(err, fs.ErrNotExist)
	}
	if changes {
		info, err := g.root.Lstat(rel)
		switch {
		case err == nil:
			before = info
		case errors.Is(err, fs.ErrNotExist) && flag&experimentalsys.O_CREAT != 0:
			if q.CheckLocked(0, 1) != nil {
				return nil, errnoQuota
			}
			creates = true
		}
	}
	if !g.fds.take() {
		return nil, errnoTooManyFiles
	}
	f, err := g.root.OpenFile(rel, osFlag(flag), perm.Perm())
	if err != nil {
		g.fds.release()
		return nil, experimentalsys.UnwrapOSError(err)
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close()
		g.fds.release()
		return nil, experimentalsys.UnwrapOSError(err)
	}
	// Recheck what the open found, in case the tree changed since resolve.
	switch mode := info.Mode(); {
	case flag&experimentalsys.O_DIRECTORY != 0 && !mode.IsDir():
		_ = f.Close()
		g.fds.release()
		return nil, experimentalsys.ENOTDIR
	case !mode.IsDir() && !mode.IsRegular():
		_ = f.Close()
		g.fds.release()
		return nil, experimentalsys.EACCES
	}
	if q != nil {
		switch {
		case creates:
			q.AddedLocked(info)
		case before == nil:
		case os.SameFile(before, info):
			q.ChangedLocked(before, info)
		}
		q.OpenedLocked(info)
	}
	if creates && g.created != nil && info.Mode().IsRegular() {
		g.created(rel, f)
	}
	st := g.statOf(rel, info)
	return &hostFile{
		g:     g,
		rel:   rel,
		flag:  flag &^ (experimentalsys.O_CREAT | experimentalsys.O_EXCL | experimentalsys.O_TRUNC),
		file:  f,
		dev:   st.Dev,
		ino:   st.Ino,
		isDir: info.IsDir(),
	}, 0
}

// osFlag converts flags for os.Root.OpenFile. O_NOFOLLOW and O_DIRECTORY are
// handled by resolve and openHost; O_NONBLOCK is not supported on files.
func osFlag(flag experimentalsys.Oflag) int {
	var f int
	switch {
	case flag&experimentalsys.O_RDWR != 0:
		f = os.O_RDWR
	case flag&experimentalsys.O_WRONLY != 0:
		f = os.O_WRONLY
	default:
		f = os.O_RDONLY
	}
	if flag&experimentalsys.O_APPEND != 0 {
		f |= os.O_APPEND
	}
	if flag&experimentalsys.O_CREAT != 0 {
		f |= os.O_CREATE
	}
	if flag&experimentalsys.O_EXCL != 0 {
		f |= os.O_EXCL
	}
	if flag&experimentalsys.O_TRUNC != 0 {
		f |= os.O_TRUNC
	}
	if flag&(experimentalsys.O_SYNC|experimentalsys.O_DSYNC) != 0 {
		f |= os.O_SYNC
	}
	return f
}

// Lstat implements the same method as documented on experimental/sys.FS.
func (g *GuestFS) Lstat(name string) (sys.Stat_t, experimentalsys.Errno) {
	return g.stat(name, false)
}

// Stat implements the same method as documented on experimental/sys.FS.
func (g *GuestFS) Stat(name string) (sys.Stat_t, experimentalsys.Errno) {
	return g.stat(name, true)
}

func (g *GuestFS) stat(name string, follow bool) (sys.Stat_t, experimentalsys.Errno) {
	n, errno := g.resolve(name, follow)
	if errno != 0 {
		return sys.Stat_t{}, errno
	}
	switch n.kind {
	case kindHost:
		return g.statOf(n.rel, n.info), 0
	case kindFile:
		return memStat(n.path, g.files[n.path]), 0
	case kindDir:
		return dirStat(n.path), 0
	}
	return sys.Stat_t{}, experimentalsys.ENOENT
}

// Mkdir implements the same method as documented on experimental/sys.FS.
func (g *GuestFS) Mkdir(name string, perm fs.FileMode) experimentalsys.Errno {
	n, errno := g.resolve(name, false)
	switch {
	case errno != 0:
		return errno
	case n.kind != kindNone:
		return experimentalsys.EEXIST
	case n.rel == "":
		return experimentalsys.EROFS
	}
	errno = g.create(n.rel, nil, func() error { return g.root.Mkdir(n.rel, perm.Perm()) })
	if errno == 0 && g.created != nil {
		g.created(n.rel, nil)
	}
	return errno
}

// create makes the new entry rel in the root with mk, within the disk
// quota; check, if not nil, says whether the quota holds it (nil: an entry
// of no bytes, such as a directory). The entry is recorded as its Lstat
// after mk finds it.
func (g *GuestFS) create(rel string, check func(DiskQuota) error, mk func() error) (errno experimentalsys.Errno) {
	defer func() { g.stamped(errno, rel, true) }()
	q := g.quota
	if q == nil {
		return experimentalsys.UnwrapOSError(mk())
	}
	q.Lock()
	defer q.Unlock()
	if check == nil {
		check = func(q DiskQuota) error { return q.CheckLocked(0, 1) }
	}
	if err := check(q); errors.Is(err, ErrDiskQuota) {
		return errnoQuota
	} else if err != nil {
		return experimentalsys.UnwrapOSError(err)
	}
	if err := mk(); err != nil {
		return experimentalsys.UnwrapOSError(err)
	}
	if info, err := g.root.Lstat(rel); err == nil {
		q.AddedLocked(info)
	}
	return 0
}

// remove removes the entry rel from the root with rm, recording it in the
// disk quota.
func (g *GuestFS) remove(rel string, rm func() error) (errno experimentalsys.Errno) {
	defer func() { g.stamped(errno, path.Dir(rel), false) }()
	q := g.quota
	if q == nil {
		return experimentalsys.UnwrapOSError(rm())
	}
	q.Lock()
	defer q.Unlock()
	before, lerr := g.root.Lstat(rel)
	if err := rm(); err != nil {
		return experimentalsys.UnwrapOSError(err)
	}
	if lerr == nil {
		q.RemovedLocked(before)
	}
	return 0
}

// Chmod implements the same method as documented on experimental/sys.FS.
// Only permission bits are applied: never setuid, setgid or sticky.
func (g *GuestFS) Chmod(name string, perm fs.FileMode) experimentalsys.Errno {
	n, errno := g.resolve(name, true)
	switch {
	case errno != 0:
		return errno
	case n.kind == kindNone:
		return experimentalsys.ENOENT
	case n.kind != kindHost:
		return experimentalsys.EROFS
	}
	return experimentalsys.UnwrapOSError(g.root.Chmod(n.rel, perm.Perm()))
}

// Rename implements the same method as documented on experimental/sys.FS.
// Both paths must be inside the root; otherwise the result is EROFS, as the
// directory entry outside the root cannot change. Like os.Root.Rename, it does
// not replace an existing directory (EEXIST), even an empty one. A symlink
// whose target does not point strictly downward (one the host planted) is
// not moved (EPERM), nor is a directory that holds one at any depth. A
// directory is not moved where an entry in it would get a path of pathMax
// or more (ENAMETOOLONG).
func (g *GuestFS) Rename(from, to string) experimentalsys.Errno {
	src, errno := g.resolve(from, false)
	if errno != 0 {
		return errno
	}
	if src.kind == kindNone {
		return experimentalsys.ENOENT
	}
	dst, errno := g.resolve(to, false)
	switch {
	case errno != 0:
		return errno
	case !src.writable(), !dst.writable():
		return experimentalsys.EROFS
	case !g.movable(src):
		return experimentalsys.EPERM
	}
	if src.isDir() && !src.isSymlink() {
		if errno := g.subtreeMovable(src.rel, dst.rel); errno != 0 {
			return errno
		}
	}
	rename := func() error { return g.root.Rename(src.rel, dst.rel) }
	defer g.stamped(0, path.Dir(src.rel), false)
	defer g.stamped(0, path.Dir(dst.rel), false)
	if g.quota == nil {
		return experimentalsys.UnwrapOSError(rename())
	}
	// The entry moves; one it replaces goes, unless both are links of one file.
	g.quota.Lock()
	defer g.quota.Unlock()
	moved, ferr := g.root.Lstat(src.rel)
	replaced, terr := g.root.Lstat(dst.rel)
	if err := rename(); err != nil {
		return experimentalsys.UnwrapOSError(err)
	}
	if ferr == nil && terr == nil && !os.SameFile(moved, replaced) {
		g.quota.RemovedLocked(replaced)
	}
	return 0
}

// Rmdir implements the same method as documented on experimental/sys.FS.
func (g *GuestFS) Rmdir(name string) experimentalsys.Errno {
	n, errno := g.resolve(name, false)
	switch {
	case errno != 0:
		return errno
	case n.kind == kindNone:
		return experimentalsys.ENOENT
	case !n.isDir():
		return experimentalsys.ENOTDIR
	case !n.writable():
		return experimentalsys.EROFS
	}
	return g.remove(n.rel, func() error { return g.root.Remove(n.rel) })
}

// Unlink implements the same method as documented on experimental/sys.FS.
func (g *GuestFS) Unlink(name string) experimentalsys.Errno {
	n, errno := g.resolve(name, false)
	switch {
	case errno != 0:
		return errno
	case n.kind == kindNone:
		return experimentalsys.ENOENT
	case n.isDir():
		return experimentalsys.EISDIR
	case !n.writable():
		return experimentalsys.EROFS
	}
	return g.remove(n.rel, func() error { return g.root.Remove(n.rel) })
}

// Link implements the same method as documented on experimental/sys.FS.
// The source must be inside the root (EPERM otherwise); a symlink source is
// linked itself, not its target, and only when its target points strictly
// downward (EPERM otherwise).
func (g *GuestFS) Link(oldName, newName string) experimentalsys.Errno {
	src, errno := g.resolve(oldName, false)
	switch {
	case errno != 0:
		return errno
	case src.kind == kindNone:
		return experimentalsys.ENOENT
	case !src.writable(), src.isDir():
		return experimentalsys.EPERM
	}
	dst, errno := g.resolve(newName, false)
	switch {
	case errno != 0:
		return errno
	case dst.kind != kindNone:
		return experimentalsys.EEXIST
	case !dst.writable():
		return experimentalsys.EROFS
	case !g.movable(src):
		return experimentalsys.EPERM
	}
	// The new entry counts as a copy: the source's bytes again.
	check := func(q DiskQuota) error {
		info, err := g.root.Lstat(src.rel)
		if err != nil {
			return err
		}
		return q.CheckEntryLocked(info)
	}
	return g.create(dst.rel, check, func() error { return g.root.Link(src.rel, dst.rel) })
}

// movable reports whether the guest may give n another name (rename, hard
// link): anything but a symlink the host planted whose target does not
// point strictly downward. Such a link, moved up the tree, would lead host
// tools further out than where the host put it.
func (g *GuestFS) movable(n node) bool {
	if !n.isSymlink() {
		return true
	}
	target, err := g.root.Readlink(n.rel)
	if err != nil {
		return false
	}
	if target = filepath.ToSlash(target); strings.HasPrefix(target, "/") {
		return false
	}
	_, ok := downwardTarget(target, "")
	return ok
}

// subtreeMovable checks that the directory rel may move to the root path
// dst: EPERM when it holds (at any depth) a symlink that movable refuses,
// for a folder moved up the tree takes its links with it, and a
// host-planted upward link in it would then lead host tools further out,
// as when it is moved alone; ENAMETOOLONG when an entry in it would end up
// at a host path of pathMax or more. Every path the guest names is
// shorter than that, and so, with this, is every entry it makes: a folder
// moved down into a deep one would otherwise put its content past
// PATH_MAX, where no host tool that walks by path (the disk quota's walk,
// tar, an operator's find) can reach it. The walk never follows a link.
// Errors other than a vanished entry fail the rename.
func (g *GuestFS) subtreeMovable(rel, dst string) experimentalsys.Errno {
	errFound := errors.New("found")
	errDeep := errors.New("too deep")
	room := pathMax - len(g.rootPath) - 1 - len(dst) // for the suffix of an entry below rel
	err := fs.WalkDir(g.root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case len(p)-len(rel) >= room:
			return errDeep
		case d.Type()&fs.ModeSymlink == 0:
			return nil
		}
		if info, err := g.root.Lstat(p); err == nil && !g.movable(node{kind: kindHost, rel: p, info: info}) {
			return errFound
		}
		return nil
	})
	switch {
	case err == errFound:
		return experimentalsys.EPERM
	case err == errDeep:
		return experimentalsys.ENAMETOOLONG
	case err != nil:
		return experimentalsys.UnwrapOSError(err)
	}
	return 0
}

// Symlink implements the same method as documented on experimental/sys.FS.
// target must point strictly downward from the link's directory (EPERM
// otherwise); an absolute target below that directory is stored relative.
// See the type's documentation for why.
func (g *GuestFS) Symlink(target, linkName string) experimentalsys.Errno {
	switch {
	case target == "":
		return experimentalsys.ENOENT // as Linux's symlink(2)
	case len(target) >= pathMax:
		return experimentalsys.ENAMETOOLONG
	}
	dst, errno := g.resolve(linkName, false)
	switch {
	case errno != 0:
		return errno
	case dst.kind != kindNone:
		return experimentalsys.EEXIST
	case !dst.writable():
		return experimentalsys.EROFS
	}
	stored, ok := downwardTarget(target, path.Dir(dst.path))
	if !ok {
		return experimentalsys.EPERM
	}
	check := func(q DiskQuota) error { return q.CheckLocked(int64(len(stored)), 1) }
	return g.create(dst.rel, check, func() error { return g.root.Symlink(stored, dst.rel) })
}

// downwardTarget returns the text to store for a symlink with target in the
// symlink-free guest directory linkDir, if the target points strictly
// downward (rootlink.Down: one or more plain names, none of them empty, "."
// or ".."). An absolute target must lie strictly below linkDir and is made
// relative to it.
func downwardTarget(target, linkDir string) (string, bool) {
	if strings.HasPrefix(target, "/") {
		rest, ok := strings.CutPrefix(target, strings.TrimSuffix(linkDir, "/")+"/")
		if !ok {
			return "", false
		}
		target = rest
	}
	if rootlink.Down(target) != nil {
		return "", false
	}
	return target, true
}

// Readlink implements the same method as documented on experimental/sys.FS.
func (g *GuestFS) Readlink(name string) (string, experimentalsys.Errno) {
	n, errno := g.resolve(name, false)
	switch {
	case errno != 0:
		return "", errno
	case n.kind == kindNone:
		return "", experimentalsys.ENOENT
	case !n.isSymlink():
		return "", experimentalsys.EINVAL
	}
	target, err := g.root.Readlink(n.rel)
	if err != nil {
		return "", experimentalsys.UnwrapOSError(err)
	}
	target = filepath.ToSlash(target)
	// A link made on the host (Symlink stores only downward targets) may
	// lead out of the root: its target is a host path the guest must not
	// read.
	p := target
	if !path.IsAbs(p) {
		p = path.Join(path.Dir(n.path), p)
	}
	if p = path.Clean(p); p != g.rootPath && !strings.HasPrefix(p, g.rootPath+"/") {
		return "", experimentalsys.EACCES
	}
	return target, 0
}

// Utimens implements the same method as documented on experimental/sys.FS.
func (g *GuestFS) Utimens(name string, atim, mtim int64) experimentalsys.Errno {
	n, errno := g.resolve(name, true)
	switch {
	case errno != 0:
		return errno
	case n.kind == kindNone:
		return experimentalsys.ENOENT
	case n.kind != kindHost:
		return experimentalsys.EROFS
	}
	return g.chtimes(n.rel, atim, mtim)
}

func (g *GuestFS) chtimes(rel string, atim, mtim int64) experimentalsys.Errno {
	if atim == experimentalsys.UTIME_OMIT && mtim == experimentalsys.UTIME_OMIT {
		return 0
	}
	// A zero time.Time leaves that time unchanged.
	toTime := func(t int64) time.Time {
		if t == experimentalsys.UTIME_OMIT {
			return time.Time{}
		}
		return time.Unix(0, t)
	}
	return experimentalsys.UnwrapOSError(g.root.Chtimes(rel, toTime(atim), toTime(mtim)))
}

// syntheticIno is the inode of an in-memory file or synthetic directory. It
// depends on the path only, so it is the same in every session.
func syntheticIno(p string) sys.Inode {
	h := fnv.New64a()
	_, _ = io.WriteString(h, p)
	if ino := h.Sum64(); ino != 0 {
		return ino
	}
	return 1
}

// memStat is the stat of an in-memory file. Its times are zero, so that a
// session's view does not depend on when the process started.
func memStat(p string, data []byte) sys.Stat_t {
	return sys.Stat_t{Dev: syntheticDev, Ino: syntheticIno(p), Mode: 0o444, Nlink: 1, Size: int64(len(data))}
}

func dirStat(p string) sys.Stat_t {
	return sys.Stat_t{Dev: syntheticDev, Ino: syntheticIno(p), Mode: fs.ModeDir | 0o555, Nlink: 2}
}

// rootDev is the st_dev of the session root's entries when the root has a
// clock (SetRootClock). It differs from syntheticDev, so the root still
// looks like a mount point, as it does with the host's numbers.
const rootDev = 0x726f6f74 // "root"

// rootIno is the inode of the root's entry at rel ("." for the root) when
// the root has a clock: a hash of its path in the root, so a recording and
// its replay into another folder (or on another machine) show the same
// numbers. The "root:" prefix keeps them apart from the synthetic ones.
func rootIno(rel string) sys.Inode {
	return syntheticIno("root:" + rel)
}

// hostFile is a file or directory opened in the session root.
type hostFile struct {
	experimentalsys.UnimplementedFile

	g      *GuestFS
	rel    string // path in the root when opened, to reopen it (SetAppend) or set its times
	flag   experimentalsys.Oflag
	file   *os.File
	dev    uint64
	ino    sys.Inode
	isDir  bool
	closed bool

	// A directory's listing, sorted by name, read whole at the first
	// Readdir after the open or a rewind; pos is the next entry to return.
	listing []experimentalsys.Dirent
	pos     int
}

// Dev implements the same method as documented on experimental/sys.File.
func (f *hostFile) Dev() (uint64, experimentalsys.Errno) { return f.dev, 0 }

// Ino implements the same method as documented on experimental/sys.File.
func (f *hostFile) Ino() (sys.Inode, experimentalsys.Errno) { return f.ino, 0 }

// IsDir implements the same method as documented on experimental/sys.File.
func (f *hostFile) IsDir() (bool, experimentalsys.Errno) { return f.isDir, 0 }

// IsAppend implements the same method as documented on experimental/sys.File.
func (f *hostFile) IsAppend() bool { return f.flag&experimentalsys.O_APPEND != 0 }

// SetAppend implements the same method as documented on experimental/sys.File.
// The OS flag cannot change on an open *os.File, so the file is reopened by
// its path in the root and must still be the same file.
func (f *hostFile) SetAppend(enable bool) experimentalsys.Errno {
	switch {
	case f.closed:
		return experimentalsys.EBADF
	case f.isDir:
		return experimentalsys.EISDIR
	case enable == f.IsAppend():
		return 0
	}
	flag := f.flag ^ experimentalsys.O_APPEND
	offset, err := f.file.Seek(0, io.SeekCurrent)
	if err != nil {
		return experimentalsys.UnwrapOSError(err)
	}
	nf, err := f.g.root.OpenFile(f.rel, osFlag(flag), 0)
	if err != nil {
		return experimentalsys.UnwrapOSError(err)
	}
	oldInfo, err1 := f.file.Stat()
	newInfo, err2 := nf.Stat()
	if err := errors.Join(err1, err2); err != nil || !os.SameFile(oldInfo, newInfo) {
		_ = nf.Close()
		if err != nil {
			return experimentalsys.UnwrapOSError(err)
		}
		return experimentalsys.ENOENT // renamed or replaced since it was opened
	}
	if _, err := nf.Seek(offset, io.SeekStart); err != nil {
		_ = nf.Close()
		return experimentalsys.UnwrapOSError(err)
	}
	_ = f.file.Close()
	f.file, f.flag = nf, flag
	return 0
}

// Stat implements the same method as documented on experimental/sys.File.
func (f *hostFile) Stat() (sys.Stat_t, experimentalsys.Errno) {
	if f.closed {
		return sys.Stat_t{}, experimentalsys.EBADF
	}
	info, err := f.file.Stat()
	if err != nil {
		return sys.Stat_t{}, experimentalsys.UnwrapOSError(err)
	}
	return f.g.statOf(f.rel, info), 0
}

// Read implements the same method as documented on experimental/sys.File.
func (f *hostFile) Read(buf []byte) (int, experimentalsys.Errno) {
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.file.Read(buf)
	return n, experimentalsys.UnwrapOSError(err) // io.EOF is 0
}

// Pread implements the same method as documented on experimental/sys.File.
func (f *hostFile) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	if off < 0 {
		return 0, experimentalsys.EINVAL
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.file.ReadAt(buf, off)
	return n, experimentalsys.UnwrapOSError(err)
}

// Seek implements the same method as documented on experimental/sys.File.
func (f *hostFile) Seek(offset seekOffset, whence int) (int64, experimentalsys.Errno) {
	if whence < io.SeekStart || whence > io.SeekEnd {
		return 0, experimentalsys.EINVAL
	}
	n, err := f.file.Seek(offset, whence) // on a directory, Seek(0, SeekStart) rewinds Readdir
	if err == nil && f.isDir && n == 0 {
		f.listing, f.pos = nil, 0 // the next Readdir lists the directory again
	}
	return n, experimentalsys.UnwrapOSError(err)
}

// direntChunk is how many entries hostFile.Readdir lstats at a time while
// it reads a directory's listing.
const direntChunk = 1024

// Readdir implements the same method as documented on experimental/sys.File.
func (f *hostFile) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if f.closed || !f.isDir {
		return nil, experimentalsys.EBADF
	}
	// The host lists a directory in its own order (hash order on ext4, and
	// another on another filesystem or after other changes), which would
	// make a guest's os.listdir differ between a recording and its replay:
	// so the listing is read whole and given sorted by name, like a
	// synthetic directory's. The root's file cap (DiskQuota) bounds it.
	if f.listing == nil {
		listing := []experimentalsys.Dirent{}
		for {
			infos, err := f.file.Readdir(direntChunk) // lstats entries with fstatat on the directory's fd
			for _, info := range infos {
				ino := sys.NewStat_t(info).Ino
				if f.g.stamp != nil {
					ino = rootIno(path.Join(f.rel, info.Name()))
				}
				listing = append(listing, experimentalsys.Dirent{Name: info.Name(), Ino: ino, Type: info.Mode().Type()})
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, experimentalsys.UnwrapOSError(err)
			}
		}
		slices.SortFunc(listing, func(a, b experimentalsys.Dirent) int { return strings.Compare(a.Name, b.Name) })
		f.listing, f.pos = listing, 0
	}
	rest := f.listing[f.pos:]
	if n > 0 && n < len(rest) {
		rest = rest[:n]
	}
	f.pos += len(rest)
	return slices.Clone(rest), 0
}

// Write implements the same method as documented on experimental/sys.File.
func (f *hostFile) Write(buf []byte) (int, experimentalsys.Errno) {
	if len(buf) == 0 {
		return 0, 0
	}
	end := func(size int64) (int64, error) {
		if f.IsAppend() {
			return addSat(size, int64(len(buf))), nil
		}
		pos, err := f.file.Seek(0, io.SeekCurrent)
		return addSat(pos, int64(len(buf))), err
	}
	return f.grow(end, func() (int, error) { return f.file.Write(buf) })
}

// grow makes a change of the file that may grow it (write, truncate),
// within the disk quota: end says how large the file may be after it,
// given its size before, and do makes it. A change the quota cannot hold is
// refused whole (errnoQuota), not shortened.
func (f *hostFile) grow(end func(size int64) (int64, error), do func() (int, error)) (int, experimentalsys.Errno) {
	defer f.g.stamped(0, f.rel, false)
	q := f.g.quota
	if q == nil || f.isDir {
		n, err := do()
		return n, experimentalsys.UnwrapOSError(err)
	}
	q.Lock()
	defer q.Unlock()
	before, err := f.file.Stat()
	if err != nil {
		return 0, experimentalsys.UnwrapOSError(err)
	}
	e, err := end(before.Size())
	if err != nil {
		return 0, experimentalsys.UnwrapOSError(err)
	}
	if q.CheckGrowLocked(before, e) != nil {
		return 0, errnoQuota
	}
	n, err := do()
	if after, serr := f.file.Stat(); serr == nil {
		q.ChangedLocked(before, after)
	}
	return n, experimentalsys.UnwrapOSError(err)
}

// Pwrite implements the same method as documented on experimental/sys.File.
// Like Linux, a file in append mode appends whatever the offset.
func (f *hostFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if off < 0 {
		return 0, experimentalsys.EINVAL
	}
	if len(buf) == 0 {
		return 0, 0
	}
	if !f.IsAppend() {
		end := func(int64) (int64, error) { return addSat(off, int64(len(buf))), nil }
		return f.grow(end, func() (int, error) { return f.file.WriteAt(buf, off) })
	}
	// os.File refuses WriteAt in append mode; pwrite must not move the offset.
	end := func(size int64) (int64, error) { return addSat(size, int64(len(buf))), nil }
	return f.grow(end, func() (int, error) {
		pos, err := f.file.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, err
		}
		n, err := f.file.Write(buf)
		if _, serr := f.file.Seek(pos, io.SeekStart); err == nil {
			err = serr
		}
		return n, err
	})
}

// Truncate implements the same method as documented on experimental/sys.File.
func (f *hostFile) Truncate(size int64) experimentalsys.Errno {
	switch {
	case f.closed:
		return experimentalsys.EBADF
	case f.isDir:
		return experimentalsys.EISDIR
	case size < 0:
		return experimentalsys.EINVAL
	}
	_, errno := f.grow(func(int64) (int64, error) { return size, nil }, func() (int, error) { return 0, f.file.Truncate(size) })
	return errno
}

// Sync implements the same method as documented on experimental/sys.File.
func (f *hostFile) Sync() experimentalsys.Errno {
	return experimentalsys.UnwrapOSError(f.file.Sync())
}

// Datasync implements the same method as documented on experimental/sys.File.
func (f *hostFile) Datasync() experimentalsys.Errno {
	return f.Sync()
}

// Utimens implements the same method as documented on experimental/sys.File.
// The times are set through the path the file was opened by.
func (f *hostFile) Utimens(atim, mtim int64) experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	return f.g.chtimes(f.rel, atim, mtim)
}

// Close implements the same method as documented on experimental/sys.File.
func (f *hostFile) Close() experimentalsys.Errno {
	if f.closed {
		return 0
	}
	f.closed = true
	defer f.g.fds.release()
	if q := f.g.quota; q != nil && !f.isDir {
		q.Lock()
		defer q.Unlock()
		if info, err := f.file.Stat(); err == nil {
			q.ClosedLocked(info) // releases the bytes of a file removed while open
		}
	}
	return experimentalsys.UnwrapOSError(f.file.Close())
}

// memFile is a read-only in-memory file opened for reading.
type memFile struct {
	experimentalsys.UnimplementedFile

	path       string
	data       []byte
	pos        int64
	appendMode bool
	closed     bool
}

// Dev implements the same method as documented on experimental/sys.File.
func (f *memFile) Dev() (uint64, experimentalsys.Errno) { return syntheticDev, 0 }

// Ino implements the same method as documented on experimental/sys.File.
func (f *memFile) Ino() (sys.Inode, experimentalsys.Errno) { return syntheticIno(f.path), 0 }

// IsAppend implements the same method as documented on experimental/sys.File.
func (f *memFile) IsAppend() bool { return f.appendMode }

// SetAppend implements the same method as documented on experimental/sys.File.
// The flag is kept, as fcntl would; writes fail regardless.
func (f *memFile) SetAppend(enable bool) experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	f.appendMode = enable
	return 0
}

// Stat implements the same method as documented on experimental/sys.File.
func (f *memFile) Stat() (sys.Stat_t, experimentalsys.Errno) {
	if f.closed {
		return sys.Stat_t{}, experimentalsys.EBADF
	}
	return memStat(f.path, f.data), 0
}

// Read implements the same method as documented on experimental/sys.File.
func (f *memFile) Read(buf []byte) (int, experimentalsys.Errno) {
	n, errno := f.Pread(buf, f.pos)
	f.pos += int64(n)
	return n, errno
}

// Pread implements the same method as documented on experimental/sys.File.
func (f *memFile) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	switch {
	case f.closed:
		return 0, experimentalsys.EBADF
	case off < 0:
		return 0, experimentalsys.EINVAL
	case off >= int64(len(f.data)):
		return 0, 0
	}
	return copy(buf, f.data[off:]), 0
}

// Seek implements the same method as documented on experimental/sys.File.
func (f *memFile) Seek(offset seekOffset, whence int) (int64, experimentalsys.Errno) {
	if f.closed {
		return 0, experimentalsys.EBADF
	}
	var pos int64
	switch whence {
	case io.SeekStart:
		pos = offset
	case io.SeekCurrent:
		pos = f.pos + offset
	case io.SeekEnd:
		pos = int64(len(f.data)) + offset
	default:
		return 0, experimentalsys.EINVAL
	}
	if pos < 0 {
		return 0, experimentalsys.EINVAL
	}
	f.pos = pos
	return pos, 0
}

// Readdir implements the same method as documented on experimental/sys.File.
func (f *memFile) Readdir(int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	return nil, experimentalsys.EBADF
}

// Write implements the same method as documented on experimental/sys.File.
func (f *memFile) Write([]byte) (int, experimentalsys.Errno) { return 0, experimentalsys.EBADF }

// Pwrite implements the same method as documented on experimental/sys.File.
func (f *memFile) Pwrite([]byte, int64) (int, experimentalsys.Errno) {
	return 0, experimentalsys.EBADF
}

// Truncate implements the same method as documented on experimental/sys.File.
func (f *memFile) Truncate(int64) experimentalsys.Errno { return experimentalsys.EBADF }

// Utimens implements the same method as documented on experimental/sys.File.
func (f *memFile) Utimens(int64, int64) experimentalsys.Errno { return experimentalsys.EROFS }

// Close implements the same method as documented on experimental/sys.File.
func (f *memFile) Close() experimentalsys.Errno {
	f.closed = true
	return 0
}

// synthDir is an open synthetic directory. Its entries are fixed when opened.
type synthDir struct {
	experimentalsys.DirFile

	path    string
	entries []experimentalsys.Dirent
	pos     int
	closed  bool
}

func (g *GuestFS) openDir(p string) *synthDir {
	children := g.dirs[p]
	entries := make([]experimentalsys.Dirent, 0, len(children))
	for _, name := range children {
		child := path.Join(p, name)
		e := experimentalsys.Dirent{Name: name, Ino: syntheticIno(child)}
		if _, isFile := g.files[child]; !isFile {
			e.Type = fs.ModeDir
		}
		if child == g.rootPath {
			e.Ino = 0 // unknown: readers that need it stat the entry
			if info, err := g.root.Stat("."); err == nil {
				e.Ino = g.statOf(".", info).Ino
			}
		}
		entries = append(entries, e)
	}
	return &synthDir{path: p, entries: entries}
}

// Dev implements the same method as documented on experimental/sys.File.
func (d *synthDir) Dev() (uint64, experimentalsys.Errno) { return syntheticDev, 0 }

// Ino implements the same method as documented on experimental/sys.File.
func (d *synthDir) Ino() (sys.Inode, experimentalsys.Errno) { return syntheticIno(d.path), 0 }

// Stat implements the same method as documented on experimental/sys.File.
func (d *synthDir) Stat() (sys.Stat_t, experimentalsys.Errno) {
	if d.closed {
		return sys.Stat_t{}, experimentalsys.EBADF
	}
	return dirStat(d.path), 0
}

// Seek implements the same method as documented on experimental/sys.File.
// Only a rewind, Seek(0, io.SeekStart), is supported.
func (d *synthDir) Seek(offset seekOffset, whence int) (int64, experimentalsys.Errno) {
	switch {
	case d.closed:
		return 0, experimentalsys.EBADF
	case offset != 0 || whence != io.SeekStart:
		return 0, experimentalsys.EISDIR
	}
	d.pos = 0
	return 0, 0
}

// Readdir implements the same method as documented on experimental/sys.File.
func (d *synthDir) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if d.closed {
		return nil, experimentalsys.EBADF
	}
	rest := d.entries[d.pos:]
	if n > 0 && n < len(rest) {
		rest = rest[:n]
	}
	d.pos += len(rest)
	return slices.Clone(rest), 0
}

// Sync implements the same method as documented on experimental/sys.File.
func (d *synthDir) Sync() experimentalsys.Errno { return 0 }

// Datasync implements the same method as documented on experimental/sys.File.
func (d *synthDir) Datasync() experimentalsys.Errno { return 0 }

// Utimens implements the same method as documented on experimental/sys.File.
func (d *synthDir) Utimens(int64, int64) experimentalsys.Errno { return experimentalsys.EROFS }

// Close implements the same method as documented on experimental/sys.File.
func (d *synthDir) Close() experimentalsys.Errno {
	d.closed = true
	return 0
}

// rootClocks are the clocks of SetRootClock, by session root.
var rootClocks sync.Map // clean root path -> *rootClock

type rootClock struct{ now func() time.Time }

// SetRootClock makes the GuestFS of root opened from now on keep the
// session's clock on the guest's files: what the guest changes (a file it
// writes, creates or truncates, a folder it adds to or removes from) is
// stamped with clock's time instead of the host's, and an entry's access
// and change times read as its modification time, and its device and
// inode numbers are derived from its path in the root (statOf) instead of
// being the host's. A deterministic,
// recorded or replayed session sets it, so that the file times its guest
// reads are the root's recorded ones and its own clock's. It returns the
// function that undoes it.
func SetRootClock(root string, clock func() time.Time) (undo func()) {
	root = filepath.Clean(root)
	c := &rootClock{now: clock}
	rootClocks.Store(root, c)
	return func() { rootClocks.CompareAndDelete(root, c) }
}

// stamped stamps rel (when entry, and it is not a symbolic link) and its
// folder with the root's clock, if it has one, after a change that did not
// fail (errno 0).
func (g *GuestFS) stamped(errno experimentalsys.Errno, rel string, entry bool) {
	if g.stamp == nil || errno != 0 {
		return
	}
	t := g.stamp()
	if entry {
		if info, err := g.root.Lstat(rel); err == nil && info.Mode()&fs.ModeSymlink == 0 {
			_ = g.root.Chtimes(rel, t, t)
		}
		rel = path.Dir(rel)
	}
	if rel == "" {
		rel = "."
	}
	_ = g.root.Chtimes(rel, t, t)
}

// statOf is the guest's stat of the host entry at rel in the root: with
// the root's clock, its access and change times are its modification time,
// which the host does not move on its own, and its device and inode
// numbers are rootDev and rootIno(rel) rather than the host's, which
// differ between machines and folders. (So in such a session two hard
// links to one file show different inode numbers: os.path.samefile tells
// them apart. An open file keeps the number of the path it was opened by.)
func (g *GuestFS) statOf(rel string, info fs.FileInfo) sys.Stat_t {
	st := sys.NewStat_t(info)
	if g.stamp != nil {
		st.Atim, st.Ctim = st.Mtim, st.Mtim
		st.Dev, st.Ino = rootDev, rootIno(rel)
	}
	return st
}
