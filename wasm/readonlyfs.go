package wasm

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// ReadOnlyFS is a host directory shown to the guest read-only, mounted at a
// guest path of its own (wazero's sysfs.FSConfig.WithSysFSMount(fs, path))
// next to a GuestFS at "/": the Python runtime's package layer.
//
// Every access goes through an os.Root opened on the directory, so nothing
// outside it can be reached: ".." stops at its top, and a symlink in it is
// followed only while it stays inside (one that leads out, absolute or
// relative, fails with EACCES, as does Readlink of it, so the guest never
// learns a host path). FIFOs, sockets and devices are not opened (EACCES):
// opening one could block the host thread. Anything that would change the
// directory (create, write, truncate, remove, rename, link, chmod, utimes)
// fails with EROFS; a file opened for writing, with EROFS at the open.
//
// ReadOnlyFS is safe for concurrent use, and one may serve many module
// instances; files it opens are not.
type ReadOnlyFS struct {
	experimentalsys.UnimplementedFS

	dir  string
	root *os.Root
}

var _ experimentalsys.FS = (*ReadOnlyFS)(nil)

// NewReadOnlyFS opens dir, an existing directory given by absolute path.
// Close it when no instance uses it any more.
func NewReadOnlyFS(dir string) (*ReadOnlyFS, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("wasm: read-only folder %q: not an absolute path", dir)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("wasm: read-only folder %s: %w", dir, unwrapPathError(err))
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("wasm: read-only folder %s: not a directory", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("wasm: read-only folder %s: %w", dir, unwrapPathError(err))
	}
	return &ReadOnlyFS{dir: filepath.Clean(dir), root: root}, nil
}

// Close closes the directory; files already open stay usable.
func (r *ReadOnlyFS) Close() error { return r.root.Close() }

// String implements fmt.Stringer.
func (r *ReadOnlyFS) String() string { return "readonlyfs:" + r.dir }

// roRel turns a path wazero hands the mount (relative to it, "." for its top)
// into one for os.Root: ".." above the top stays at the top, as at "/".
func roRel(name string) string {
	p := path.Clean("/" + name)
	if p == "/" {
		return "."
	}
	return p[1:]
}

// roErrno maps an os.Root error to the guest's errno: a path that would
// leave the directory (through "..", or a symlink leading out) is EACCES.
func roErrno(err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	if pe, ok := errors.AsType[*fs.PathError](err); ok && pe.Err != nil && pe.Err.Error() == "path escapes from parent" {
		return experimentalsys.EACCES
	}
	if errors.Is(err, syscall.EXDEV) { // openat2 RESOLVE_BENEATH's answer
		return experimentalsys.EACCES
	}
	return experimentalsys.UnwrapOSError(err)
}

// OpenFile implements the same method as documented on experimental/sys.FS.
func (r *ReadOnlyFS) OpenFile(name string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if flag&(experimentalsys.O_RDWR|experimentalsys.O_WRONLY|experimentalsys.O_CREAT|
		experimentalsys.O_TRUNC|experimentalsys.O_APPEND|experimentalsys.O_EXCL) != 0 {
		// EEXIST/ENOENT first would leak nothing useful; a read-only
		// layer answers every change the same way.
		return nil, experimentalsys.EROFS
	}
	p := roRel(name)
	info, err := r.root.Lstat(p)
	if err != nil {
		return nil, roErrno(err)
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		if flag&experimentalsys.O_NOFOLLOW != 0 {
			return nil, experimentalsys.ELOOP
		}
		if info, err = r.root.Stat(p); err != nil {
			return nil, roErrno(err)
		}
	}
	switch mode := info.Mode(); {
	case flag&experimentalsys.O_DIRECTORY != 0 && !mode.IsDir():
		return nil, experimentalsys.ENOTDIR
	case !mode.IsDir() && !mode.IsRegular():
		return nil, experimentalsys.EACCES
	}
	// O_NONBLOCK: should the entry have become a FIFO since the Stat, the
	// open does not wait for a writer; the check below refuses it.
	f, err := r.root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, roErrno(err)
	}
	info, err = f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, roErrno(err)
	}
	if mode := info.Mode(); !mode.IsDir() && !mode.IsRegular() {
		_ = f.Close()
		return nil, experimentalsys.EACCES
	}
	st := sys.NewStat_t(info)
	return &roFile{file: f, dev: st.Dev, ino: st.Ino, isDir: info.IsDir()}, 0
}

