package tape

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// LayerDigest identifies the package layer in dir, with its preload list,
// by its contents: every entry's path, type and permissions, each file's
// bytes and each link's target, in lexical order. Times and the layer's
// folder are left out, so the same packages installed on another machine
// give the same digest.
func LayerDigest(dir string, preload []string) (*Layer, error) {
	h := sha256.New()
	h.Write([]byte("wasmeval package layer contents v1\x00"))
	l := &Layer{Preload: slices.Clone(preload)}
	var num [8]byte
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		h.Write([]byte(filepath.ToSlash(rel) + "\x00"))
		binary.LittleEndian.PutUint64(num[:], uint64(info.Mode()&(fs.ModeType|fs.ModePerm)))
		h.Write(num[:])
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			h.Write([]byte(target + "\x00"))
		case info.Mode().IsRegular():
			binary.LittleEndian.PutUint64(num[:], uint64(info.Size()))
			h.Write(num[:])
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			n, err := io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
			l.Files++
			l.Bytes += n
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tape: the package layer %s: %w", dir, err)
	}
	l.SHA256 = hex.EncodeToString(h.Sum(nil))
	return l, nil
}

// Describe is the layer in a sentence, for errors.
func (l *Layer) Describe() string {
	if l == nil {
		return "no package layer"
	}
	files := "files"
	if l.Files == 1 {
		files = "file"
	}
	s := fmt.Sprintf("a package layer of %d %s (%d bytes, sha256 %s)", l.Files, files, l.Bytes, l.SHA256)
	if len(l.Preload) > 0 {
		return s + fmt.Sprintf(" preloading %s", strings.Join(l.Preload, ","))
	}
	return s + " preloading nothing"
}
