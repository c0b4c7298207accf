package hostcalls

import (
	"errors"
	"os"
	"path"
	"sync"

	"golang.org/x/sys/unix"
)

// RootOwner is the user that what the host creates in a session root is
// given to: files and folders made by write(), append() and serve's files
// API (PUT /v1/sessions/{id}/files/{path}).
//
// It is unset, and the host's files stay the host's, except where the
// session's Python runs as another user than wasmeval: a local Jupyter
// kernel started while wasmeval runs as root runs as the owner of the
// root (or nobody), and the runtime sets its user here when the kernel
// starts (see RootOwnerUser). Without it the kernel could replace the
// host's files (it owns their folder) but not edit them in place. The
// wasm backend and runs as an unprivileged user never set it.
//
// The change of owner never follows a link: a new file is changed
// through the descriptor it was created with (fchown), a new folder
// through one opened without following a link (O_NOFOLLOW|O_DIRECTORY),
// so a link the kernel swaps in meanwhile changes nothing outside the
// root. Its methods are safe for concurrent use.
type RootOwner struct {
	mu       sync.Mutex
	uid, gid int
	set      bool
}

// Set makes uid and gid the owner of what the host creates from now on. A
// uid that is wasmeval's own effective uid, or negative, unsets it: the
// host's files are then its user's anyway.
func (o *RootOwner) Set(uid, gid int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if uid < 0 || uid == os.Geteuid() {
		o.uid, o.gid, o.set = 0, 0, false
		return
	}
	o.uid, o.gid, o.set = uid, gid, true
}

// Get returns the owner, and false when none is set.
func (o *RootOwner) Get() (uid, gid int, ok bool) {
	if o == nil {
		return 0, 0, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.uid, o.gid, o.set
}

// RootOwnerUser is a runtime instance that knows which user its guest's
// code runs as (the jupyter runtime's, for a local kernel): the sandbox
// hands it its session's RootOwner before its first cell, and the
// instance sets it when it learns that user.
type RootOwnerUser interface {
	UseRootOwner(*RootOwner)
}

// RootOwner returns the owner of what the host creates in the root (the
// FS's file helpers and files API give it their new files and folders).
func (f *FS) RootOwner() *RootOwner { return f.owner }

// giveFile gives file, which the host has just created, to the root's
// owner when one is set.
func (f *FS) giveFile(op, p string, file *os.File) error {
	uid, gid, ok := f.owner.Get()
	if !ok {
		return nil
	}
	if err := file.Chown(uid, gid); err != nil { // fchown: the file created, whatever its name now holds
		return fail(op, p, err)
	}
	return nil
}

// giveDir gives the folder rel, which the host has just made, to the
// root's owner when one is set. It opens rel's parent in the root and
// the folder below it without following a link, so a link swapped in at
// rel since it was made is not followed (ELOOP or ENOTDIR: refused).
func (f *FS) giveDir(op, p, rel string) error {
	uid, gid, ok := f.owner.Get()
	if !ok {
		return nil
	}
	parent, err := f.root.Open(path.Dir(rel))
	if err != nil {
		return fail(op, p, err)
	}
	defer parent.Close()
	var fd int
	for {
		fd, err = unix.Openat(int(parent.Fd()), path.Base(rel), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return fail(op, p, &os.PathError{Op: "openat", Path: rel, Err: err})
	}
	defer unix.Close(fd)
	if err := unix.Fchown(fd, uid, gid); err != nil {
		return fail(op, p, &os.PathError{Op: "fchown", Path: rel, Err: err})
	}
	return nil
}
