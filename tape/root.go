package tape

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wasmeval/wasmeval/internal/rootlink"
)

// WriteRoot writes the entries of the folder root as dir, file and symlink
// records, in lexical order: files up to embedLimit bytes with their
// contents, larger ones by size and SHA-256. embedLimit zero means
// DefaultEmbedLimit. Entries that are neither (sockets, devices) are
// skipped.
//
// # Errors
//
// A root holding a symbolic link that the host could not follow and stay
// in the root (rootlink.Safe: absolute, leading out, climbing after a
// name, or to a folder that holds it) is not recorded: WriteRoot fails
// before it writes any entry, naming each such link and saying what to
// do. The guest cannot make such a link, so the host or an operator put
// it there; RestoreRoot refuses to rebuild it (the host's tools in a kept
// --cwd would follow it out), so a tape holding it would not replay, and
// one leaving it out would not be the session's root (the guest sees the
// link in its folder's listing). Links that go up and down again inside
// the root, as npm's node_modules/.bin ones do, are recorded.
func WriteRoot(w *Writer, root string, embedLimit int64) error {
	if embedLimit == 0 {
		embedLimit = DefaultEmbedLimit
	}
	if err := checkRootLinks(root); err != nil {
		return err
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("tape: recording the root: %w", err)
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("tape: recording the root: %w", err)
		}
		mode := uint32(info.Mode().Perm())
		mtime := info.ModTime().UnixNano()
		switch {
		case d.IsDir():
			return w.Write(Record{Type: TypeDir, Path: rel, Mode: mode, MTime: &mtime})
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return fmt.Errorf("tape: recording the root: %w", err)
			}
			if rootlink.Safe(rel, target) != nil { // put there since checkRootLinks
				return outwardLinksError([]string{fmt.Sprintf("%s -> %q", rel, target)}, 1)
			}
			return w.Write(Record{Type: TypeSymlink, Path: rel, Target: target})
		case !d.Type().IsRegular():
			return nil
		case info.Size() > embedLimit:
			sum, err := hashFile(p)
			if err != nil {
				return fmt.Errorf("tape: recording the root: %w", err)
			}
			return w.Write(Record{Type: TypeFile, Path: rel, Mode: mode, MTime: &mtime, Size: info.Size(), SHA256: sum})
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("tape: recording the root: %w", err)
		}
		return w.Write(Record{Type: TypeFile, Path: rel, Mode: mode, MTime: &mtime, Data: data})
	})
}

// maxNamedLinks is how many outward links a WriteRoot error names.
const maxNamedLinks = 10

// checkRootLinks walks root, not following links, and fails naming the
// symbolic links in it that rootlink.Safe refuses.
func checkRootLinks(root string) error {
	var bad []string
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("tape: recording the root: %w", err)
		}
		if p == root || d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return fmt.Errorf("tape: recording the root: %w", err)
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rootlink.Safe(rel, target) == nil {
			return nil
		}
		if n++; len(bad) < maxNamedLinks {
			bad = append(bad, fmt.Sprintf("%s -> %q", rel, target))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n > 0 {
		return outwardLinksError(bad, n)
	}
	return nil
}

