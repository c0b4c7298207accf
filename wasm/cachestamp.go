package wasm

import (
	"bytes"
	"crypto/hmac"
	"encoding/binary"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Checking a cache file's MAC reads and hashes all of it: the template,
// the compiled code and the module are tens of MiB, most of a warm
// process's start. So once a file's MAC has been checked, a stamp is kept
// next to it ("<file>.stamp", itself MACed under the key): the file's
// device, inode, size, mtime and ctime when it was checked. A later
// process that finds the file with the very same identity skips the hash.
//
// Why that is safe: nothing but the kernel sets a ctime, and every change
// to a file's content or name (write, truncate, a new file renamed or
// linked over it, chmod) sets it to the current time; a file that is
// replaced gets a new inode or, reusing one, a new ctime. So a file whose
// stamp still matches has not changed since its MAC was checked, as long
// as that check could not share a clock tick with a later change: a stamp
// is written only when the file's ctime is stampSettle old, and the ctime
// is read again after the hashing, so a write during it shows. A guest
// never reaches the cache (sandbox refuses roots that overlap it) and
// cannot set a ctime; this guards against the same writers the MACs do.

// stampSettle is how old a file's ctime must be for a stamp to be taken:
// far more than the kernel's timestamp granularity (a jiffy). Tests
// shorten it.
var stampSettle = 2 * time.Second

// macChecks counts the files whose MAC was checked by hashing them, for
// tests.
var macChecks atomic.Int64

// stampSuffix names a file's stamp.
const stampSuffix = ".stamp"

// fileStamp is what identifies a file's content without reading it.
type fileStamp struct {
	dev, ino, size                           uint64
	ctimeSec, ctimeNsec, mtimeSec, mtimeNsec int64
}

func statStamp(f *os.File) (fileStamp, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fileStamp{}, err
	}
	return fileStamp{
		dev: uint64(st.Dev), ino: uint64(st.Ino), size: uint64(st.Size),
		ctimeSec: int64(st.Ctim.Sec), ctimeNsec: int64(st.Ctim.Nsec),
		mtimeSec: int64(st.Mtim.Sec), mtimeNsec: int64(st.Mtim.Nsec),
	}, nil
}

func (s fileStamp) encode() []byte {
	b := make([]byte, 0, 56)
	for _, v := range []uint64{s.dev, s.ino, s.size, uint64(s.ctimeSec), uint64(s.ctimeNsec), uint64(s.mtimeSec), uint64(s.mtimeNsec)} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

// settled reports whether a stamp may be taken of s now.
func (s fileStamp) settled() bool {
	return time.Since(time.Unix(s.ctimeSec, s.ctimeNsec)) >= stampSettle
}

// stampMAC is the MAC of a stamp of the file that label names; bound is
// what else the check covered (the MAC the file was checked against,
// when it is not inside the file).
func (k *CacheKey) stampMAC(label string, enc, bound []byte) []byte {
	h := k.newMAC("stamp\x00" + label)
	h.Write(enc)
	h.Write(bound)
	return h.Sum(nil)
}

// stamped reports whether path's stamp says the file open in f, with
// identity st, was checked under label (and bound) and has not changed
// since.
func (k *CacheKey) stamped(path, label string, st fileStamp, bound []byte) bool {
	b, err := readRegular(path + stampSuffix)
	if err != nil || len(b) != 56+MACSize {
		return false
	}
	enc := st.encode()
	return bytes.Equal(b[:56], enc) && hmac.Equal(b[56:], k.stampMAC(label, enc, bound))
}

// stamp records that the file open in f, with identity before when its
// check began, passed it; nothing is written when the file changed
// meanwhile or its ctime is too recent (see stampSettle). Failing to
// write it only costs the next process a hash.
func (k *CacheKey) stamp(path, label string, f *os.File, before fileStamp, bound []byte) {
	after, err := statStamp(f)
	if err != nil || after != before || !before.settled() {
		return
	}
	enc := before.encode()
	_ = SaveImage(path+stampSuffix, append(enc, k.stampMAC(label, enc, bound)...))
}

// touchInUse marks path as in use for the caches' pruning (by its mtime)
// when it was last marked a day ago or more: marking it changes its
// ctime, which a stamp must then be taken again for, so not on every
// start.
func touchInUse(path string) {
	st, err := os.Stat(path)
	if err != nil || time.Since(st.ModTime()) < 24*time.Hour {
		return
	}
	now := time.Now()
	_ = os.Chtimes(path, now, now)
}

// TouchInUse is touchInUse for the runtimes' cache files.
func TouchInUse(path string) { touchInUse(path) }

// memoSize is a memo's fixed part: the file's stamp.
const memoSize = 56

// LoadMemo returns the value SaveMemo stored at memoPath under label for
// the file open in f, when f is the very file it was stored for and has
// not changed since (the identity a stamp records): a fact about a file
// that is costly to derive again, like the hash of what an executable
// embeds.
func (k *CacheKey) LoadMemo(memoPath, label string, f *os.File) ([]byte, bool) {
	st, err := statStamp(f)
	if err != nil {
		return nil, false
	}
	b, err := readRegular(memoPath)
	if err != nil || len(b) < memoSize+MACSize {
		return nil, false
	}
	enc, value, mac := b[:memoSize], b[memoSize:len(b)-MACSize], b[len(b)-MACSize:]
	if !bytes.Equal(enc, st.encode()) || !hmac.Equal(mac, k.stampMAC("memo\x00"+label, enc, value)) {
		return nil, false
	}
	return value, true
}

// SaveMemo stores value at memoPath under label for the file open in f,
// when its ctime is stampSettle old (see stamp); failing to is no error.
func (k *CacheKey) SaveMemo(memoPath, label string, f *os.File, value []byte) {
	st, err := statStamp(f)
	if err != nil || !st.settled() {
		return
	}
	enc := st.encode()
	b := append(append(enc, value...), k.stampMAC("memo\x00"+label, enc, value)...)
	_ = SaveImage(memoPath, b)
}
