package python

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/wasm"
)

// A persisted Python state is an instance's memory as the pages its guest
// wrote over the template, in compressed frames kept apart from the index
// that says which pages each frame holds:
//
//	index: "wepy" | version u32 | memory size u32 | frame count u32 |
//	       per frame: codec u32 | page count u32 | page entries u32... | length u32
//
// (little endian); frame i's bytes are the i-th Frame, compressed with
// zstd (codec 0) or S2 (codec 1, klauspost/compress/s2). A frame holds its
// pages' bytes in its entries' order, 4 KiB each (the last page of the
// memory cut at the memory size). An entry is a page index, with
// stalePage set when the page's bytes in the frame are out of date (a
// later frame holds the page, or the page is no longer written):
// restoring skips those bytes. Each live page is in one frame; entries
// are ascending by page index.
//
// A frame never changes once made: a persist after a light cell makes one
// new frame of the pages that changed since the last persist (some tens),
// marks their old copies stale in the index, and hands the other frames
// back as they were, so a store writes only the new frame and the index
// (Frame.Sum names a frame by content). A frame at most half live is
// compressed again whole (compaction), so stale bytes stay under the live
// ones. A small frame (a light eval's changes, at most s2Pages pages) is
// S2, which compresses such pages with a quarter of the CPU time of zstd's
// fastest level (measured on a light session's changed pages: 0.25 ms
// against 1.1 ms for 136 KiB, for 28% more bytes); larger ones (a first
// save, compactions, the state at rest) are zstd. A state is only
// meaningful over the very template it was written over, which StateKey
// names.
const (
	stateMagic   = "wepy"
	stateVersion = 4
	pageBytes    = 4096
	stalePage    = 1 << 31
	// maxFramePages caps a frame at 16 MiB of pages, so that a large
	// session's state is a row or a file of bounded size per frame.
	maxFramePages = 4096
	// s2Pages is the most pages a frame compressed with S2 holds.
	s2Pages   = 128
	codecZstd = 0
	codecS2   = 1
)

// Frame is one zstd frame of a persisted state, named by the SHA-256 of
// its bytes. Its Data never changes once PersistState returned it.
type Frame struct {
	Sum  [32]byte
	Data []byte
}

// StateCache keeps what PersistState compressed for an instance, so the
// next PersistState compresses only the pages that changed. It holds
// about the compressed state's size (and twice that at most); a session
// may drop it when idle (a new StateCache works, just slower once). Not
// safe for concurrent use.
type StateCache struct {
	seed    maphash.Seed
	sums    map[uint32]pageSum // live page -> maphash of its bytes
	where   map[uint32]*frame  // live page -> the frame holding it
	frames  []*frame
	gen     uint64 // counts persists
	scratch []byte
	// since names the persist the checkpoint's marks count from, when
	// this cache made it (persisttrack.go); tracked says the last persist
	// took the changed pages from the marks.
	since   uint64
	tracked bool
}

// frame is one compressed frame of a StateCache.
type frame struct {
	pages []uint32 // entries, stalePage set on stale ones
	live  int
	data  []byte // compressed with codec
	codec uint32
	sum   [32]byte
}

var (
	stateEncOnce  sync.Once
	stateEnc      *zstd.Encoder
	stateDec      *zstd.Decoder
	stateCodecErr error
)

// stateCodec returns the shared zstd encoder and decoder (both safe for
// concurrent EncodeAll/DecodeAll).
func stateCodec() (*zstd.Encoder, *zstd.Decoder, error) {
	stateEncOnce.Do(func() {
		// The fastest level, without zstd's own checksum (a Frame's Sum
		// covers it) or entropy coding of literals (measured on a light
		// session's changed pages: 20% less CPU for 12% more bytes): the
		// persist runs after every eval.
		stateEnc, stateCodecErr = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderCRC(false), zstd.WithNoEntropyCompression(true))
		if stateCodecErr != nil {
			return
		}
		// A frame holds at most a wasm32 memory's pages.
		stateDec, stateCodecErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(4<<30+1<<20))
	})
	return stateEnc, stateDec, stateCodecErr
}

