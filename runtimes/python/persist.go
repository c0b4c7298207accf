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

	"github.com/klauspost/compress/zstd"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/wasm"
)

// A persisted Python state is an instance's memory as the pages its guest
// wrote over the template, in zstd frames:
//
//	"wepy" | version u32 | memory size u32 | frame count u32 |
//	per frame: page count u32 | page entries u32... | length u32 | zstd frame
//
// (little endian). A frame holds its pages' bytes in its entries' order,
// 4 KiB each (the last page of the memory cut at the memory size). An
// entry is a page index, with stalePage set when the page's bytes in the
// frame are out of date (a later frame holds the page, or the page is no
// longer written): restoring skips those bytes. Each live page is in one
// frame; entries are ascending by page index. Frames let a StateCache keep what it compressed: a light cell
// changes some tens of pages, and only those are compressed again, in one
// new frame; a frame at most half live is compressed again whole. A state
// is only meaningful over the very template it was written over, which
// StateKey names.
const (
	stateMagic   = "wepy"
	stateVersion = 2
	pageBytes    = 4096
	stalePage    = 1 << 31
)

// StateCache keeps what PersistState compressed for an instance, so the
// next PersistState compresses only the pages that changed. It holds
// about the compressed state's size (and twice that at most); a session
// may drop it when idle (a new StateCache works, just slower once). Not
// safe for concurrent use.
type StateCache struct {
	seed    maphash.Seed
	sums    map[uint32]uint64 // live page -> maphash of its bytes
	where   map[uint32]*frame // live page -> the frame holding it
	frames  []*frame
	scratch []byte
}

// frame is one compressed frame of a StateCache.
type frame struct {
	pages []uint32 // entries, stalePage set on stale ones
	live  int
	data  []byte // zstd
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
		// The fastest level: a light session's pages compress about 5x
		// there, and the persist runs after every eval.
		stateEnc, stateCodecErr = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
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
// over the template, compressed (see RestoreInstance). The instance must
// be at rest (no cell running). cache, when not nil, carries the frames
// compressed last time and is updated.
func (in *Instance) PersistState(ctx context.Context, cache *StateCache) ([]byte, error) {
	in.waitCheckpoint()
	if !in.live() {
		return nil, fmt.Errorf("python: persist: %w", errExited)
	}
	enc, _, err := stateCodec()
	if err != nil {
		return nil, fmt.Errorf("python: persist: %w", err)
	}
	if cache == nil {
		cache = &StateCache{}
	}
	if cache.sums == nil {
		cache.seed, cache.sums, cache.where, cache.frames = maphash.MakeSeed(), map[uint32]uint64{}, map[uint32]*frame{}, nil
	}
	mem := in.mod.Memory()
	size := mem.Size()
	dirty, err := in.mem.DirtyPages(size)
	if err != nil {
		return nil, fmt.Errorf("python: persist: %w", err)
	}
	all, ok := mem.Read(0, size)
	if !ok {
		return nil, fmt.Errorf("python: persist: cannot read %d bytes of memory", size)
	}
	page := func(p uint32) []byte { off := p * pageBytes; return all[off:min(off+pageBytes, size)] }
	// Pages new or changed since the last persist go into a new frame;
	// their old copies, and pages no longer written, go stale.
	var fresh []uint32
	written := make(map[uint32]bool, len(dirty))
	for _, p := range dirty {
		written[p] = true
		sum := maphash.Bytes(cache.seed, page(p))
		if old, ok := cache.sums[p]; ok && old == sum {
			continue
		}
		cache.sums[p] = sum
		fresh = append(fresh, p)
		cache.stale(p)
	}
	for p := range cache.sums {
		if !written[p] {
			delete(cache.sums, p)
			cache.stale(p)
		}
	}
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
	if len(fresh) > 0 {
		slices.Sort(fresh)
		raw := cache.scratch[:0]
		for _, p := range fresh {
			raw = append(raw, page(p)...)
		}
		f := &frame{pages: fresh, live: len(fresh), data: enc.EncodeAll(raw, nil)}
		if cap(raw) <= 4<<20 {
			cache.scratch = raw // reused, unless one large persist made it large
		}
		for _, p := range fresh {
			cache.where[p] = f
		}
		cache.frames = append(cache.frames, f)
	}
	n := 16
	for _, f := range cache.frames {
		n += 8 + 4*len(f.pages) + len(f.data)
	}
	out := make([]byte, 16, n)
	copy(out, stateMagic)
	binary.LittleEndian.PutUint32(out[4:], stateVersion)
	binary.LittleEndian.PutUint32(out[8:], size)
	binary.LittleEndian.PutUint32(out[12:], uint32(len(cache.frames)))
	for _, f := range cache.frames {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(f.pages)))
		for _, p := range f.pages {
			out = binary.LittleEndian.AppendUint32(out, p)
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(len(f.data)))
		out = append(out, f.data...)
	}
	return out, nil
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

// RestoreInstance starts an instance for opts' session from a state that
// PersistState wrote over this runtime's template (the caller checks
// StateKey): the template mapped, the state's pages written over it, then
// the instance set up for the session as a new one is.
func (r *Runtime) RestoreInstance(ctx context.Context, opts runtimes.InstanceOptions, state []byte) (runtimes.Instance, error) {
	_, dec, err := stateCodec()
	if err != nil {
		return nil, fmt.Errorf("python: restore: %w", err)
	}
	size, frames, err := parseState(state)
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
	var raw []byte
	for i, f := range frames {
		raw, err = dec.DecodeAll(f.data, raw[:0])
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
			if e&stalePage == 0 && !mem.Write(p*pageBytes, raw[off:off+n]) {
				inst.close(ctx)
				return nil, fmt.Errorf("python: restore: page %d out of range", p)
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
	return inst, nil
}

// parseState checks a state's framing and splits it into its memory size
// and its frames: page indexes inside the memory, each live page in one
// frame only, each frame's entries ascending.
func parseState(b []byte) (size uint32, frames []frame, err error) {
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
	npages := (uint64(size) + pageBytes - 1) / pageBytes
	rest := b[16:]
	live := map[uint32]bool{}
	for i := uint32(0); i < n; i++ {
		if len(rest) < 4 {
			return 0, nil, bad("cut short")
		}
		np := binary.LittleEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(np) > 2*npages+1 || uint64(len(rest)) < 4*uint64(np)+4 {
			return 0, nil, bad("cut short, or a frame with more pages than the memory holds")
		}
		f := frame{pages: make([]uint32, np)}
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
		if uint64(len(rest)) < uint64(l) {
			return 0, nil, bad("cut short")
		}
		f.data, rest = rest[:l], rest[l:]
		frames = append(frames, f)
	}
	if len(rest) != 0 {
		return 0, nil, bad("trailing bytes")
	}
	return size, frames, nil
}