// outwardLinksError is WriteRoot's error for a root holding n links that
// lead out of their folder, named names the first of them.
func outwardLinksError(named []string, n int) error {
	more := ""
	if n > len(named) {
		more = fmt.Sprintf(" and %d more", n-len(named))
	}
	return fmt.Errorf("tape: the root is not recorded: it holds %d symbolic link(s) that the host could not follow and stay in the root (%s%s), which a replay refuses to rebuild; %s: remove or replace them, or record in a folder without them",
		n, strings.Join(named, ", "), more, rootlink.Rule)
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// RestoreRoot recreates the recorded entries in dir, which should be
// empty. A file recorded by hash is copied from blobs (a folder holding
// it by its SHA-256 as the file name, or by its path as in the root);
// when it is not there, or differs, the error names it and says how to
// provide it. Entries recorded with a modification time get it back
// (folders once everything in them is made).
//
// A symlink entry must be one the host can follow and stay in the root
// (rootlink.Safe: down from its folder, or up at most to the root and
// then down): the guest could not follow one that leads out, but the
// host's tools in a kept --cwd would. No entry may lie below a symlink
// entry: made through the link, it would lie elsewhere than its path
// says, and a link made there would climb from another folder than the
// one it was judged by. A tape with either is refused before anything is
// made.
func RestoreRoot(dir string, entries []Record, blobs string) error {
	links := map[string]bool{}
	for _, e := range entries {
		if e.Type == TypeSymlink {
			links[e.Path] = true
		}
	}
	isLink := func(rel string) bool { return links[rel] }
	for _, e := range entries {
		if via, ok := rootlink.Through(e.Path, isLink); ok {
			return fmt.Errorf("tape: the root entry %s lies below %s; %s is a symbolic link on the tape, and a recorded root has nothing below its links; so nothing is restored", e.Path, via, via)
		}
		if e.Type != TypeSymlink {
			continue
		}
		if err := rootlink.Safe(e.Path, e.Target); err != nil {
			return fmt.Errorf("tape: the root entry %s is a symbolic link to %q: %v; so nothing is restored", e.Path, e.Target, err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("tape: restoring the root: %w", err)
	}
	defer root.Close()
	var missing []string
	for _, e := range entries {
		if err := e.Check(); err != nil {
			return fmt.Errorf("tape: restoring the root: %w", err)
		}
		name := filepath.FromSlash(e.Path)
		mode := fs.FileMode(e.Mode)
		switch e.Type {
		case TypeDir:
			if mode == 0 {
				mode = 0o755
			}
			if err := root.Mkdir(name, mode|0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("tape: restoring the root: %w", err)
			}
		case TypeSymlink:
			if err := root.Symlink(e.Target, name); err != nil {
				return fmt.Errorf("tape: restoring the root: %w", err)
			}
		case TypeFile:
			if mode == 0 {
				mode = 0o644
			}
			data := e.Data
			if e.SHA256 != "" {
				b, ok := findBlob(blobs, e)
				if !ok {
					missing = append(missing, fmt.Sprintf("%s (%d bytes, sha256 %s)", e.Path, e.Size, e.SHA256))
					continue
				}
				data = b
			}
			if err := root.WriteFile(name, data, mode); err != nil {
				return fmt.Errorf("tape: restoring the root: %w", err)
			}
		default:
			return fmt.Errorf("tape: restoring the root: a %s record is not a root entry", e.Type)
		}
	}
	// Times last: making an entry changes its folder's time.
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.MTime == nil || e.Type == TypeSymlink {
			continue
		}
		t := time.Unix(0, *e.MTime)
		if err := root.Chtimes(filepath.FromSlash(e.Path), t, t); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("tape: restoring the root's times: %w", err)
		}
	}
	if len(missing) > 0 {
		where := "give --blobs DIR, a folder holding each such file named by its SHA-256 or at its path in the root"
		if blobs != "" {
			where = fmt.Sprintf("put each into %s, named by its SHA-256 or at its path in the root", blobs)
		}
		return fmt.Errorf("tape: the tape names %d file(s) larger than its embedding cap that are not provided: %s; %s",
			len(missing), strings.Join(missing, ", "), where)
	}
	return nil
}

// findBlob reads the file e names from blobs, by hash or by path, if its
// contents match.
func findBlob(blobs string, e Record) ([]byte, bool) {
	if blobs == "" {
		return nil, false
	}
	for _, p := range []string{filepath.Join(blobs, e.SHA256), filepath.Join(blobs, filepath.FromSlash(e.Path))} {
		// Only a regular file of the recorded size is read: the tape
		// names the path, and a named pipe there would block the replay
		// for good, a large file fill its memory.
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() || st.Size() != e.Size {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil || int64(len(b)) != e.Size {
			continue
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) == e.SHA256 {
			return b, true
		}
	}
	return nil, false
}