var stateKeys sync.Map // *Runtime -> string (or error)

// StateKey names the template a persisted state is written over: a hash
// of the template key (CPython build, stdlib, prelude, package layer) and
// of the template's memory itself, so that a state is restored only over
// the bytes it was taken from. It is computed once per Runtime (a hash of
// the template, some tens of milliseconds).
func (r *Runtime) StateKey() (string, error) {
	if v, ok := stateKeys.Load(r); ok {
		if err, bad := v.(error); bad {
			return "", err
		}
		return v.(string), nil
	}
	key, err := r.stateKey()
	if err != nil {
		stateKeys.Store(r, err)
		return "", err
	}
	stateKeys.Store(r, key)
	return key, nil
}

func (r *Runtime) stateKey() (string, error) {
	if r.template == nil {
		return "", errors.New("python: state key: the runtime has no template")
	}
	b, release, err := r.template.View()
	if err != nil {
		return "", fmt.Errorf("python: state key: %w", err)
	}
	defer release()
	h := sha256.New()
	h.Write([]byte("wasmeval python state v1\x00"))
	tk := r.baseKey
	if r.pkgs != nil {
		tk = templateKey([]byte(tk), r.pkgs.key)
	}
	h.Write([]byte(tk))
	h.Write([]byte{0})
	h.Write(b)
	return "py-" + hex.EncodeToString(h.Sum(nil)[:20]), nil
}

// PersistState returns the instance's state as the pages its guest wrote
// over the template: an index and the compressed frames it refers to (see
// RestoreInstance). The instance must be at rest (no cell running). cache,
// when not nil, carries the frames compressed last time and is updated:
// only the pages changed since then are compressed, in new frames; the
// other frames are returned as they were (the same slices).
func (in *Instance) PersistState(ctx context.Context, cache *StateCache) (index []byte, frames []Frame, err error) {
	in.waitCheckpoint()
	if !in.live() {
		return nil, nil, fmt.Errorf("python: persist: %w", errExited)
	}
	enc, _, err := stateCodec()
	if err != nil {
		return nil, nil, fmt.Errorf("python: persist: %w", err)
	}
	if cache == nil {
		cache = &StateCache{}
	}
	cache.init()
	mem := in.mod.Memory()
	size := mem.Size()
	all, ok := mem.Read(0, size)
	if !ok {
		return nil, nil, fmt.Errorf("python: persist: cannot read %d bytes of memory", size)
	}
	page := func(p uint32) []byte { off := p * pageBytes; return all[off:min(off+pageBytes, size)] }
	// Pages new or changed since the last persist go into a new frame;
	// their old copies, and pages no longer written, go stale. Which
	// pages changed is known from the checkpoint's write tracking when it
	// followed the memory since this cache's last persist
	// (persisttrack.go); else every written page is hashed and compared.
	var fresh []uint32
	cache.gen++
	changed, since := in.ckpt.changes(in)
	cache.tracked = since != 0 && since == cache.since
	defer func() { cache.since = in.ckpt.restartChanges(in) }()
	if cache.tracked {
		for _, p := range changed {
			old, had := cache.sums[p]
			if !in.ckpt.holds(p) || p >= (size+pageBytes-1)/pageBytes {
				if had { // given back: the template's again
					delete(cache.sums, p)
					cache.stale(p)
				}
				continue
			}
			sum := maphash.Bytes(cache.seed, page(p))
			if had && old.sum == sum {
				continue // changed and changed back
			}
			cache.sums[p] = pageSum{sum, cache.gen}
			fresh = append(fresh, p)
			cache.stale(p)
		}
		return cache.compress(enc, fresh, page, size), cache.frameList(), nil
	}
	dirty, err := in.mem.DirtyPages(size)
	if err != nil {
		return nil, nil, fmt.Errorf("python: persist: %w", err)
	}
	for _, p := range dirty {
		sum := maphash.Bytes(cache.seed, page(p))
		if old, ok := cache.sums[p]; ok && old.sum == sum {
			cache.sums[p] = pageSum{sum, cache.gen}
			continue
		}
		cache.sums[p] = pageSum{sum, cache.gen}
		fresh = append(fresh, p)
		cache.stale(p)
	}
	if len(cache.sums) > len(dirty) {
		for p, ps := range cache.sums {
			if ps.gen != cache.gen {
				delete(cache.sums, p)
				cache.stale(p)
			}
		}
	}
	return cache.compress(enc, fresh, page, size), cache.frameList(), nil
}