// Lstat implements the same method as documented on experimental/sys.FS.
func (r *ReadOnlyFS) Lstat(name string) (sys.Stat_t, experimentalsys.Errno) {
	info, err := r.root.Lstat(roRel(name))
	if err != nil {
		return sys.Stat_t{}, roErrno(err)
	}
	return sys.NewStat_t(info), 0
}

// Stat implements the same method as documented on experimental/sys.FS.
func (r *ReadOnlyFS) Stat(name string) (sys.Stat_t, experimentalsys.Errno) {
	info, err := r.root.Stat(roRel(name))
	if err != nil {
		return sys.Stat_t{}, roErrno(err)
	}
	return sys.NewStat_t(info), 0
}

// Readlink implements the same method as documented on experimental/sys.FS.
// A link whose target leads out of the directory is EACCES: its text is a
// host path the guest must not learn.
func (r *ReadOnlyFS) Readlink(name string) (string, experimentalsys.Errno) {
	p := roRel(name)
	target, err := r.root.Readlink(p)
	if err != nil {
		return "", roErrno(err)
	}
	target = filepath.ToSlash(target)
	if path.IsAbs(target) {
		return "", experimentalsys.EACCES
	}
	if j := path.Clean(path.Join(path.Dir(p), target)); j == ".." || strings.HasPrefix(j, "../") {
		return "", experimentalsys.EACCES
	}
	return target, 0
}

// Mkdir implements the same method as documented on experimental/sys.FS.
func (*ReadOnlyFS) Mkdir(string, fs.FileMode) experimentalsys.Errno { return experimentalsys.EROFS }

// Chmod implements the same method as documented on experimental/sys.FS.
func (*ReadOnlyFS) Chmod(string, fs.FileMode) experimentalsys.Errno { return experimentalsys.EROFS }

// Rename implements the same method as documented on experimental/sys.FS.
func (*ReadOnlyFS) Rename(string, string) experimentalsys.Errno { return experimentalsys.EROFS }

// Rmdir implements the same method as documented on experimental/sys.FS.
func (*ReadOnlyFS) Rmdir(string) experimentalsys.Errno { return experimentalsys.EROFS }

// Unlink implements the same method as documented on experimental/sys.FS.
func (*ReadOnlyFS) Unlink(string) experimentalsys.Errno { return experimentalsys.EROFS }

// Link implements the same method as documented on experimental/sys.FS.
func (*ReadOnlyFS) Link(string, string) experimentalsys.Errno { return experimentalsys.EROFS }

// Symlink implements the same method as documented on experimental/sys.FS.
func (*ReadOnlyFS) Symlink(string, string) experimentalsys.Errno { return experimentalsys.EROFS }

// Utimens implements the same method as documented on experimental/sys.FS.
func (*ReadOnlyFS) Utimens(string, int64, int64) experimentalsys.Errno {
	return experimentalsys.EROFS
}

// roFile is a file or directory of a ReadOnlyFS, open for reading.
type roFile struct {
	experimentalsys.UnimplementedFile

	file   *os.File
	dev    uint64
	ino    sys.Inode
	isDir  bool
	closed bool
}

// Dev implements the same method as documented on experimental/sys.File.
func (f *roFile) Dev() (uint64, experimentalsys.Errno) { return f.dev, 0 }

// Ino implements the same method as documented on experimental/sys.File.
func (f *roFile) Ino() (sys.Inode, experimentalsys.Errno) { return f.ino, 0 }

