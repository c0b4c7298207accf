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
//
// What the host created before the owner was known (write() from a
// JavaScript cell, the files API, before the session's first kernel
// started) is remembered, up to maxPending entries, and given to the
// owner when Set first sets one, so the kernel can edit those files in
// place too. Each is changed only if the entry at its path is still the
// one the host made (the same inode, still wasmeval's) and not a link.
type RootOwner struct {
	mu       sync.Mutex
	uid, gid int
	set      bool
	// pending is what the host created while no owner was set; fs is
	// the FS of the root it was created in.
	pending []pendingEntry
	fs      *FS
}

// pendingEntry is a file or folder the host created in the root before
// the owner was known: its path in the root and its identity.
type pendingEntry struct {
	rel      string
	dev, ino uint64
}

// maxPending bounds what a RootOwner remembers before an owner is set; a
// host that creates more leaves the rest its own.
const maxPending = 4096

// Set makes uid and gid the owner of what the host creates from now on,
// and gives it what the host created before (see RootOwner). A uid that
// is wasmeval's own effective uid, or negative, unsets it: the host's
// files are then its user's anyway.
func (o *RootOwner) Set(uid, gid int) {
	o.mu.Lock()
	if uid < 0 || uid == os.Geteuid() {
		o.uid, o.gid, o.set = 0, 0, false
		o.mu.Unlock()
		return
	}
	o.uid, o.gid, o.set = uid, gid, true
	pending, f := o.pending, o.fs
	o.pending = nil
	o.mu.Unlock()
	for _, e := range pending {
		f.handOver(e, uid, gid)
	}
}

// tracks reports whether the host's new files are given to the owner,
// now (one is set) or when it is known (wasmeval runs as root, so one may
// be set later): a creator that can tell a file it made from one that was
// there (append's O_EXCL) then hands it to giveFile.
func (o *RootOwner) tracks() bool {
	if _, _, ok := o.Get(); ok {
		return true
	}
	return o != nil && os.Geteuid() == 0
}

// remember notes rel, which the host has just created in the root while
// no owner is set (fi is what it created), for Set to hand over. Only a
// root wasmeval can give files away (it runs as root) remembers anything.
func (o *RootOwner) remember(rel string, fi os.FileInfo) {
	if o == nil || o.fs == nil || os.Geteuid() != 0 {
		return
	}
	dev, ino, ok := fileID(fi)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.set || len(o.pending) >= maxPending {
		return
	}
	o.pending = append(o.pending, pendingEntry{rel: rel, dev: dev, ino: ino})
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
		// The file is renamed to p's place (write) or is there already
		// (append): remember it there.
		if rel, err := f.Resolve(op, p); err == nil && f.owner != nil && os.Geteuid() == 0 {
			if fi, err := file.Stat(); err == nil {
				f.owner.remember(rel, fi)
			}
		}
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
		if f.owner != nil && os.Geteuid() == 0 {
			if fi, err := f.root.Lstat(rel); err == nil {
				f.owner.remember(rel, fi)
			}
		}
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

// GuestCreated gives the entry rel (a path in the root), which the
// guest's own filesystem has just made, to the owner, as the host's own
// new files are: JavaScript's fs module writes the root through
// wasm.GuestFS, as wasmeval's user, and a kernel running as another user
// could not edit those files in place either. file is the descriptor the
// file was created with, or nil for a folder; with no owner set yet the
// entry is remembered for Set. A failure leaves the entry wasmeval's.
func (o *RootOwner) GuestCreated(rel string, file *os.File) {
	if o == nil || o.fs == nil {
		return
	}
	f := o.fs
	if file == nil {
		_ = f.giveDir("mkdir", rel, rel)
		return
	}
	if _, _, ok := o.Get(); !ok {
		if os.Geteuid() == 0 {
			if fi, err := file.Stat(); err == nil {
				o.remember(rel, fi)
			}
		}
		return
	}
	_ = f.giveFile("open", rel, file)
}