// compress makes the new frames of a persist: the fresh pages, and the
// live pages of the frames at most half live. It returns the index.
func (cache *StateCache) compress(enc *zstd.Encoder, fresh []uint32, page func(uint32) []byte, size uint32) []byte {
	// Frames at most half live are compressed again, their live pages
	// with the fresh ones, so stale bytes stay under the live ones.
	kept := cache.frames[:0]
	for _, f := range cache.frames {
		if 2*f.live > len(f.pages) {
			kept = append(kept, f)
			continue
		}
		for _, p := range f.pages {
			if p&stalePage == 0 {
				fresh = append(fresh, p)
			}
		}
	}
	clear(cache.frames[len(kept):])
	cache.frames = kept
	slices.Sort(fresh)
	for len(fresh) > 0 {
		n := min(len(fresh), maxFramePages)
		pages := fresh[:n:n]
		fresh = fresh[n:]
		raw := cache.scratch[:0]
		for _, p := range pages {
			raw = append(raw, page(p)...)
		}
		f := &frame{pages: pages, live: len(pages)}
		if len(pages) <= s2Pages {
			f.codec, f.data = codecS2, s2.Encode(nil, raw)
		} else {
			f.codec, f.data = codecZstd, enc.EncodeAll(raw, nil)
		}
		f.sum = sha256.Sum256(f.data)
		if cap(raw) <= 4<<20 {
			cache.scratch = raw // reused, unless one large persist made it large
		}
		for _, p := range pages {
			cache.where[p] = f
		}
		cache.frames = append(cache.frames, f)
	}
	return cache.index(size)
}

// pageSum is a live page's hash, and the persist that last saw it
// written.
type pageSum struct {
	sum uint64
	gen uint64
}

func (c *StateCache) init() {
	if c.sums == nil {
		c.seed, c.sums, c.where, c.frames = maphash.MakeSeed(), map[uint32]pageSum{}, map[uint32]*frame{}, nil
	}
}

// index lays out the cache's index for a memory of size bytes.
func (c *StateCache) index(size uint32) []byte {
	n := 16
	for _, f := range c.frames {
		n += 12 + 4*len(f.pages)
	}
	out := make([]byte, 16, n)
	copy(out, stateMagic)
	binary.LittleEndian.PutUint32(out[4:], stateVersion)
	binary.LittleEndian.PutUint32(out[8:], size)
	binary.LittleEndian.PutUint32(out[12:], uint32(len(c.frames)))
	for _, f := range c.frames {
		out = binary.LittleEndian.AppendUint32(out, f.codec)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(f.pages)))
		for _, p := range f.pages {
			out = binary.LittleEndian.AppendUint32(out, p)
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(len(f.data)))
	}
	return out
}

func (c *StateCache) frameList() []Frame {
	fs := make([]Frame, len(c.frames))
	for i, f := range c.frames {
		fs[i] = Frame{Sum: f.sum, Data: f.data}
	}
	return fs
}

// stale marks page p's copy in its frame out of date.
func (c *StateCache) stale(p uint32) {
	f := c.where[p]
	if f == nil {
		return
	}
	delete(c.where, p)
	i, ok := slices.BinarySearchFunc(f.pages, p, func(e, p uint32) int { return cmp.Compare(e&^stalePage, p) })
	if ok && f.pages[i]&stalePage == 0 {
		f.pages[i] |= stalePage
		f.live--
	}
}

// AtRest waits until the work the instance does between cells (giving
// freed pages back, the checkpoint) is done, as PersistState does first;
// for callers that time PersistState alone.
func (in *Instance) AtRest() { in.waitCheckpoint() }

