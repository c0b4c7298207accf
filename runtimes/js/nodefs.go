package js

import (
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
	"github.com/wasmeval/wasmeval/internal/goja"

	"github.com/wasmeval/wasmeval/wasm"
)

// The fs module (prelude/js/node.js) works on these host functions, which
// go through the Python guest's own view of the session root
// (wasm.GuestFS): one os.Root, the session's disk quota shared with the
// file helpers (a write past it fails with ENOSPC), no symbolic link or
// `..` that leads out of the root, no named pipes or devices, and links
// moved only as the guest may move them. Paths are relative to the root
// (process.cwd()) or absolute inside it; a path outside it fails with
// EACCES, as one through a symbolic link that leads out does, with the
// helpers' words. Errors are Node's: an Error with code, errno, syscall and
// path.

type sysStat = sys.Stat_t

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// maxOpenFiles caps the descriptors a session's guest holds open.
const maxOpenFiles = 256

type openFile struct {
	file experimentalsys.File
	path string
}

// errnoInfo is Node's code, number and text for an errno.
var errnoInfo = map[experimentalsys.Errno]struct {
	code string
	num  int
	desc string
}{
	experimentalsys.EACCES:       {"EACCES", -13, "permission denied"},
	experimentalsys.EAGAIN:       {"EAGAIN", -11, "resource temporarily unavailable"},
	experimentalsys.EBADF:        {"EBADF", -9, "bad file descriptor"},
	experimentalsys.EEXIST:       {"EEXIST", -17, "file already exists"},
	experimentalsys.EINVAL:       {"EINVAL", -22, "invalid argument"},
	experimentalsys.EIO:          {"EIO", -5, "i/o error"},
	experimentalsys.EISDIR:       {"EISDIR", -21, "illegal operation on a directory"},
	experimentalsys.ELOOP:        {"ELOOP", -40, "too many symbolic links encountered"},
	experimentalsys.ENAMETOOLONG: {"ENAMETOOLONG", -36, "name too long"},
	experimentalsys.ENOENT:       {"ENOENT", -2, "no such file or directory"},
	experimentalsys.ENOSYS:       {"ENOSYS", -38, "function not implemented"},
	experimentalsys.ENOTDIR:      {"ENOTDIR", -20, "not a directory"},
	experimentalsys.ENOTEMPTY:    {"ENOTEMPTY", -39, "directory not empty"},
	experimentalsys.ENOTSOCK:     {"ENOSPC", -28, "no space left on device (the session's disk quota is used up; remove or shorten files first)"},
	experimentalsys.ENOTSUP:      {"ENOTSUP", -95, "operation not supported"},
	experimentalsys.EPERM:        {"EPERM", -1, "operation not permitted"},
	experimentalsys.EROFS:        {"EROFS", -30, "read-only file system (only the session root is writable)"},
}

// setFSHost adds the fs module's host functions.
func (in *instance) setFSHost(set func(string, any)) {
	set("fsReadFile", in.fsReadFile)
	set("fsWriteFile", in.fsWriteFile)
	set("fsStat", in.fsStat)
	set("fsReaddir", in.fsReaddir)
	set("fsMkdir", in.fsMkdir)
	set("fsUnlink", func(p string) { in.fsDo("unlink", p, in.guestFS().Unlink) })
	set("fsRmdir", func(p string) { in.fsDo("rmdir", p, in.guestFS().Rmdir) })
	set("fsRm", in.fsRm)
	set("fsRename", in.fsRename)
	set("fsCopyFile", in.fsCopyFile)
	set("fsReadlink", in.fsReadlink)
	set("fsSymlink", in.fsSymlink)
	set("fsLink", in.fsLink)
	set("fsChmod", func(p string, mode int64) {
		in.fsDo("chmod", p, func(g string) experimentalsys.Errno { return in.guestFS().Chmod(g, fs.FileMode(mode)&fs.ModePerm) })
	})
	set("fsUtimes", func(p string, atimeMs, mtimeMs float64) {
		in.fsDo("utime", p, func(g string) experimentalsys.Errno {
			return in.guestFS().Utimens(g, int64(atimeMs*1e6), int64(mtimeMs*1e6))
		})
	})
	set("fsOpen", in.fsOpen)
	set("fsClose", in.fsClose)
	set("fsRead", in.fsRead)
	set("fsWrite", in.fsWrite)
	set("fsFstat", in.fsFstat)
	set("fsTruncate", in.fsTruncate)
}