// IsDir implements the same method as documented on experimental/sys.File.
func (f *roFile) IsDir() (bool, experimentalsys.Errno) { return f.isDir, 0 }

// IsAppend implements the same method as documented on experimental/sys.File.
func (f *roFile) IsAppend() bool { return false }

// SetAppend implements the same method as documented on experimental/sys.File.
func (f *roFile) SetAppend(enable bool) experimentalsys.Errno {
	if enable {
		return experimentalsys.EROFS
	}
	return 0
}

// Stat implements the same method as documented on experimental/sys.File.
func (f *roFile) Stat() (sys.Stat_t, experimentalsys.Errno) {
	if f.closed {
		return sys.Stat_t{}, experimentalsys.EBADF
	}
	info, err := f.file.Stat()
	if err != nil {
		return sys.Stat_t{}, experimentalsys.UnwrapOSError(err)
	}
	return sys.NewStat_t(info), 0
}

// Read implements the same method as documented on experimental/sys.File.
func (f *roFile) Read(buf []byte) (int, experimentalsys.Errno) {
	if f.isDir {
		return 0, experimentalsys.EISDIR
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.file.Read(buf)
	return n, experimentalsys.UnwrapOSError(err) // io.EOF is 0
}

// Pread implements the same method as documented on experimental/sys.File.
func (f *roFile) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	switch {
	case f.isDir:
		return 0, experimentalsys.EISDIR
	case off < 0:
		return 0, experimentalsys.EINVAL
	case len(buf) == 0:
		return 0, 0
	}
	n, err := f.file.ReadAt(buf, off)
	return n, experimentalsys.UnwrapOSError(err)
}

// Seek implements the same method as documented on experimental/sys.File.
func (f *roFile) Seek(offset seekOffset, whence int) (int64, experimentalsys.Errno) {
	if whence < io.SeekStart || whence > io.SeekEnd {
		return 0, experimentalsys.EINVAL
	}
	n, err := f.file.Seek(offset, whence)
	return n, experimentalsys.UnwrapOSError(err)
}

// Readdir implements the same method as documented on experimental/sys.File.
func (f *roFile) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if f.closed || !f.isDir {
		return nil, experimentalsys.EBADF
	}
	infos, err := f.file.Readdir(n)
	if err != nil && err != io.EOF {
		return nil, experimentalsys.UnwrapOSError(err)
	}
	dirents := make([]experimentalsys.Dirent, 0, len(infos))
	for _, info := range infos {
		dirents = append(dirents, experimentalsys.Dirent{
			Name: info.Name(),
			Ino:  sys.NewStat_t(info).Ino,
			Type: info.Mode().Type(),
		})
	}
	return dirents, 0
}

// Write implements the same method as documented on experimental/sys.File:
// the file was opened read-only.
func (f *roFile) Write([]byte) (int, experimentalsys.Errno) { return 0, experimentalsys.EBADF }

// Pwrite implements the same method as documented on experimental/sys.File.
func (f *roFile) Pwrite([]byte, int64) (int, experimentalsys.Errno) {
	return 0, experimentalsys.EBADF
}

// Truncate implements the same method as documented on experimental/sys.File.
func (f *roFile) Truncate(int64) experimentalsys.Errno { return experimentalsys.EROFS }

// Sync implements the same method as documented on experimental/sys.File.
func (f *roFile) Sync() experimentalsys.Errno { return 0 }

// Datasync implements the same method as documented on experimental/sys.File.
func (f *roFile) Datasync() experimentalsys.Errno { return 0 }

// Utimens implements the same method as documented on experimental/sys.File.
func (f *roFile) Utimens(int64, int64) experimentalsys.Errno { return experimentalsys.EROFS }

// Close implements the same method as documented on experimental/sys.File.
func (f *roFile) Close() experimentalsys.Errno {
	if f.closed {
		return 0
	}
	f.closed = true
	return experimentalsys.UnwrapOSError(f.file.Close())
}