// RestoreInstance starts an instance for opts' session from a state that
// PersistState wrote over this runtime's template (the caller checks
// StateKey): the template mapped, the state's pages written over it, then
// the instance set up for the session as a new one is. The frames' Sums
// are not checked again here: a store checks them as it loads them
// (hashing a light session's frames costs about a millisecond); a frame
// that does not decompress, or not to its pages' size, is refused. cache,
// when not nil, is made to
// hold the state as restored (its frames, its pages' hashes), so that the
// next PersistState of the instance compresses only what changed since,
// as it would on the instance the state was taken from; the frames' Data
// must not change afterwards.
func (r *Runtime) RestoreInstance(ctx context.Context, opts runtimes.InstanceOptions, index []byte, frames []Frame, cache *StateCache) (runtimes.Instance, error) {
	_, dec, err := stateCodec()
	if err != nil {
		return nil, fmt.Errorf("python: restore: %w", err)
	}
	size, parsed, err := parseState(index, frames)
	if err != nil {
		return nil, err
	}
	limit := int64(DefaultMemoryLimit)
	if opts.MemoryLimitBytes > 0 {
		limit = opts.MemoryLimitBytes
	}
	if int64(size) > limit {
		return nil, fmt.Errorf("python: restore: the persisted state holds %d MiB of memory, over the session's limit of %d MiB; raise the limit (--memory-limit)", size>>20, limit>>20)
	}
	var fresh StateCache
	if cache != nil {
		fresh.init()
		fresh.gen = 1
	}
	inst := &Instance{r: r, opts: opts}
	if err := r.instantiate(ctx, inst, wasm.MemoryOptions{Image: r.template.Image()}); err != nil {
		return nil, fmt.Errorf("python: restore: %w", err)
	}
	mem := inst.mod.Memory()
	if cur := mem.Size(); cur < size {
		if _, ok := mem.Grow((size - cur + 65535) / 65536); !ok {
			inst.close(ctx)
			return nil, fmt.Errorf("python: restore: cannot grow memory to %d bytes", size)
		}
	}
	all, ok := mem.Read(0, size)
	if !ok {
		inst.close(ctx)
		return nil, fmt.Errorf("python: restore: cannot map %d bytes of memory", size)
	}
	populate(all, parsed)
	raw := fresh.scratch
	for i := range parsed {
		f := &parsed[i]
		if f.codec == codecS2 {
			var n int
			if n, err = s2.DecodedLen(f.data); err == nil {
				raw, err = s2.Decode(slices.Grow(raw[:0], n)[:n], f.data)
			}
		} else {
			raw, err = dec.DecodeAll(f.data, raw[:0])
		}
		if err != nil {
			inst.close(ctx)
			return nil, fmt.Errorf("python: restore: frame %d does not decompress: %w", i, err)
		}
		off := uint32(0)
		for _, e := range f.pages {
			p := e &^ stalePage
			n := min(pageBytes, size-p*pageBytes)
			if uint32(len(raw)) < off+n {
				inst.close(ctx)
				return nil, fmt.Errorf("python: restore: the persisted state is malformed: frame %d holds %d bytes, fewer than its pages", i, len(raw))
			}
			if e&stalePage == 0 {
				b := raw[off : off+n]
				copy(all[p*pageBytes:], b)
				if cache != nil {
					fresh.sums[p] = pageSum{maphash.Bytes(fresh.seed, b), 1}
				}
			}
			off += n
		}
		if off != uint32(len(raw)) {
			inst.close(ctx)
			return nil, fmt.Errorf("python: restore: the persisted state is malformed: frame %d holds %d bytes, want %d", i, len(raw), off)
		}
	}
	if err := r.setup(ctx, inst); err != nil {
		return nil, fmt.Errorf("python: restore: %w", err)
	}
	inst.afterCell()
	if cache != nil {
		for i := range parsed {
			f := &frame{pages: parsed[i].pages, data: parsed[i].data, codec: parsed[i].codec, sum: parsed[i].sum}
			for _, e := range f.pages {
				if e&stalePage == 0 {
					f.live++
					fresh.where[e] = f
				}
			}
			fresh.frames = append(fresh.frames, f)
		}
		if cap(raw) <= 4<<20 {
			fresh.scratch = raw
		}
		*cache = fresh
	}
	return inst, nil
}

