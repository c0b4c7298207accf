package wasm

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The on-disk caches (wazero's compiled code, the fuel-instrumented module,
// the template snapshot) are loaded by later processes: compiled code runs
// as native code, a snapshot becomes every session's starting state. A
// checksum only catches accidents; anyone who can write the cache could
// forge it. So every cache file is authenticated with HMAC-SHA256 under a
// per-user key that no session root may reach (sandbox refuses roots that
// overlap the cache directory or the key's folder), and a file without a
// valid MAC is treated as missing: rejected and made again.

// CacheKeySize is the size in bytes of a cache key.
const CacheKeySize = 32

// MACSize is the size in bytes of a cache file's MAC.
const MACSize = sha256.Size

// CacheKey authenticates the files wasmeval caches on disk.
type CacheKey struct {
	k []byte
}

// DefaultKeyFile is where the per-user cache key lives:
// os.UserCacheDir()/wasmeval/key, one key for every cache directory of the
// user, so a process configured with another cache directory cannot be
// used to forge this one's entries. Without a user cache directory it is
// cacheDir/key, and "" when cacheDir is empty too (no cache, no key).
func DefaultKeyFile(cacheDir string) string {
	if dir, err := os.UserCacheDir(); err == nil && dir != "" {
		return filepath.Join(dir, "wasmeval", "key")
	}
	if cacheDir == "" {
		return ""
	}
	return filepath.Join(cacheDir, "key")
}

// LoadCacheKey reads the key in path, creating it on first use (32 bytes
// from crypto/rand, mode 0600, its folder 0700 if new). A key file that is
// not a regular file of the right size, is readable or writable by others,
// or is owned by another user is replaced by a new key: entries made under
// the old one are then rejected and made again.
func LoadCacheKey(path string) (*CacheKey, error) {
	if path == "" {
		return nil, errors.New("wasm: cache key: no key file")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("wasm: cache key: %w", err)
	}
	for range 2 {
		k, err := readKey(path)
		if err == nil {
			return &CacheKey{k: k}, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			// Unusable: replace it (atomically; a concurrent process may
			// end up with the other key, which only costs a rebuild).
			return writeKey(path, true)
		}
		k2, err := writeKey(path, false)
		if err == nil {
			return k2, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		// Another process created it first: read theirs.
	}
	return nil, fmt.Errorf("wasm: cache key %s: cannot read or create it", path)
}

var errBadKey = errors.New("not a usable key")

func readKey(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, errBadKey // a symlink
		}
		return nil, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != CacheKeySize || st.Mode&0o077 != 0 || int(st.Uid) != os.Geteuid() {
		return nil, errBadKey
	}
	k := make([]byte, CacheKeySize)
	if _, err := io.ReadFull(f, k); err != nil {
		return nil, errBadKey
	}
	return k, nil
}

// writeKey makes a new key in a temporary file and moves it to path: with
// replace, over whatever is there; without, only if path does not exist
// (a hard link fails with fs.ErrExist), so that a reader never sees a
// partly written key.
func writeKey(path string, replace bool) (*CacheKey, error) {
	k := make([]byte, CacheKeySize)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("wasm: cache key: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".key-*.tmp") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("wasm: cache key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(k); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("wasm: cache key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("wasm: cache key: %w", err)
	}
	if replace {
		err = os.Rename(tmp.Name(), path)
	} else {
		err = os.Link(tmp.Name(), path)
	}
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		return nil, fmt.Errorf("wasm: cache key: %w", err)
	}
	return &CacheKey{k: k}, nil
}

// NewCacheKey returns a key of the given bytes, for tests.
func NewCacheKey(k []byte) *CacheKey {
	return &CacheKey{k: bytes.Clone(k)}
}

// newMAC starts the MAC of a cache file: label says what the file is for
// and binds its name, so an authentic file moved under another name (or
// used for another purpose) is rejected.
func (k *CacheKey) newMAC(label string) hash.Hash {
	h := hmac.New(sha256.New, k.k)
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(label)))
	h.Write([]byte("wasmeval cache v1\x00"))
	h.Write(n[:])
	h.Write([]byte(label))
	return h
}

// MAC returns the MAC of data under label.
func (k *CacheKey) MAC(label string, data []byte) []byte {
	h := k.newMAC(label)
	h.Write(data)
	return h.Sum(nil)
}

// SaveFile writes data followed by its MAC under label to path,
// atomically. The label should name the file (its base name, say).
func (k *CacheKey) SaveFile(path, label string, data []byte) error {
	return SaveImage(path, append(bytes.Clone(data), k.MAC(label, data)...))
}

