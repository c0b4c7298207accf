package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"golang.org/x/sys/unix"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/rootlink"
	"github.com/wasmeval/wasmeval/wasm"
)

// copyRoot copies the tree under src into dst, an empty folder, for Fork.
// The session root is the guest's to shape, so the copy trusts nothing in
// it:
//
//   - it walks by file descriptor (openat with O_NOFOLLOW), never by path,
//     so no symlink, whatever its target and however it was swapped in, is
//     followed;
//   - it copies a symlink only when the host can follow it and stay in
//     the root (rootlink.Safe: down from its folder, or up at most to the
//     root and then down, as npm's node_modules/.bin links; the rule
//     persistence and replay keep) and refuses the fork otherwise, naming
//     the link: a copy without it would not be the session's files. Safe
//     judges the link by its target and its path alone, and the copy
//     makes it with that target at that path (the folders on the way are
//     ones the copy made), so what was judged is what the copy holds,
//     whatever the guest did to the source during the walk;
//   - it refuses named pipes, devices and sockets without opening them (a
//     fifo would block the host);
//   - it keeps sparse files sparse: only the data extents are read
//     (SEEK_DATA/SEEK_HOLE) and all-zero blocks are not written, so a
//     1 TiB hole costs nothing;
//   - it counts what it copies in the new session's disk quota q
//     (hostcalls.DiskQuota, whose rule says what an entry counts) and
//     stops before the entry that would pass it.
//
// On error what it copied so far is removed again.
func copyRoot(src, dst string, q *copyQuota) (err error) {
	sfd, err := unix.Open(src, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: src, Err: err}
	}
	defer unix.Close(sfd)
	dfd, err := unix.Open(dst, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dst, Err: err}
	}
	defer unix.Close(dfd)
	defer func() {
		if err != nil {
			emptyDir(dst)
		}
	}()
	if q.q, err = hostcalls.NewDiskQuota(dst, q.maxBytes, q.maxFiles); err != nil {
		return err
	}
	return copyDir(sfd, dfd, ".", q)
}

// copyQuota is the disk quota of a fork's new session, counted while
// copying, by the quota's own rule (wasm.RootQuota, on the empty target
// folder): the copy describes each entry as its lstat gives it and the
// quota says what it counts.
type copyQuota struct {
	maxBytes, maxFiles int64 // as SessionOptions give them
	q                  *hostcalls.DiskQuota
}

// newCopyQuota returns the quota SessionOptions o give the new session;
// copyRoot opens it on the (empty) target folder.
func newCopyQuota(o SessionOptions) *copyQuota {
	return &copyQuota{maxBytes: o.DiskQuotaBytes, maxFiles: o.DiskQuotaFiles}
}

// add checks that the entry st describes (rel in the root, name in its
// folder) fits the quota, then runs create, which makes it, and records
// it when create succeeds. It says which cap the entry would pass.
func (q *copyQuota) add(rel, name string, st *unix.Stat_t, create func() error) error {
	info := wasm.EntryInfo(name, fileMode(st.Mode), st.Size, uint64(st.Dev), uint64(st.Ino), uint64(st.Nlink))
	q.q.Lock()
	defer q.q.Unlock()
	if err := q.q.CheckEntryLocked(info); err != nil {
		return fmt.Errorf("%s: the copy would pass the new session's disk quota: %w", rel, err)
	}
	if err := create(); err != nil {
		return err
	}
	q.q.AddedLocked(info)
	return nil
}

// fileMode is the fs.FileMode of a raw st_mode (type and permissions).
func fileMode(mode uint32) fs.FileMode {
	m := fs.FileMode(mode & 0o777)
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFREG:
	default:
		m |= fs.ModeIrregular
	}
	return m
}

// emptyDir removes what is inside dir, not following symlinks.
func emptyDir(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.RemoveAll(dir + "/" + e.Name())
	}
}

// copyDir copies the entries of the folder sfd into the folder dfd; rel is
// the folder's path in the root, for errors.
func copyDir(sfd, dfd int, rel string, q *copyQuota) error {
	dup, err := unix.Dup(sfd)
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	d := os.NewFile(uintptr(dup), rel)
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return fmt.Errorf("%s: reading the folder: %w", rel, err)
	}
	for _, name := range names {
		if err := copyEntry(sfd, dfd, name, path.Join(rel, name), q); err != nil {
			return err
		}
	}
	return nil
}