// guestFS returns the session root as the Python guest sees it.
func (in *instance) guestFS() *wasm.GuestFS {
	if in.node.gfs != nil {
		return in.node.gfs
	}
	if in.root == nil {
		err := in.vm.NewTypeError("fs: this session has no root directory, so it has no files")
		setOwn(err, "code", in.vm.ToValue("ENOENT"))
		panic(err)
	}
	var q wasm.DiskQuota
	if in.opts.DiskQuota != nil {
		q = in.opts.DiskQuota
	}
	g, err := wasm.NewGuestFS(in.rootPath, nil, q)
	if err != nil {
		panic(in.vm.NewGoError(err))
	}
	if in.owner != nil {
		g.OnCreate(in.owner.GuestCreated)
	}
	in.node.gfs = g
	return g
}

// fsError throws Node's error for errno from syscall on p (as the guest
// gave it); g is the guest path, to tell a link out of the root.
func (in *instance) fsError(errno experimentalsys.Errno, syscall, p, g string, dest ...string) {
	info, ok := errnoInfo[errno]
	if !ok {
		info = errnoInfo[experimentalsys.EIO]
		info.desc = errno.Error()
	}
	why := ""
	if g != "" && (errno == experimentalsys.ENOENT || errno == experimentalsys.EROFS || errno == experimentalsys.EACCES) {
		if rel, inRoot := in.relToRoot(g); inRoot {
			if _, err := in.root.Stat(rel); err != nil && strings.Contains(err.Error(), "escapes from parent") {
				info = errnoInfo[experimentalsys.EACCES]
				why = ": the path leads outside the session root " + in.rootPath + " (through a symbolic link)"
			}
		}
	}
	msg := info.code + ": " + info.desc + ", " + syscall + " '" + p + "'"
	if len(dest) > 0 {
		msg += " -> '" + dest[0] + "'"
	}
	msg += why
	in.throwNodeError(msg, info.code, info.num, syscall, p, dest...)
}

func (in *instance) throwNodeError(msg, code string, num int, syscall, p string, dest ...string) {
	obj := in.vm.NewError("Error", msg)
	setOwn(obj, "errno", in.vm.ToValue(num))
	setOwn(obj, "code", in.vm.ToValue(code))
	setOwn(obj, "syscall", in.vm.ToValue(syscall))
	setOwn(obj, "path", in.vm.ToValue(p))
	if len(dest) > 0 {
		setOwn(obj, "dest", in.vm.ToValue(dest[0]))
	}
	panic(obj)
}

// fsPath maps the guest's path to a clean absolute one inside the root, or
// throws EACCES.
func (in *instance) fsPath(syscall, p string) string {
	if strings.ContainsRune(p, 0) {
		err := in.vm.NewTypeError("The argument 'path' must be a string, Uint8Array, or URL without null bytes. Received " + quoteJSON(p))
		setOwn(err, "code", in.vm.ToValue("ERR_INVALID_ARG_VALUE"))
		panic(err)
	}
	if in.root == nil {
		in.guestFS() // throws
	}
	g := p
	if !path.IsAbs(g) {
		g = path.Join(in.rootPath, g)
	}
	g = path.Clean(g)
	if _, ok := in.relToRoot(g); !ok {
		how := "is outside"
		if !path.IsAbs(p) {
			how = "leads outside"
		}
		in.throwNodeError("EACCES: permission denied, "+syscall+" '"+p+"': the path "+how+" the session root "+in.rootPath+
			"; give a path relative to it, or an absolute path inside it", "EACCES", -13, syscall, p)
	}
	return g
}

// checkStopped throws when the cell's context is done, so that a long file
// operation (a big copy, a deep rm) ends with its cell: the VM's interrupt
// only takes effect back in JavaScript.
func (in *instance) checkStopped(syscall, p string) {
	if in.calls != nil && in.calls.ctx.Err() != nil {
		in.throwNodeError("ECANCELED: operation canceled, "+syscall+" '"+p+"': the cell was stopped", "ECANCELED", -125, syscall, p)
	}
}

// fsDo runs op on p's guest path.
func (in *instance) fsDo(syscall, p string, op func(string) experimentalsys.Errno) {
	g := in.fsPath(syscall, p)
	if errno := op(g); errno != 0 {
		in.fsError(errno, syscall, p, g)
	}
}

