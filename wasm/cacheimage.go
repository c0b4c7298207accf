package wasm

import (
	"bytes"
	"errors"
	"hash"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// A template image is mostly zero pages (8.5 of its 20 MiB are data after
// CPython's boot). So it is saved sparse (SaveSparseImage: its zero pages
// are holes) and copied sparse (copyImage: only pages with data are read
// and written into the memory file, whose other pages stay holes that
// read as zeros), which halves a warm start's copying.

// imagePage is the unit of zero detection: the smallest page size.
const imagePage = 4096

// SaveSparseImage writes b to path atomically, like SaveImage, with its
// pages of zeros left as holes.
func SaveSparseImage(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := writeSparse(tmp, b, 0); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Truncate(int64(len(b))); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

var zeroPage [imagePage]byte

// writeSparse writes the pages of b that are not all zeros at off of f.
func writeSparse(f *os.File, b []byte, off int64) error {
	for p := 0; p < len(b); {
		for p < len(b) && bytes.Equal(b[p:min(p+imagePage, len(b))], zeroPage[:min(imagePage, len(b)-p)]) {
			p += imagePage
		}
		q := p
		for q < len(b) && !bytes.Equal(b[q:min(q+imagePage, len(b))], zeroPage[:min(imagePage, len(b)-q)]) {
			q += imagePage
		}
		if q > p {
			if _, err := f.WriteAt(b[p:min(q, len(b))], off+int64(p)); err != nil {
				return err
			}
		}
		p = q
	}
	return nil
}

// copyImage copies the size bytes of src into dst (empty), writing only
// the pages with data and reading only the source's data extents
// (SEEK_DATA, SEEK_HOLE); h, when not nil, hashes every byte, holes
// included.
func copyImage(dst, src *os.File, size uint64, h hash.Hash) error {
	if err := dst.Truncate(int64(size)); err != nil {
		return err
	}
	end := int64(size)
	buf := make([]byte, 1<<20)
	fd := int(src.Fd())
	for off := int64(0); off < end; {
		data, err := unix.Seek(fd, off, unix.SEEK_DATA)
		switch {
		case errors.Is(err, unix.ENXIO):
			data = end // only a hole to the end
		case err != nil || data < off:
			data = off // no SEEK_DATA here: all data
		}
		data = min(data, end)
		hashZeros(h, data-off)
		off = data
		if off >= end {
			break
		}
		hole, err := unix.Seek(fd, off, unix.SEEK_HOLE)
		if err != nil || hole <= off {
			hole = end
		}
		hole = min(hole, end)
		for off < hole {
			n := min(int64(len(buf)), hole-off)
			if _, err := io.ReadFull(io.NewSectionReader(src, off, n), buf[:n]); err != nil {
				return err
			}
			if h != nil {
				h.Write(buf[:n])
			}
			if err := writeSparse(dst, buf[:n], off); err != nil {
				return err
			}
			off += n
		}
	}
	return nil
}

// hashZeros writes n zero bytes to h, when h is not nil.
func hashZeros(h hash.Hash, n int64) {
	if h == nil {
		return
	}
	for n > 0 {
		m := min(n, imagePage)
		h.Write(zeroPage[:m])
		n -= m
	}
}