// ReadFile reads a file written by SaveFile and returns its data, or an
// error when the file is missing, too short, or its MAC is not right. A
// file whose stamp shows it unchanged since a check is not hashed again
// (see cachestamp.go).
func (k *CacheKey) ReadFile(path, label string) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := statStamp(f)
	if err != nil {
		return nil, err
	}
	b, err := readAll(f, path, st.size)
	if err != nil {
		return nil, err
	}
	if len(b) < MACSize {
		return nil, fmt.Errorf("wasm: cache file %s: too short", path)
	}
	data, mac := b[:len(b)-MACSize], b[len(b)-MACSize:]
	if k.stamped(path, label, st, nil) {
		if after, err := statStamp(f); err == nil && after == st {
			return data, nil
		}
	}
	macChecks.Add(1)
	if !hmac.Equal(mac, k.MAC(label, data)) {
		return nil, fmt.Errorf("wasm: cache file %s: not authentic", path)
	}
	k.stamp(path, label, f, st, nil)
	return data, nil
}

// openRegular opens a regular file without following a symlink at path or
// blocking on a fifo.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("wasm: cache file %s: not a regular file", path)
	}
	return f, nil
}

// readAll reads the size bytes of f: into a buffer of the file's size, as
// io.ReadAll's doubling cleared and copied a 22 MiB entry several times
// over.
func readAll(f *os.File, path string, size uint64) ([]byte, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("wasm: cache file %s: %w", path, err)
	}
	return b, nil
}

// readRegular reads a regular file without following a symlink at path or
// blocking on a fifo.
func readRegular(path string) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return readAll(f, path, uint64(st.Size()))
}

// LoadImage is OpenImage for an authenticated image: it copies the file at
// path (size bytes) into a memory file of this process while computing its
// MAC under label, with extra bytes (the image's metadata) appended, and
// returns the copy when the MAC equals mac. Sessions then map the private
// copy, which nobody can change after it was checked; a mapping of the
// cache file itself would show later writes to it. A file whose stamp
// shows it unchanged since a check against the same mac is copied
// without hashing (see cachestamp.go).
func (k *CacheKey) LoadImage(path string, size uint64, label string, extra []byte, mac []byte) (*Image, error) {
	src, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || uint64(st.Size()) != size {
		return nil, fmt.Errorf("wasm: image %s: not a regular file of %d bytes", path, size)
	}
	stamp, err := statStamp(src)
	if err != nil {
		return nil, err
	}
	bound := append(bytes.Clone(mac), extra...)
	fd, err := unix.MemfdCreate("wasmeval-image", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("wasm: image: memfd_create: %w", err)
	}
	dst := os.NewFile(uintptr(fd), "wasmeval-image")
	if k.stamped(path, label, stamp, bound) {
		// Unchanged since checked: copied unhashed.
		err := copyImage(dst, src, size, nil)
		if after, serr := statStamp(src); err == nil && serr == nil && after == stamp {
			return &Image{f: dst, size: size}, nil
		}
		// Changed while copied, or the copy failed: check it all.
		if err := dst.Truncate(0); err != nil {
			dst.Close()
			return nil, fmt.Errorf("wasm: image %s: %w", path, err)
		}
	}
	macChecks.Add(1)
	h := k.newMAC(label)
	if err := copyImage(dst, src, size, h); err != nil {
		dst.Close()
		return nil, fmt.Errorf("wasm: image %s: %w", path, err)
	}
	h.Write(extra)
	if !hmac.Equal(h.Sum(nil), mac) {
		dst.Close()
		return nil, fmt.Errorf("wasm: image %s: not authentic", path)
	}
	k.stamp(path, label, src, stamp, bound)
	return &Image{f: dst, size: size}, nil
}

// ImageMAC is the MAC LoadImage expects for an image of b with extra.
func (k *CacheKey) ImageMAC(label string, b, extra []byte) []byte {
	h := k.newMAC(label)
	h.Write(b)
	h.Write(extra)
	return h.Sum(nil)
}

// wazero writes its compiled-code cache itself, one file per module named
// by 64 hex digits, in a folder per wazero version under the cache
// directory. wasmeval keeps a sidecar "<name>.mac" next to each entry, with
// the entry's MAC; wazero never lists the folder, so it ignores them.
const macSuffix = ".mac"

// isWazeroEntry reports whether name is a wazero cache entry's name.
func isWazeroEntry(name string) bool {
	if len(name) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(name)
	return err == nil
}

// wazeroLabel is the MAC label of a wazero entry: its folder (the wazero
// version and platform) and its name.
func wazeroLabel(dir, name string) string {
	return "wazero " + filepath.Base(dir) + "/" + name
}