// readAll reads f to its end, within the memory limit.
func (in *instance) readAll(f experimentalsys.File, syscall, p, g string) []byte {
	st, errno := f.Stat()
	if errno != 0 {
		in.fsError(errno, syscall, p, g)
	}
	if st.Mode.IsDir() {
		in.fsError(experimentalsys.EISDIR, "read", p, "")
	}
	if st.Size > in.memLimit/2 {
		err := in.rangeError("File size (" + formatSize(st.Size) + ") is greater than the session's memory limit allows (" + formatSize(in.memLimit) + "); read it in parts with fs.openSync and fs.readSync")
		setOwn(err, "code", in.vm.ToValue("ERR_FS_FILE_TOO_LARGE"))
		panic(err)
	}
	in.reserveBytes(st.Size)
	buf := make([]byte, 0, st.Size+1)
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > in.memLimit/2 {
				in.throwRange("the file grew past the session's memory limit while it was read")
			}
			buf = append(buf, 0)[:len(buf)]
		}
		in.checkStopped("read", p)
		n, errno := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errno != 0 {
			in.fsError(errno, "read", p, g)
		}
		if n == 0 {
			return buf
		}
	}
}

func formatSize(n int64) string {
	switch {
	case n >= 1<<20:
		return itoa(n>>20) + " MiB"
	case n >= 1<<10:
		return itoa(n>>10) + " KiB"
	}
	return itoa(n) + " bytes"
}

// fsReadFile returns a file's bytes as an ArrayBuffer.
func (in *instance) fsReadFile(p string) goja.Value {
	g := in.fsPath("open", p)
	f, errno := in.guestFS().OpenFile(g, experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		in.fsError(errno, "open", p, g)
	}
	defer f.Close()
	return in.vm.ToValue(in.vm.NewArrayBuffer(in.readAll(f, "read", p, g)))
}

// openFlags maps Node's flags ('r', 'w+', 'ax', ...) to open flags.
func (in *instance) openFlags(flags string) experimentalsys.Oflag {
	var fl experimentalsys.Oflag
	base := strings.NewReplacer("s", "", "x", "").Replace(flags)
	switch base {
	case "r":
		fl = experimentalsys.O_RDONLY
	case "r+":
		fl = experimentalsys.O_RDWR
	case "w":
		fl = experimentalsys.O_WRONLY | experimentalsys.O_CREAT | experimentalsys.O_TRUNC
	case "w+":
		fl = experimentalsys.O_RDWR | experimentalsys.O_CREAT | experimentalsys.O_TRUNC
	case "a":
		fl = experimentalsys.O_WRONLY | experimentalsys.O_CREAT | experimentalsys.O_APPEND
	case "a+":
		fl = experimentalsys.O_RDWR | experimentalsys.O_CREAT | experimentalsys.O_APPEND
	default:
		err := in.vm.NewTypeError("The value \"" + flags + "\" is invalid for option \"flags\" (give r, r+, w, w+, wx, a, a+ or ax)")
		setOwn(err, "code", in.vm.ToValue("ERR_INVALID_ARG_VALUE"))
		panic(err)
	}
	if strings.Contains(flags, "x") {
		fl |= experimentalsys.O_EXCL
	}
	return fl
}

// fsWriteFile writes data (a string, as UTF-8, or bytes) with flags ('w'
// replaces, 'a' appends).
func (in *instance) fsWriteFile(p string, data goja.Value, flags string, mode int64) {
	b, ok := in.bytesOf(data)
	if !ok {
		b = []byte(data.String())
	}
	g := in.fsPath("open", p)
	if mode == 0 {
		mode = 0o666
	}
	f, errno := in.guestFS().OpenFile(g, in.openFlags(flags), fs.FileMode(mode)&fs.ModePerm)
	if errno != 0 {
		in.fsError(errno, "open", p, g)
	}
	defer f.Close()
	for len(b) > 0 {
		n, errno := f.Write(b)
		if errno != 0 {
			in.fsError(errno, "write", p, g)
		}
		b = b[n:]
	}
}

// unixMode is st_mode: the file type bits and the permissions.
func unixMode(m fs.FileMode) int64 {
	t := int64(0o100000)
	switch {
	case m&fs.ModeDir != 0:
		t = 0o040000
	case m&fs.ModeSymlink != 0:
		t = 0o120000
	case m&fs.ModeNamedPipe != 0:
		t = 0o010000
	case m&fs.ModeSocket != 0:
		t = 0o140000
	case m&fs.ModeCharDevice != 0:
		t = 0o020000
	case m&fs.ModeDevice != 0:
		t = 0o060000
	}
	return t | int64(m.Perm())
}

