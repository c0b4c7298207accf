package hostcalls

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"syscall"
	"time"
)

// The methods in this file serve a session's files to its host (serve's
// /v1/sessions/{id}/files), by the rules the guest's helpers follow:
// paths resolve inside the root through the same os.Root, links that lead
// out are refused, and removals are counted by the disk quota.

// Entry is one item of a folder listing.
type Entry struct {
	Name     string    `json:"name"`
	Type     string    `json:"type"` // "file", "directory", "symlink" or "other"
	Size     int64     `json:"size"`
	Modified time.Time `json:"modified"`
}

// MaxListEntries bounds a listing: a folder may hold more, and List says
// when it stopped.
const MaxListEntries = 10000

// Stat returns what is at p, without following a final link.
func (f *FS) Stat(p string) (fs.FileInfo, error) {
	rel, err := f.Resolve("stat", p)
	if err != nil {
		return nil, err
	}
	fi, err := f.root.Lstat(rel)
	if err != nil {
		return nil, fail("stat", p, err)
	}
	return fi, nil
}

// Open opens the regular file at p for reading. Anything else (a folder, a
// named pipe, a device, a link that leads out) is refused; the open does
// not block on a fifo planted in the root.
func (f *FS) Open(p string) (*os.File, fs.FileInfo, error) {
	rel, err := f.Resolve("open", p)
	if err != nil {
		return nil, nil, err
	}
	file, err := f.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fail("open", p, err)
	}
	fi, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, nil, fail("open", p, err)
	}
	if !fi.Mode().IsRegular() {
		file.Close()
		why := "it is not a regular file"
		if fi.IsDir() {
			why = "it is a directory; list it instead"
		}
		return nil, nil, &FSError{Op: "open", Path: p, Reason: why}
	}
	return file, fi, nil
}

// List lists the folder at p, sorted by name, at most MaxListEntries
// entries; more reports whether there were more.
func (f *FS) List(p string) (entries []Entry, more bool, err error) {
	rel, err := f.Resolve("list", p)
	if err != nil {
		return nil, false, err
	}
	dir, err := f.root.Open(rel)
	if err != nil {
		return nil, false, fail("list", p, err)
	}
	defer dir.Close()
	if fi, err := dir.Stat(); err != nil {
		return nil, false, fail("list", p, err)
	} else if !fi.IsDir() {
		return nil, false, &FSError{Op: "list", Path: p, Reason: "it is not a directory"}
	}
	des, err := dir.ReadDir(MaxListEntries + 1)
	if err != nil && len(des) == 0 && !errors.Is(err, io.EOF) {
		return nil, false, fail("list", p, err)
	}
	if len(des) > MaxListEntries {
		des, more = des[:MaxListEntries], true
	}
	for _, d := range des {
		e := Entry{Name: d.Name(), Type: entryType(d.Type())}
		if fi, err := d.Info(); err == nil {
			e.Size, e.Modified = fi.Size(), fi.ModTime().UTC()
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b Entry) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return entries, more, nil
}

func entryType(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "other"
}

// Remove removes the file, link or empty folder at p. The root itself
// cannot be removed.
func (f *FS) Remove(p string) error {
	rel, err := f.Resolve("remove", p)
	if err != nil {
		return err
	}
	if rel == "." {
		return &FSError{Op: "remove", Path: p, Reason: "it is the session root"}
	}
	if q := f.quota; q != nil {
		q.Lock()
		defer q.Unlock()
	}
	info, err := f.root.Lstat(rel)
	if err != nil {
		return fail("remove", p, err)
	}
	if err := f.root.Remove(rel); err != nil {
		if info.IsDir() && (errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)) {
			return &FSError{Op: "remove", Path: p, Reason: "the directory is not empty; remove what it holds first", Err: err}
		}
		return fail("remove", p, err)
	}
	if q := f.quota; q != nil {
		q.RemovedLocked(info)
	}
	return nil
}