// populate makes the live pages of frames private and writable in the
// memory all before they are written (madvise MADV_POPULATE_WRITE, one
// call per run of pages): one call faults a run in, where writing each
// page of a copy-on-write mapping takes a fault of its own (measured: the
// copies into a light session's 300 pages took 2 ms of a resume). A
// kernel without it (before Linux 5.14) faults them in as they are
// written.
func populate(all []byte, frames []frame) {
	var live []uint32
	for _, f := range frames {
		for _, e := range f.pages {
			if e&stalePage == 0 {
				live = append(live, e)
			}
		}
	}
	slices.Sort(live)
	for i := 0; i < len(live); {
		j := i + 1
		for j < len(live) && live[j] == live[j-1]+1 {
			j++
		}
		start, end := uint64(live[i])*pageBytes, min(uint64(live[j-1]+1)*pageBytes, uint64(len(all)))
		if start < end && unix.Madvise(all[start:end], unix.MADV_POPULATE_WRITE) != nil {
			return
		}
		i = j
	}
}

// parseState checks an index against its frames and splits it into its
// memory size and its frames: page indexes inside the memory, each live
// page in one frame only, each frame's entries ascending, each frame of
// the length the index gives.
func parseState(b []byte, frames []Frame) (size uint32, out []frame, err error) {
	bad := func(why string) error {
		return fmt.Errorf("python: restore: the persisted state is malformed: %s", why)
	}
	if len(b) < 16 || string(b[:4]) != stateMagic {
		return 0, nil, bad("no header")
	}
	if v := binary.LittleEndian.Uint32(b[4:]); v != stateVersion {
		return 0, nil, fmt.Errorf("python: restore: the persisted state has version %d; this build reads version %d", v, stateVersion)
	}
	size = binary.LittleEndian.Uint32(b[8:])
	n := binary.LittleEndian.Uint32(b[12:])
	if int(n) != len(frames) {
		return 0, nil, bad(fmt.Sprintf("the index names %d frames, %d are given", n, len(frames)))
	}
	npages := (uint64(size) + pageBytes - 1) / pageBytes
	rest := b[16:]
	live := map[uint32]bool{}
	for i := uint32(0); i < n; i++ {
		if len(rest) < 8 {
			return 0, nil, bad("cut short")
		}
		codec, np := binary.LittleEndian.Uint32(rest), binary.LittleEndian.Uint32(rest[4:])
		rest = rest[8:]
		if codec != codecZstd && codec != codecS2 {
			return 0, nil, bad(fmt.Sprintf("frame %d: unknown codec %d", i, codec))
		}
		if uint64(np) > 2*npages+1 || uint64(len(rest)) < 4*uint64(np)+4 {
			return 0, nil, bad("cut short, or a frame with more pages than the memory holds")
		}
		f := frame{pages: make([]uint32, np), codec: codec}
		for j := range f.pages {
			e := binary.LittleEndian.Uint32(rest[4*j:])
			p := e &^ stalePage
			if uint64(p) >= npages || j > 0 && p <= f.pages[j-1]&^stalePage {
				return 0, nil, bad(fmt.Sprintf("frame %d: page entries out of order or range", i))
			}
			if e&stalePage == 0 {
				if live[p] {
					return 0, nil, bad(fmt.Sprintf("page %d is in two frames", p))
				}
				live[p] = true
			}
			f.pages[j] = e
		}
		rest = rest[4*np:]
		l := binary.LittleEndian.Uint32(rest)
		rest = rest[4:]
		if int(l) != len(frames[i].Data) {
			return 0, nil, bad(fmt.Sprintf("frame %d has %d bytes, the index says %d", i, len(frames[i].Data), l))
		}
		f.data, f.sum = frames[i].Data, frames[i].Sum
		out = append(out, f)
	}
	if len(rest) != 0 {
		return 0, nil, bad("trailing bytes")
	}
	return size, out, nil
}