// fsStat returns [dev, ino, mode, nlink, size, atimeMs, mtimeMs, ctimeMs],
// or null for a missing file when throwIfNoEntry is false.
func (in *instance) fsStat(p string, follow, throwIfNoEntry bool) goja.Value {
	syscall := "stat"
	if !follow {
		syscall = "lstat"
	}
	g := in.fsPath(syscall, p)
	var st sysStat
	var errno experimentalsys.Errno
	if follow {
		st, errno = in.guestFS().Stat(g)
	} else {
		st, errno = in.guestFS().Lstat(g)
	}
	if errno != 0 {
		if !throwIfNoEntry && (errno == experimentalsys.ENOENT || errno == experimentalsys.ENOTDIR) {
			return goja.Null()
		}
		in.fsError(errno, syscall, p, g)
	}
	return in.statOf(st)
}

func (in *instance) statOf(st sysStat) goja.Value {
	return in.vm.NewArray(float64(st.Dev), float64(st.Ino), unixMode(st.Mode), float64(st.Nlink), st.Size,
		float64(st.Atim)/1e6, float64(st.Mtim)/1e6, float64(st.Ctim)/1e6)
}

// fsReaddir returns [name, type, ...] pairs, type one of f d l p s c b ?.
func (in *instance) fsReaddir(p string) goja.Value {
	g := in.fsPath("scandir", p)
	ents := in.readdir(g, p)
	out := make([]any, 0, 2*len(ents))
	for _, e := range ents {
		t := "f"
		switch m := e.Type; {
		case m&fs.ModeDir != 0:
			t = "d"
		case m&fs.ModeSymlink != 0:
			t = "l"
		case m&fs.ModeNamedPipe != 0:
			t = "p"
		case m&fs.ModeSocket != 0:
			t = "s"
		case m&fs.ModeCharDevice != 0:
			t = "c"
		case m&fs.ModeDevice != 0:
			t = "b"
		case m&fs.ModeIrregular != 0:
			t = "?"
		}
		out = append(out, e.Name, t)
	}
	return in.vm.NewArray(out...)
}

