package python

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/wasmeval/wasmeval/wasm"
	"github.com/wasmeval/wasmeval/wasm/fuel"
)

// diskCache is where a Runtime keeps what later processes reuse: the
// fuel-instrumented module and the template snapshot (wazero's compiled
// code is wasm.Compile's). Every file is authenticated under the cache key
// (wasm.CacheKey): a snapshot becomes every session's starting state, so a
// file anyone else could have written is rejected and made again. The
// zero value is no cache.
type diskCache struct {
	dir string
	key *wasm.CacheKey
}

// openCache returns cfg's cache, or none when there is no cache directory
// or the key cannot be read or made.
func openCache(cfg Config) diskCache {
	if cfg.CacheDir == "" {
		return diskCache{}
	}
	keyFile := cfg.KeyFile
	if keyFile == "" {
		keyFile = wasm.DefaultKeyFile(cfg.CacheDir)
	}
	key, err := wasm.LoadCacheKey(keyFile)
	if err != nil {
		return diskCache{}
	}
	return diskCache{dir: cfg.CacheDir, key: key}
}

// instrument runs the fuel pass over bin, or reads its output from the
// cache, where an earlier process left it: the pass takes ~40 ms. A
// missing, unreadable or unauthentic cache entry is made again.
func (c diskCache) instrument(bin []byte) ([]byte, error) {
	path, name := "", ""
	if c.dir != "" {
		name = "python-fuel-" + templateKey([]byte(fuelVersion), bin) + ".wasm"
		path = filepath.Join(c.dir, name)
		// The file is the module followed by its MAC.
		if mod, err := c.key.ReadFile(path, name); err == nil && len(mod) > 8 {
			wasm.TouchInUse(path) // in use, for pruneCache
			return mod, nil
		}
	}
	out, err := fuel.Instrument(bin, fuelOptions)
	if err != nil {
		return nil, fmt.Errorf("python: fuel: %w", err)
	}
	if path != "" && os.MkdirAll(c.dir, 0o755) == nil {
		_ = c.key.SaveFile(path, name, out) // atomic; failing to cache is no error
	}
	return out, nil
}

