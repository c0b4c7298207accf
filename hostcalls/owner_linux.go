package hostcalls

import (
	"errors"
	"os"
	"path"
	"syscall"

	"golang.org/x/sys/unix"
)

// fileID is the device and inode of fi.
func fileID(fi os.FileInfo) (dev, ino uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return st.Dev, st.Ino, true
}

// handOver gives e to uid:gid if the entry at e's path is still the one
// the host made: it is opened without following a link (O_PATH, so no
// device or FIFO is opened for real), checked by inode, owner and link
// count, and changed through that descriptor. Anything else (gone,
// replaced by another inode, a symbolic link, a file with a hard link
// elsewhere) is left as it is. (A file made in the root meanwhile that
// got the freed inode number of the host's is handed over too: it is a
// file of the root's, which the owner could replace anyway.)
func (f *FS) handOver(e pendingEntry, uid, gid int) {
	parent, err := f.root.Open(path.Dir(e.rel))
	if err != nil {
		return
	}
	defer parent.Close()
	var fd int
	for {
		fd, err = unix.Openat(int(parent.Fd()), path.Base(e.rel), unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	// A file with another name (a hard link from elsewhere) is not
	// given away through this one.
	if unix.Fstat(fd, &st) != nil || st.Dev != e.dev || st.Ino != e.ino || int(st.Uid) != os.Geteuid() ||
		st.Mode&unix.S_IFMT == unix.S_IFLNK || (st.Mode&unix.S_IFMT != unix.S_IFDIR && st.Nlink != 1) {
		return
	}
	_ = unix.Fchownat(fd, "", uid, gid, unix.AT_EMPTY_PATH)
}