// readdir lists the directory g, sorted by name.
func (in *instance) readdir(g, p string) []experimentalsys.Dirent {
	f, errno := in.guestFS().OpenFile(g, experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
	if errno != 0 {
		in.fsError(errno, "scandir", p, g)
	}
	defer f.Close()
	var all []experimentalsys.Dirent
	for {
		ents, errno := f.Readdir(1024)
		if errno != 0 {
			in.fsError(errno, "scandir", p, g)
		}
		for _, e := range ents {
			if e.Name != "." && e.Name != ".." {
				all = append(all, e)
			}
		}
		if len(ents) < 1024 {
			break
		}
		if len(all) > 1<<20 {
			in.throwRange("scandir '" + p + "': more than 1048576 entries")
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

// fsMkdir makes a directory; recursive makes its parents and returns the
// first directory it made (undefined when none).
func (in *instance) fsMkdir(p string, recursive bool, mode int64) goja.Value {
	g := in.fsPath("mkdir", p)
	gfs := in.guestFS()
	perm := fs.FileMode(mode) & fs.ModePerm
	if perm == 0 {
		perm = 0o777
	}
	if !recursive {
		if errno := gfs.Mkdir(g, perm); errno != 0 {
			in.fsError(errno, "mkdir", p, g)
		}
		return goja.Undefined()
	}
	rel, _ := in.relToRoot(g)
	if rel == "." {
		return goja.Undefined()
	}
	first := goja.Undefined()
	cur := in.rootPath
	for _, part := range strings.Split(rel, "/") {
		cur = path.Join(cur, part)
		errno := gfs.Mkdir(cur, perm)
		switch {
		case errno == 0:
			if goja.IsUndefined(first) {
				first = in.vm.ToValue(cur)
			}
		case errno == experimentalsys.EEXIST:
			st, serr := gfs.Stat(cur)
			if serr != 0 || !st.Mode.IsDir() {
				in.fsError(experimentalsys.ENOTDIR, "mkdir", p, g)
			}
		default:
			in.fsError(errno, "mkdir", p, g)
		}
	}
	return first
}

// fsRm removes a file, or a directory with recursive; force ignores a
// missing path.
func (in *instance) fsRm(p string, recursive, force bool) {
	g := in.fsPath("rm", p)
	gfs := in.guestFS()
	st, errno := gfs.Lstat(g)
	if errno != 0 {
		if force && errno == experimentalsys.ENOENT {
			return
		}
		in.fsError(errno, "lstat", p, g)
	}
	if st.Mode.IsDir() {
		if !recursive {
			in.throwNodeError("Path is a directory: rm returned EISDIR (is a directory) "+p+" (give { recursive: true } to remove it and what it holds)",
				"ERR_FS_EISDIR", -21, "rm", p)
		}
		if rel, _ := in.relToRoot(g); rel == "." {
			in.throwNodeError("EPERM: operation not permitted, rm '"+p+"': it is the session root", "EPERM", -1, "rm", p)
		}
		in.removeAll(g, p, 0)
		return
	}
	if errno := gfs.Unlink(g); errno != 0 {
		in.fsError(errno, "unlink", p, g)
	}
}

func (in *instance) removeAll(g, p string, depth int) {
	if depth > 256 {
		in.fsError(experimentalsys.ENAMETOOLONG, "rm", p, g)
	}
	gfs := in.guestFS()
	for _, e := range in.readdir(g, p) {
		in.checkStopped("rm", p)
		child := path.Join(g, e.Name)
		if e.Type&fs.ModeDir != 0 {
			in.removeAll(child, p, depth+1)
			continue
		}
		if errno := gfs.Unlink(child); errno != 0 && errno != experimentalsys.ENOENT {
			in.fsError(errno, "unlink", child, child)
		}
	}
	if errno := gfs.Rmdir(g); errno != 0 && errno != experimentalsys.ENOENT {
		in.fsError(errno, "rmdir", p, g)
	}
}

func (in *instance) fsRename(from, to string) {
	gf := in.fsPath("rename", from)
	gt := in.fsPath("rename", to)
	if errno := in.guestFS().Rename(gf, gt); errno != 0 {
		in.fsError(errno, "rename", from, gf, to)
	}
}

// fsCopyFile copies src's content to dst; excl fails when dst exists.
func (in *instance) fsCopyFile(src, dst string, excl bool) {
	gs := in.fsPath("copyfile", src)
	gd := in.fsPath("copyfile", dst)
	gfs := in.guestFS()
	f, errno := gfs.OpenFile(gs, experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		in.fsError(errno, "copyfile", src, gs, dst)
	}
	defer f.Close()
	st, errno := f.Stat()
	if errno == 0 && st.Mode.IsDir() {
		in.fsError(experimentalsys.EISDIR, "copyfile", src, "", dst)
	}
	fl := experimentalsys.O_WRONLY | experimentalsys.O_CREAT | experimentalsys.O_TRUNC
	if excl {
		fl |= experimentalsys.O_EXCL
	}
	out, errno := gfs.OpenFile(gd, fl, st.Mode.Perm()|0o200)
	if errno != 0 {
		in.fsError(errno, "copyfile", src, gd, dst)
	}
	defer out.Close()
	buf := make([]byte, 64<<10)
	for {
		in.checkStopped("copyfile", src)
		n, errno := f.Read(buf)
		if errno != 0 {
			in.fsError(errno, "copyfile", src, gs, dst)
		}
		if n == 0 {
			return
		}
		for b := buf[:n]; len(b) > 0; {
			m, errno := out.Write(b)
			if errno != 0 {
				in.fsError(errno, "copyfile", src, gd, dst)
			}
			b = b[m:]
		}
	}
}

func (in *instance) fsReadlink(p string) string {
	g := in.fsPath("readlink", p)
	t, errno := in.guestFS().Readlink(g)
	if errno != 0 {
		in.fsError(errno, "readlink", p, g)
	}
	return t
}

func (in *instance) fsSymlink(target, p string) {
	g := in.fsPath("symlink", p)
	if errno := in.guestFS().Symlink(target, g); errno != 0 {
		in.fsError(errno, "symlink", target, g, p)
	}
}

// fsLink makes a hard link p to the file existing.
func (in *instance) fsLink(existing, p string) {
	ge := in.fsPath("link", existing)
	g := in.fsPath("link", p)
	if errno := in.guestFS().Link(ge, g); errno != 0 {
		in.fsError(errno, "link", existing, ge, p)
	}
}

// fsOpen opens a file and returns its descriptor.
func (in *instance) fsOpen(p, flags string, mode int64) int {
	if len(in.node.fds) >= maxOpenFiles {
		in.throwNodeError("EMFILE: too many open files, open '"+p+"' (a session holds at most 256; close some with fs.closeSync)", "EMFILE", -24, "open", p)
	}
	g := in.fsPath("open", p)
	if mode == 0 {
		mode = 0o666
	}
	f, errno := in.guestFS().OpenFile(g, in.openFlags(flags), fs.FileMode(mode)&fs.ModePerm)
	if errno != 0 {
		in.fsError(errno, "open", p, g)
	}
	if in.node.fds == nil {
		in.node.fds = map[int]*openFile{}
	}
	fd := in.node.nextFD
	in.node.nextFD++
	in.node.fds[fd] = &openFile{file: f, path: p}
	return fd
}

func (in *instance) fileOf(fd int, syscall string) *openFile {
	f, ok := in.node.fds[fd]
	if !ok {
		in.throwNodeError("EBADF: bad file descriptor, "+syscall, "EBADF", -9, syscall, "")
	}
	return f
}

func (in *instance) fsClose(fd int) {
	f := in.fileOf(fd, "close")
	delete(in.node.fds, fd)
	if errno := f.file.Close(); errno != 0 {
		in.fsError(errno, "close", f.path, "")
	}
}

// fsRead reads into buf[off:off+n] at pos (at the file's offset when pos
// is negative) and returns the count.
func (in *instance) fsRead(fd int, buf goja.Value, off, n, pos int64) int {
	f := in.fileOf(fd, "read")
	b := in.span(buf, off, n)
	var got int
	var errno experimentalsys.Errno
	if pos >= 0 {
		got, errno = f.file.Pread(b, pos)
	} else {
		got, errno = f.file.Read(b)
	}
	if errno != 0 {
		in.fsError(errno, "read", f.path, "")
	}
	return got
}

// fsWrite writes buf[off:off+n] (or a string) at pos, as fsRead reads.
func (in *instance) fsWrite(fd int, buf goja.Value, off, n, pos int64) int {
	f := in.fileOf(fd, "write")
	var b []byte
	if s, ok := buf.Export().(string); ok {
		b = []byte(s)
	} else {
		b = in.span(buf, off, n)
	}
	var put int
	var errno experimentalsys.Errno
	if pos >= 0 {
		put, errno = f.file.Pwrite(b, pos)
	} else {
		put, errno = f.file.Write(b)
	}
	if errno != 0 {
		in.fsError(errno, "write", f.path, "")
	}
	return put
}

// span returns buf[off:off+n], checked.
func (in *instance) span(buf goja.Value, off, n int64) []byte {
	b, ok := in.bytesOf(buf)
	if !ok {
		err := in.vm.NewTypeError("The \"buffer\" argument must be an instance of Buffer, TypedArray, or DataView")
		setOwn(err, "code", in.vm.ToValue("ERR_INVALID_ARG_TYPE"))
		panic(err)
	}
	if off < 0 || off > int64(len(b)) {
		in.throwRange("The value of \"offset\" is out of range. It must be >= 0 && <= " + itoa(int64(len(b))) + ". Received " + itoa(off))
	}
	if n < 0 || off+n > int64(len(b)) {
		in.throwRange("The value of \"length\" is out of range. It must be >= 0 && <= " + itoa(int64(len(b))-off) + ". Received " + itoa(n))
	}
	return b[off : off+n]
}

func (in *instance) fsFstat(fd int) goja.Value {
	f := in.fileOf(fd, "fstat")
	st, errno := f.file.Stat()
	if errno != 0 {
		in.fsError(errno, "fstat", f.path, "")
	}
	return in.statOf(st)
}

// fsTruncate truncates a file (by path) to size.
func (in *instance) fsTruncate(p string, size int64) {
	g := in.fsPath("open", p)
	f, errno := in.guestFS().OpenFile(g, experimentalsys.O_WRONLY, 0)
	if errno != 0 {
		in.fsError(errno, "open", p, g)
	}
	defer f.Close()
	if errno := f.Truncate(size); errno != 0 {
		in.fsError(errno, "ftruncate", p, g)
	}
}