func copyEntry(sfd, dfd int, name, rel string, q *copyQuota) error {
	var st unix.Stat_t
	if err := unix.Fstatat(sfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	perm := uint32(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		sub, err := openChecked(sfd, name, unix.O_RDONLY|unix.O_DIRECTORY, &st)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		defer unix.Close(sub)
		// Writable while we fill it; its own mode after.
		if err := q.add(rel, name, &st, func() error {
			if err := unix.Mkdirat(dfd, name, 0o700); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			return nil
		}); err != nil {
			return err
		}
		dsub, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		defer unix.Close(dsub)
		if err := copyDir(sub, dsub, rel, q); err != nil {
			return err
		}
		return unix.Fchmod(dsub, perm)
	case unix.S_IFREG:
		in, err := openChecked(sfd, name, unix.O_RDONLY, &st)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		defer unix.Close(in)
		return q.add(rel, name, &st, func() error {
			out, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
			if err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			defer unix.Close(out)
			if err := copySparse(out, in, st.Size); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			return unix.Fchmod(out, perm)
		})
	case unix.S_IFLNK:
		target, err := readlinkat(sfd, name)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		if err := rootlink.Safe(rel, target); err != nil {
			return fmt.Errorf("%s is a symbolic link to %q, which the host could not follow and stay in the root: %v; remove or replace it before forking", rel, target, err)
		}
		return q.add(rel, name, &st, func() error {
			if err := unix.Symlinkat(target, dfd, name); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			return nil
		})
	default:
		return fmt.Errorf("%s is a %s; a fork copies only regular files, folders and safe symbolic links: remove it before forking", rel, fileKind(st.Mode))
	}
}

// openChecked opens name under dirfd without following a symlink or
// blocking on a fifo, and checks that it is still the file Fstatat saw
// (the guest is not running, but nothing else is trusted either).
func openChecked(dirfd int, name string, flags int, want *unix.Stat_t) (int, error) {
	fd, err := unix.Openat(dirfd, name, flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if st.Dev != want.Dev || st.Ino != want.Ino || st.Mode&unix.S_IFMT != want.Mode&unix.S_IFMT {
		unix.Close(fd)
		return -1, errors.New("changed while being copied")
	}
	return fd, nil
}

func readlinkat(dirfd int, name string) (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		if len(buf) >= 1<<16 {
			return "", errors.New("symbolic link target too long")
		}
		buf = make([]byte, 2*len(buf))
	}
}

func fileKind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "named pipe (fifo)"
	case unix.S_IFSOCK:
		return "socket"
	case unix.S_IFCHR:
		return "character device"
	case unix.S_IFBLK:
		return "block device"
	}
	return fmt.Sprintf("special file (mode %#o)", mode)
}

// copyBlock is the granularity at which copySparse skips zeros.
const copyBlock = 64 << 10

// copySparse copies size bytes of in to out, leaving holes where in has
// holes (SEEK_DATA/SEEK_HOLE, where the filesystem supports them) or
// all-zero blocks, then sets out's size.
func copySparse(out, in int, size int64) error {
	buf := make([]byte, 16*copyBlock)
	var off int64
	for off < size {
		data, err := unix.Seek(in, off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // only a hole from off on
		}
		end := size
		if err != nil {
			data = off // no SEEK_DATA here: read it all, skip zeros
		} else if hole, err := unix.Seek(in, data, unix.SEEK_HOLE); err == nil {
			end = min(hole, size)
		}
		if err := copyRange(out, in, data, end, buf); err != nil {
			return err
		}
		off = end
	}
	return unix.Ftruncate(out, size)
}

var zeroBlock [copyBlock]byte

// copyRange copies in's bytes [from, to) to out at the same offsets,
// writing only the blocks that are not all zero.
func copyRange(out, in int, from, to int64, buf []byte) error {
	for from < to {
		n, err := unix.Pread(in, buf[:min(int64(len(buf)), to-from)], from)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil // the file got shorter: Ftruncate fills the rest
		}
		for i := 0; i < n; {
			j := min(i+copyBlock, n)
			if bytes.Equal(buf[i:j], zeroBlock[:j-i]) {
				i = j
				continue
			}
			k := j // extend over the following non-zero blocks
			for k < n {
				e := min(k+copyBlock, n)
				if bytes.Equal(buf[k:e], zeroBlock[:e-k]) {
					break
				}
				k = e
			}
			if err := pwriteAll(out, buf[i:k], from+int64(i)); err != nil {
				return err
			}
			i = k
		}
		from += int64(n)
	}
	return nil
}

func pwriteAll(fd int, b []byte, off int64) error {
	for len(b) > 0 {
		n, err := unix.Pwrite(fd, b, off)
		if err != nil {
			return err
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}
