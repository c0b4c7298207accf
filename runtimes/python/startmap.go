package python

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/wasmeval/wasmeval/wasm"
)

// A warm start reads its start entry (python-start-*.bin, ~18 MiB: the
// module, the stdlib zip, the data segments) to take a few of its pages:
// wasmtime with a cached compiled module never reads the module, a
// template makes the data segments unneeded, and a cell reads a few
// members of the stdlib if any. Reading it whole into the heap (a copy,
// and a page fault for each of its 4,600 fresh pages) was a fifth of a
// warm print(1) process's CPU on wasmtime (issue 15). So an entry that has
// passed its MAC check once is mapped by later processes instead, and its
// pages are read as they are used.
//
// Why that keeps the MAC's guarantee: a memo (wasm.CacheKey.LoadMemo)
// says the very file (device, inode, size, ctime, mtime) passed the check,
// so it has not changed since. The mapping then shows the file's content
// as later writes change it, which read(2) into the heap did not: so an
// entry is mapped only when no one but its owner, this user, may write it
// (and root, who may anything). Another writer of the cache folder can
// only replace the file, a new inode that a mapping of the old one does
// not see; this user could also read the key and forge any entry.

// startMemoLabel names the memo that an entry passed its MAC check.
const startMemoLabel = "python start entry checked"

// startMapped counts the entries mapped rather than read, for tests.
var startMapped atomic.Int64

// startIdent is a start entry's file identity, what its memo binds.
type startIdent struct {
	dev, ino, size uint64
	ctime, mtime   unix.Timespec
}

func identOf(st *unix.Stat_t) startIdent {
	return startIdent{uint64(st.Dev), st.Ino, uint64(st.Size), st.Ctim, st.Mtim}
}

// startMaps are the entries this process mapped, by identity: a second
// Runtime of the same cache (a package layer, tests) maps none again.
// Mappings are never undone: the Runtimes' module, stdlib and data
// segments are slices of them.
var startMaps struct {
	sync.Mutex
	m map[startIdent][]byte
}

// readStart returns the data of the start entry at path (written by
// wasm.CacheKey.SaveFile under label name): mapped when a memo says it
// passed its MAC check and only its owner may write it, else read whole
// and checked, and then memoed for the next process (when its ctime is
// old enough; see wasm.CacheKey.SaveMemo).
func readStart(k *wasm.CacheKey, path, name string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size < wasm.MACSize {
		return nil, fmt.Errorf("python: start entry %s: not a regular file of its size", path)
	}
	memo := path + ".checked"
	ownerOnly := int(st.Uid) == os.Getuid() && st.Mode&0o022 == 0
	if ownerOnly {
		if _, ok := k.LoadMemo(memo, startMemoLabel, f); ok {
			if b, err := mapStart(f, &st); err == nil {
				startMapped.Add(1)
				return b[:len(b)-wasm.MACSize], nil
			}
		}
	}
	b := make([]byte, st.Size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("python: start entry %s: %w", path, err)
	}
	data, mac := b[:len(b)-wasm.MACSize], b[len(b)-wasm.MACSize:]
	if !hmac.Equal(mac, k.MAC(name, data)) {
		return nil, errNotAuthentic
	}
	if ownerOnly && unchanged(f, &st) {
		k.SaveMemo(memo, startMemoLabel, f, nil)
		if !unchanged(f, &st) { // changed while the memo was taken
			os.Remove(memo)
		}
	}
	return data, nil
}

var errNotAuthentic = errors.New("python: start entry not authentic")

// unchanged reports whether f still has the identity st.
func unchanged(f *os.File, st *unix.Stat_t) bool {
	var now unix.Stat_t
	return unix.Fstat(int(f.Fd()), &now) == nil && identOf(&now) == identOf(st)
}

// mapStart maps f (of identity st), or returns this process's mapping of
// it. The mapping is private and writable: a consumer that wrote into a
// part would write into its own copy of the page, never the file, and
// never fault.
func mapStart(f *os.File, st *unix.Stat_t) ([]byte, error) {
	id := identOf(st)
	startMaps.Lock()
	defer startMaps.Unlock()
	if b, ok := startMaps.m[id]; ok {
		return b, nil
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(st.Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	if !unchanged(f, st) { // changed since the memo was read
		unix.Munmap(b)
		return nil, errors.New("python: start entry changed while mapped")
	}
	if startMaps.m == nil {
		startMaps.m = map[startIdent][]byte{}
	}
	startMaps.m[id] = b
	return b, nil
}