// verifyWazeroCache checks every entry under root (wazero's cache folder
// of one module, inside top, the folder of all modules' caches) against
// its sidecar and deletes the entries without a valid one, with
// their sidecars, and sidecars without an entry. It returns the entries
// that passed, so sealWazeroCache knows which are new. Anything else in
// the folders (wazero's temporary files) is left alone.
func verifyWazeroCache(k *CacheKey, top, root string) map[string]bool {
	ok := map[string]bool{}
	for _, d := range []string{top, root} {
		if st, err := os.Lstat(d); err == nil && !st.IsDir() {
			// wazero would follow a symlink here to a folder of anyone's.
			os.Remove(d)
			return ok
		}
	}
	dirs, err := os.ReadDir(root)
	if err != nil {
		return ok
	}
	for _, d := range dirs {
		dir := filepath.Join(root, d.Name())
		if !d.IsDir() {
			// wazero makes only folders here; a symlink would lead it
			// to entries verified nowhere.
			os.RemoveAll(dir)
			continue
		}
		files, err := os.ReadDir(dir)
		if err != nil {
			// A folder we cannot read cannot be trusted either.
			os.RemoveAll(dir)
			continue
		}
		for _, f := range files {
			name := f.Name()
			path := filepath.Join(dir, name)
			switch {
			case isWazeroEntry(name):
				if verifyWazeroEntry(k, dir, name) {
					ok[path] = true
				} else {
					os.RemoveAll(path)
					os.Remove(path + macSuffix)
					os.Remove(path + stampSuffix)
				}
			case strings.HasSuffix(name, macSuffix):
				if _, err := os.Lstat(strings.TrimSuffix(path, macSuffix)); err != nil {
					os.Remove(path)
				}
			case strings.HasSuffix(name, stampSuffix):
				if _, err := os.Lstat(strings.TrimSuffix(path, stampSuffix)); err != nil {
					os.Remove(path)
				}
			}
		}
	}
	return ok
}

func verifyWazeroEntry(k *CacheKey, dir, name string) bool {
	mac, err := readRegular(filepath.Join(dir, name+macSuffix))
	if err != nil || len(mac) != MACSize {
		return false
	}
	path := filepath.Join(dir, name)
	f, err := openRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := statStamp(f)
	if err != nil {
		return false
	}
	label := wazeroLabel(dir, name)
	if k.stamped(path, label, st, mac) {
		return true // unchanged since its MAC was checked: not read again
	}
	macChecks.Add(1)
	b, err := readAll(f, path, st.size)
	if err != nil || !hmac.Equal(mac, k.MAC(label, b)) {
		return false
	}
	k.stamp(path, label, f, st, mac)
	return true
}

// sealWazeroCache writes the sidecar of every entry under root that
// verifyWazeroCache did not pass: the entries wazero has just written.
func sealWazeroCache(k *CacheKey, root string, verified map[string]bool) {
	dirs, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		dir := filepath.Join(root, d.Name())
		files, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, f := range files {
			name := f.Name()
			path := filepath.Join(dir, name)
			if !isWazeroEntry(name) || verified[path] {
				continue
			}
			b, err := readRegular(path)
			if err != nil {
				continue
			}
			_ = SaveImage(path+macSuffix, k.MAC(wazeroLabel(dir, name), b))
		}
	}
}

// wazeroModuleDir is the folder of a module's compiled code in wazero's
// cache under dir: named by the module's hash (digest), so a start checks
// the entries of its own module only.
func wazeroModuleDir(dir string, digest [32]byte) string {
	return filepath.Join(dir, "wazero", hex.EncodeToString(digest[:16]))
}

// pruneWazeroCache marks the module folder in use as used now and removes
// the folders of top that no process has used for cacheMaxAge, and what
// is not a module folder (the one-folder layout of earlier versions,
// whose entries no start reads any more).
func pruneWazeroCache(top, inUse string) {
	now := time.Now()
	_ = os.Chtimes(inUse, now, now)
	entries, err := os.ReadDir(top)
	if err != nil {
		return
	}
	for _, e := range entries {
		path := filepath.Join(top, e.Name())
		if path == inUse {
			continue
		}
		if !e.IsDir() || !isModuleDirName(e.Name()) {
			os.RemoveAll(path)
			continue
		}
		if st, err := os.Stat(path); err == nil && now.Sub(st.ModTime()) > cacheMaxAge {
			os.RemoveAll(path)
		}
	}
}

// isModuleDirName reports whether name is a wazeroModuleDir's name: 32
// lower-case hex digits.
func isModuleDirName(name string) bool {
	if len(name) != 32 {
		return false
	}
	for _, c := range name {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// cacheMaxAge is how long a module folder of wazero's cache that no process
// has used stays there: each artifact leaves about 20 MiB.
const cacheMaxAge = 14 * 24 * time.Hour