// templateKey names the template snapshot of a module, stdlib and prelude
// in the cache.
func templateKey(parts ...[]byte) string {
	h := sha256.New()
	h.Write([]byte("wasmeval python template v3\x00")) // v2: a fixed hash secret; v3: fixed clocks (makeTemplate)
	for _, p := range parts {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// templateMeta is saved next to a cached template image. MAC
// authenticates the image together with Size and Flags (templateExtra).
type templateMeta struct {
	Size  uint64    `json:"size"`
	Flags [4]uint32 `json:"flags"`
	// Heap is where the guest allocator's state lies in the image
	// (findHeapState's answer, which trimming writes by): found once, when
	// the template is made, instead of by a scan of the image in every
	// process (a sixth of a warm start's CPU). The MAC covers it too.
	Heap uint32 `json:"heap"`
	MAC  string `json:"mac"`
}

// heapExtra is the part of the MAC'd metadata that says where the heap is.
func heapExtra(h heapState) []byte {
	return binary.LittleEndian.AppendUint32([]byte("heap"), h.addr)
}

// templateExtra is the metadata the template's MAC covers besides the
// image.
func templateExtra(size uint64, flags [4]uint32) []byte {
	b := binary.LittleEndian.AppendUint64(nil, size)
	for _, f := range flags {
		b = binary.LittleEndian.AppendUint32(b, f)
	}
	return b
}

// loadTemplate maps a template saved by an earlier process: booting CPython
// is most of a cold start. A missing, partial, corrupt or unauthentic
// cache entry is ignored (the template is made again). The image is
// checked as it is copied into memory of this process (wasm.LoadImage), so
// the file cannot change under the sessions after the check.
func (r *Runtime) loadTemplate(c diskCache, key string) bool {
	if c.dir == "" {
		return false
	}
	name := "python-template-" + key
	base := filepath.Join(c.dir, name)
	raw, err := os.ReadFile(base + ".json")
	if err != nil {
		return false
	}
	var meta templateMeta
	if json.Unmarshal(raw, &meta) != nil || meta.Size == 0 || meta.Size > 1<<32 {
		return false
	}
	mac, err := hex.DecodeString(meta.MAC)
	if err != nil || len(mac) != wasm.MACSize {
		return false
	}
	heap := heapState{addr: meta.Heap}
	im, err := c.key.LoadImage(base+".mem", meta.Size, name, append(templateExtra(meta.Size, meta.Flags), heapExtra(heap)...), mac)
	if err != nil {
		return false
	}
	r.template, r.flags = wasm.SnapshotFromImage(im), meta.Flags
	r.heapOnce.Do(func() { r.heap = heap }) // found when it was made
	now := time.Now()                       // marks the entry as in use, for pruneCache
	_ = os.Chtimes(base+".json", now, now)
	return true
}

// cacheMaxAge is how long a cached template or module no process has used
// stays in the cache.
const cacheMaxAge = 14 * 24 * time.Hour

// cacheMaxBytes caps what the cache's templates, instrumented modules and
// start entries take on disk together. Each artifact, stdlib, prelude and
// package layer makes entries of its own (a template is some 20-50 MiB
// allocated), and the age limit alone let a machine that ran many of them
// in two weeks (a developer's, a CI runner's) keep gigabytes: past the cap
// the entries used least recently go first. A variable for tests.
var cacheMaxBytes int64 = 2 << 30

// pruneCache removes the cached templates and instrumented modules that no
// process has used for cacheMaxAge, then the least recently used ones past
// cacheMaxBytes. Processes touch what they use (wasm.TouchInUse), and one
// that has loaded an entry holds a copy: removing it cannot break them.
func pruneCache(dir string) {
	type entry struct {
		files []string
		used  time.Time
		bytes int64
	}
	entries := map[string]*entry{}
	for _, pat := range []string{"python-template-*", "python-fuel-*", "python-start-*"} {
		files, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, f := range files {
			st, err := os.Lstat(f)
			if err != nil || !st.Mode().IsRegular() {
				continue
			}
			// An entry is its files: NAME.json, NAME.mem and their stamps.
			name := filepath.Base(f)
			for _, ext := range []string{".stamp", ".json", ".mem", ".wasm", ".bin"} {
				name = strings.TrimSuffix(name, ext)
			}
			e := entries[name]
			if e == nil {
				e = &entry{}
				entries[name] = e
			}
			e.files = append(e.files, f)
			if st.ModTime().After(e.used) {
				e.used = st.ModTime()
			}
			e.bytes += allocatedBytes(st)
		}
	}
	list := make([]*entry, 0, len(entries))
	for _, e := range entries {
		if time.Since(e.used) > cacheMaxAge {
			removeAll(e.files)
			continue
		}
		list = append(list, e)
	}
	slices.SortFunc(list, func(a, b *entry) int { return b.used.Compare(a.used) })
	var total int64
	for i, e := range list {
		total += e.bytes
		if i > 0 && total > cacheMaxBytes { // the newest stays, whatever its size
			removeAll(e.files)
		}
	}
}

func removeAll(files []string) {
	for _, f := range files {
		os.Remove(f)
	}
}

// allocatedBytes is what a file takes on disk: templates are sparse.
func allocatedBytes(st os.FileInfo) int64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return sys.Blocks * 512
	}
	return st.Size()
}

// saveTemplate stores the template for later processes; failing to is not
// an error (the next process makes its own).
func (r *Runtime) saveTemplate(c diskCache, key string) {
	if c.dir == "" || os.MkdirAll(c.dir, 0o755) != nil {
		return
	}
	b, err := r.template.Bytes()
	if err != nil {
		return
	}
	name := "python-template-" + key
	base := filepath.Join(c.dir, name)
	if wasm.SaveSparseImage(base+".mem", b) != nil {
		return
	}
	size := uint64(len(b))
	r.heapOnce.Do(r.findHeap)
	mac := c.key.ImageMAC(name, b, append(templateExtra(size, r.flags), heapExtra(r.heap)...))
	meta, _ := json.Marshal(templateMeta{Size: size, Flags: r.flags, Heap: r.heap.addr, MAC: hex.EncodeToString(mac)})
	_ = wasm.SaveImage(base+".json", meta)
	pruneCache(c.dir)
}
