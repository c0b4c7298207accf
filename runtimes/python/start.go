package python

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wasmeval/wasmeval/prelude"
	"github.com/wasmeval/wasmeval/wasm"
	artifact "github.com/wasmeval/wasmeval/wasm/python"
)

// artifactFiles are what New makes a Runtime of.
type artifactFiles struct {
	bin    []byte         // the module as compiled: instrumented (unless NoFuel), without its data segments
	data   []wasm.Segment // the data segments, which boot applies
	stdlib []byte         // the stdlib zip
	pre    []byte         // the prelude zip
	key    string         // the template's key, before any package layer
	digest [32]byte       // bin's SHA-256, which names its compiled code in the cache
}

// loadArtifact returns the artifact's files. Making them takes most of a
// warm process's start: decompressing the embedded module and stdlib
// (~100 ms of CPU), reading the instrumented module, hashing them all for
// the template's key. So a process leaves them, made, in the cache
// ("python-start-*.bin", under the cache key like every cache file), named
// by the embedded artifact's hash (artifact.Sum), the prelude and the fuel
// pass, and the next process reads that one file instead. A missing or
// unauthentic entry is made again.
func loadArtifact(cfg Config, c diskCache) (artifactFiles, error) {
	pre, err := prelude.PythonZip()
	if err != nil {
		return artifactFiles{}, fmt.Errorf("python: prelude: %w", err)
	}
	path, name := "", ""
	if sum := c.artifactSum(); c.dir != "" && sum != "" {
		fuelTag := fuelVersion
		if cfg.NoFuel {
			fuelTag = "no fuel"
		}
		name = "python-start-" + templateKey([]byte(startVersion), []byte(sum), pre, []byte(fuelTag)) + ".bin"
		path = filepath.Join(c.dir, name)
		if b, err := readStart(c.key, path, name); err == nil { // startmap.go
			if a, err := decodeStart(b); err == nil {
				a.pre = pre
				wasm.TouchInUse(path) // for pruneCache
				return a, nil
			}
		}
	}
	bin, err := artifact.Wasm()
	if err != nil {
		return artifactFiles{}, err
	}
	stdlib, err := artifact.Stdlib()
	if err != nil {
		return artifactFiles{}, err
	}
	if !cfg.NoFuel {
		if bin, err = c.instrument(bin); err != nil {
			return artifactFiles{}, err
		}
	}
	// The template depends on the whole module, data segments included.
	a := artifactFiles{stdlib: stdlib, pre: pre, key: templateKey(bin, stdlib, pre)}
	if a.bin, a.data, err = wasm.StripData(bin); err != nil {
		return artifactFiles{}, fmt.Errorf("python: %w", err)
	}
	a.digest = sha256.Sum256(a.bin)
	if path != "" {
		_ = c.key.SaveFile(path, name, encodeStart(a)) // atomic; failing to cache is no error
	}
	return a, nil
}

// startVersion names the format of a start entry and how its parts are
// made (StripData's): change it with them.
const startVersion = "wasmeval python start v2"

// encodeStart lays a out as a start entry: startVersion and a newline,
// the lengths of the key, module and stdlib and the number of segments
// (uint64 little-endian), the module's digest, then those, each segment
// as its offset and length (uint32) and its bytes.
func encodeStart(a artifactFiles) []byte {
	n := len(startVersion) + 1 + 32 + 32 + len(a.key) + len(a.bin) + len(a.stdlib)
	for _, s := range a.data {
		n += 8 + len(s.Data)
	}
	b := make([]byte, 0, n)
	b = append(b, startVersion+"\n"...)
	for _, v := range []int{len(a.key), len(a.bin), len(a.stdlib), len(a.data)} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	b = append(b, a.digest[:]...)
	b = append(b, a.key...)
	b = append(b, a.bin...)
	b = append(b, a.stdlib...)
	for _, s := range a.data {
		b = binary.LittleEndian.AppendUint32(b, s.Offset)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s.Data)))
		b = append(b, s.Data...)
	}
	return b
}

var errStart = errors.New("python: not a start entry of this version")

// decodeStart reads an entry encodeStart made; its parts share b.
func decodeStart(b []byte) (artifactFiles, error) {
	head := []byte(startVersion + "\n")
	if !bytes.HasPrefix(b, head) || len(b) < len(head)+32+32 {
		return artifactFiles{}, errStart
	}
	p := len(head)
	var n [4]uint64
	for i := range n {
		n[i] = binary.LittleEndian.Uint64(b[p:])
		p += 8
	}
	var digest [32]byte
	p += copy(digest[:], b[p:])
	take := func(size uint64) ([]byte, bool) {
		if size > uint64(len(b)-p) {
			return nil, false
		}
		s := b[p : p+int(size) : p+int(size)]
		p += int(size)
		return s, true
	}
	key, ok1 := take(n[0])
	bin, ok2 := take(n[1])
	stdlib, ok3 := take(n[2])
	if !ok1 || !ok2 || !ok3 || n[3] > uint64(len(b)-p)/8 {
		return artifactFiles{}, errStart
	}
	a := artifactFiles{key: string(key), bin: bin, stdlib: stdlib, digest: digest, data: make([]wasm.Segment, 0, n[3])}
	for range n[3] {
		h, ok := take(8)
		if !ok {
			return artifactFiles{}, errStart
		}
		d, ok := take(uint64(binary.LittleEndian.Uint32(h[4:])))
		if !ok {
			return artifactFiles{}, errStart
		}
		a.data = append(a.data, wasm.Segment{Offset: binary.LittleEndian.Uint32(h), Data: d})
	}
	if p != len(b) || len(a.bin) < 8 {
		return artifactFiles{}, errStart
	}
	return a, nil
}

// artifactSum is artifact.Sum(), the hash of the artifact this executable
// embeds (5 MiB hashed, a tenth of a warm start's CPU), remembered in the
// cache for the executable file as long as it is unchanged (wasm.LoadMemo).
func (c diskCache) artifactSum() string {
	if c.dir == "" {
		return artifact.Sum()
	}
	exe, err := os.Open("/proc/self/exe")
	if err != nil {
		return artifact.Sum()
	}
	defer exe.Close()
	const label = "python artifact sum"
	memo := filepath.Join(c.dir, "python-start-exe.memo")
	if v, ok := c.key.LoadMemo(memo, label, exe); ok {
		return string(v)
	}
	sum := artifact.Sum()
	if sum != "" {
		c.key.SaveMemo(memo, label, exe, []byte(sum))
	}
	return sum
}
