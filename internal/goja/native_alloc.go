package goja

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// wasmeval: big allocations of the built-ins are announced before they
// happen.
//
// goja allocates on the Go heap without a limit, and a built-in that makes
// one big string, array or buffer (a concatenation, repeat, padStart, join,
// replace, split, an array's growth, a spread, a typed array) runs to its
// end in native code, where no interrupt lands: a sandbox that measures
// its sessions between such calls learns of the allocation only after the
// host has grown past the session's cap (to 1.5-2x a 128 MiB cap in a
// loop). SetAllocGuard lets the embedder refuse it first: the built-ins
// call the guard with the bytes they are about to allocate, whenever those
// are at least AllocGuardFrom, and the guard may throw (panic with a
// Value, as a native function throws) to stop the allocation before it
// happens.

// AllocGuardFrom is the smallest allocation the guard is told of: below
// it, a call would cost more than the allocation.
const AllocGuardFrom = 1 << 20

// SetAllocGuard sets the function that is called with the bytes a built-in
// is about to allocate at once (AllocGuardFrom or more), before it does;
// nil (the default) removes it. The function runs on the VM's goroutine,
// inside the built-in: it may throw a JavaScript error by panicking with a
// Value, which the script can catch, or interrupt the VM; it must not run
// scripts.
func (r *Runtime) SetAllocGuard(f func(bytes int64)) {
	r.allocGuard = f
}

// ChargeAlloc tells the allocation guard (SetAllocGuard) that n bytes are
// about to be allocated at once, as the built-ins do: Go code that makes a
// big value for a script (goja_nodejs's Buffer) calls it first. Below
// AllocGuardFrom, or without a guard, it does nothing. The guard may throw.
func (r *Runtime) ChargeAlloc(n int64) { r.chargeAlloc(n) }

// chargeAlloc tells the guard that n bytes are about to be allocated.
func (r *Runtime) chargeAlloc(n int64) {
	if n >= AllocGuardFrom && r.allocGuard != nil {
		r.allocGuard(n)
	}
}

// stringBytes is the bytes of s's characters: one each if all ASCII, two
// otherwise.
func stringBytes(s String) int64 {
	if _, u := devirtualizeString(s); u != nil {
		return 2 * int64(u.Length())
	}
	return int64(s.Length())
}

// valueSliceBytes is the bytes of a slice of n values.
func valueSliceBytes(n int) int64 { return 16 * int64(n) }

// chargeAppend is called before appending one value to values: when the
// append must grow the slice, the new backing array is charged.
func (r *Runtime) chargeAppend(values []Value) {
	if len(values) == cap(values) && r.allocGuard != nil {
		r.chargeAlloc(valueSliceBytes(growCap(len(values)+1, len(values), cap(values))))
	}
}

// builderBytes returns the bytes b holds and has room for.
func (b *StringBuilder) builderBytes() (n, room int64) {
	if b.ascii() {
		return int64(b.asciiBuilder.Len()), int64(b.asciiBuilder.Cap())
	}
	return 2 * int64(len(b.unicodeBuilder.buf)), 2 * int64(cap(b.unicodeBuilder.buf))
}

// chargeWrite is called before writing s to b: when the write must grow
// b's buffer, the new buffer is charged (as append grows it, or twice
// over when s turns an ASCII buffer into a UTF-16 one).
func (r *Runtime) chargeWrite(b *StringBuilder, s String) {
	r.chargeBuild(b, int64(s.Length()), stringBytes(s) > int64(s.Length()))
}

// chargeBuild is called before chars characters (wide: some not ASCII) are
// written to b: when the write must grow b's buffer, the new buffer is
// charged with the one it replaces, which the builder holds while it
// copies and no walk of the session sees (a UTF-16 buffer for an ASCII
// one when the write turns it). A buffer of AllocGuardFrom or more grows
// here, to twice its size: growing by append's quarter left four times
// the buffer in garbage, which the memory monitor saw grow the heap past
// the session's limit before the guard refused.
func (r *Runtime) chargeBuild(b *StringBuilder, chars int64, wide bool) {
	if r.allocGuard == nil {
		return
	}
	n, room := b.builderBytes()
	add := chars
	if !b.ascii() {
		add = 2 * chars
	} else if wide {
		r.chargeAlloc(n + 2*n + 2*chars)
		return
	}
	if n+add <= room {
		return
	}
	if n+add < AllocGuardFrom {
		r.chargeAlloc(max(n+add, room+room/4))
		return
	}
	r.chargeAlloc(n + 2*room + add)
	if b.ascii() {
		b.asciiBuilder.Grow(int(add)) // to 2*room + add
	} else {
		b.unicodeBuilder.Grow(int(chars))
	}
}

// allocBytes is allocByteSlice, announced first.
func (r *Runtime) allocBytes(size int) []byte {
	r.chargeAlloc(int64(size))
	return allocByteSlice(size)
}

// chargeItem is called before a sparse array's items grow by one: when the
// append must grow the slice, the new one is charged (an item is a
// uint32 and a Value, 24 bytes).
func (a *sparseArrayObject) chargeItem() {
	if r := a.val.runtime; len(a.items) == cap(a.items) && r.allocGuard != nil {
		r.chargeAlloc(24 * int64(growCap(len(a.items)+1, len(a.items), cap(a.items))))
	}
}

// chargeGrowth is called as a native call builds data that it holds until
// it returns (a list of matches, the keys of an object, a parsed array),
// with held the bytes it holds so far: whenever they pass *next, the guard
// is told of the whole and a quarter more, and *next moves there. The
// whole, not the step: while the call runs, what it holds is reachable
// from no object a walk of the session could see. *next starts at 0.
func (r *Runtime) chargeGrowth(next *int64, held int64) {
	if held >= max(*next, AllocGuardFrom*3/4) && r.allocGuard != nil {
		n := max(held+held/4, AllocGuardFrom)
		r.chargeAlloc(n)
		*next = n
	}
}

// matchBytes is about what one match of p takes while a built-in lists
// them: its indexes and group names (regexpResult), and the slice of
// indexes Go's regexp gives first.
func (p *regexpPattern) matchBytes() int64 {
	groups := 1
	if p.regexpWrapper != nil {
		groups += (*regexp.Regexp)(p.regexpWrapper).NumSubexp()
	} else {
		groups = len(p.regexp2Wrapper.rx.GetGroupNumbers())
	}
	return 80 + 32*int64(groups)
}

// findAllGuarded is findAllSubmatchIndex, with the list of matches told to
// r's guard before it is made. regexp2's searches tell it as the list
// grows. Go's regexp lists all matches in one call that cannot be
// stopped, and their count is not known before: a text that could have a
// list of AllocGuardFrom bytes or more is searched for at most n matches,
// n doubling (each step announced) until fewer are found, at most twice
// the work.
func (p *regexpPattern) findAllGuarded(r *Runtime, s String, start, limit int, sticky bool) []regexpResult {
	if r.allocGuard == nil || limit == 1 {
		return p.findAll(s, start, limit, sticky, func(n int) {
			if n == 0 {
				r.vm.checkInterrupt() // native_interrupt.go
			}
		})
	}
	per := p.matchBytes()
	most := int64(s.Length()-start) + 1 // an empty match at each position
	if limit >= 0 {
		most = min(most, int64(limit))
	}
	// Each search first copies the text: to runes for regexp2 (4 bytes a
	// character), to UTF-8 with a map of positions for Go's regexp of a
	// UTF-16 text (about 20 bytes a character).
	_, u := devirtualizeString(s)
	re2 := p.regexpWrapper != nil && start == 0 && (u == nil || p.unicode)
	var conv int64
	if u != nil {
		conv = 20 * int64(s.Length())
	} else if !re2 {
		conv = 4 * int64(s.Length())
	}
	if !re2 {
		// regexp2 makes a Match of about 300 bytes for each, garbage
		// that the heap holds until the next collection.
		per += 320
		r.chargeAlloc(conv)
		return p.findAll(s, start, limit, sticky, func(n int) {
			if n == 0 {
				r.vm.checkInterrupt() // native_interrupt.go
				return
			}
			r.chargeAlloc(conv + per*int64(n))
		})
	}
	for n := max(AllocGuardFrom/per, 1); ; n *= 2 {
		if n >= most {
			r.chargeAlloc(conv + most*per)
			return p.findAllSubmatchIndex(s, start, limit, sticky)
		}
		r.chargeAlloc(conv + n*per)
		if found := p.findAllSubmatchIndex(s, start, int(n), sticky); int64(len(found)) < n {
			return found
		}
	}
}

// utf16SplitParts is how many parts split makes of s by sep, at most limit
// when it is not negative.
func utf16SplitParts(s, sep []uint16, limit int) int64 {
	parts := int64(len(s))
	if len(sep) > 0 {
		parts = 1
		for i := utf16Index(s, sep); i >= 0; i = utf16Index(s, sep) {
			parts++
			s = s[i+len(sep):]
		}
	}
	if limit >= 0 {
		parts = min(parts, int64(limit))
	}
	return parts
}

// keyBytes is about what a key that a built-in lists takes: its slot, and
// a new text for an index.
const keyBytes = 48

// chargeKeys is called before a built-in lists o's own keys (Object.keys
// and its kin), with per the bytes it makes for each: an array, a typed
// array or a string has a key for each index, which the list makes anew.
func (r *Runtime) chargeKeys(o *Object, per int64) {
	if r.allocGuard == nil {
		return
	}
	var n int64
	switch o := o.self.(type) {
	case *arrayObject:
		n = int64(len(o.values)) + int64(len(o.propNames))
	case *sparseArrayObject:
		n = int64(len(o.items)) + int64(len(o.propNames))
	case *typedArrayObject:
		n = int64(o.length) + int64(len(o.propNames))
	case *stringObject:
		n = int64(o.length) + int64(len(o.propNames))
	case *baseObject:
		n = int64(len(o.propNames))
	}
	r.chargeAlloc(n * per)
}

// chargeProp is called before o gets a new property: when its list of
// names must grow, the new list is charged, with room in its map (the
// object is reachable: a walk of the session counts what it holds).
func (o *baseObject) chargeProp() {
	if r := o.val.runtime; len(o.propNames) == cap(o.propNames) && r.allocGuard != nil {
		r.chargeAlloc(32 * int64(growCap(len(o.propNames)+1, len(o.propNames), cap(o.propNames))))
	}
}

// jsonGrew is called as JSON.parse makes a value of tok, or a property
// named by it: what the parse holds grows by about the value's bytes and
// its slot in an array or an object (the parse's objects are reachable
// from no object of the session until it returns).
func (r *Runtime) jsonGrew(tok any) {
	if r.allocGuard == nil {
		return
	}
	n := int64(48)
	switch tok := tok.(type) {
	case string:
		n += 2 * int64(len(tok))
	case json.Delim:
		if tok == '{' || tok == '[' {
			n += 160
		}
	}
	r.jsonHeld += n
	r.chargeGrowth(&r.jsonNext, r.jsonHeld)
}

// chargeEscape is called before escape(s): its result, up to 6 bytes a
// character, counted.
func (r *Runtime) chargeEscape(s String) {
	if r.allocGuard == nil || int64(s.Length())*6 < AllocGuardFrom {
		return
	}
	var n int64
	for i := range s.Length() {
		switch c := s.CharAt(i); {
		case c > 0xff:
			n += 6
		case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("@*_+-./", byte(c)) >= 0:
			n++
		default:
			n += 3
		}
	}
	r.chargeAlloc(n)
}

// Case conversions, normalize and localeCompare convert a text to UTF-8,
// through x/text and back to UTF-16: about 32 bytes a character of the
// text and 24 a character of the result (measured with runtime.MemStats:
// NFKD of '\ufdfa', 18 characters, took 262 bytes; of '\u3300', 5, 128;
// toUpperCase of '\u0390', 3, 57; toLowerCase of 'é' 28). The result's
// length is counted first, in a pass that allocates nothing: a form or a
// case may expand a character to up to 18.
const (
	convertBytes       = 32
	convertResultBytes = 24
)

// chargeCase is called before s.toUpperCase() (upper) or toLowerCase():
// ToUpper expands the characters of SpecialCasing.txt (ß, ŉ, ǰ, ΐ, ΰ,
// և, ẖ-ẚ, Greek with a breathing or an iota subscript, the ligatures
// ﬀ-ﬗ) to up to 3, ToLower only İ, to 2.
func (r *Runtime) chargeCase(s String, upper bool) {
	if r.allocGuard == nil {
		return
	}
	_, u := devirtualizeString(s)
	if u == nil {
		r.chargeAlloc(int64(s.Length())) // strings.ToUpper: one copy
		return
	}
	var out int64
	for _, c := range u[1:] {
		switch {
		case c < 0xdf:
			out++
		case upper && (c == 0xdf || c == 0x149 || c == 0x1f0 || c == 0x390 || c == 0x3b0 || c == 0x587 ||
			c >= 0x1e96 && c <= 0x1e9a || c >= 0x1f50 && c <= 0x1ffc || c >= 0xfb00 && c <= 0xfb17):
			out += 3
		case !upper && c == 0x130:
			out += 2
		default:
			out++
		}
	}
	r.chargeAlloc(convertBytes*int64(len(u)-1) + convertResultBytes*out)
}

// decomposedLength is how many UTF-16 characters the canonical (or, with
// compat, the compatibility) decomposition of s has: at least as many as
// any normal form of s.
func decomposedLength(u unicodeString, compat bool) int64 {
	f := norm.NFD
	if compat {
		f = norm.NFKD
	}
	var out int64
	var buf [utf8.UTFMax]byte
	u = u[1:]
	for i := 0; i < len(u); i++ {
		c := rune(u[i])
		if utf16.IsSurrogate(c) && i+1 < len(u) {
			if p := utf16.DecodeRune(c, rune(u[i+1])); p != utf8.RuneError {
				c = p
				i++
			}
		}
		switch {
		case c < 0xc0:
			out++
		case c >= 0xac00 && c <= 0xd7a3: // a Hangul syllable: 2 or 3 jamo
			out += 3
		default:
			d := f.Properties(buf[:utf8.EncodeRune(buf[:], c)]).Decomposition()
			if d == nil {
				out += utf16Len(c)
				continue
			}
			for _, c := range string(d) {
				out += utf16Len(c)
			}
		}
	}
	return out
}

// utf16Len is the UTF-16 characters of c, 1 for a lone surrogate (which
// the conversion to UTF-8 makes U+FFFD).
func utf16Len(c rune) int64 {
	if c >= 0x10000 && c <= utf8.MaxRune {
		return 2
	}
	return 1
}

// chargeNormalize is called before s.normalize(form) (compat for NFKC and
// NFKD) and, for each text, localeCompare (NFD).
func (r *Runtime) chargeNormalize(compat bool, texts ...String) {
	if r.allocGuard == nil {
		return
	}
	var n int64
	for _, s := range texts {
		if _, u := devirtualizeString(s); u != nil {
			n += convertBytes*int64(len(u)-1) + convertResultBytes*decomposedLength(u, compat)
		} else {
			n += int64(s.Length())
		}
	}
	r.chargeAlloc(n)
}

// grow is called before JSON.stringify writes about n more bytes: when its
// buffer must grow, the new buffer (twice the old and n, as bytes.Buffer
// grows) is charged with the old one, which the call holds out of a walk's
// reach, and made here.
func (ctx *_builtinJSON_stringifyContext) grow(n int) {
	b := &ctx.buf
	if ctx.r.allocGuard == nil || b.Len()+n <= b.Cap() || b.Len()+n < AllocGuardFrom {
		return
	}
	ctx.r.chargeAlloc(int64(b.Len()) + 2*int64(b.Cap()) + int64(n))
	b.Grow(n)
}

// itemBytes is about what each item of the iteration takes beyond its slot
// in a list made of them: for the entries of a Map or a Set, the array of
// two the iterator makes for each, and the garbage of its result object
// (the list's growth is announced by step, its slots; these arrays are
// not in it).
func (ir *iteratorRecord) itemBytes() int64 {
	kind := iterationKind(-1)
	if ir.iterator != nil {
		switch it := ir.iterator.self.(type) {
		case *mapIterObject:
			kind = it.kind
		case *setIterObject:
			kind = it.kind
		}
	}
	if kind == iterationKindKeyValue {
		return 400
	}
	return 0
}

// entryBytes is about what an entry of a Map, a Set, a WeakMap or a
// WeakSet takes beyond its key and value, measured with runtime.MemStats
// after a collection (map_alloc_test.go): 96-110 bytes for a Map or a Set
// of 1e5-1e6 small integers (the entry, 64, the key's box, its slot in the
// Go map at the map's load), 111-112 for a WeakMap or a WeakSet (its slot,
// the weak pointer's handle, the cleanup). Go's maps grow by tables of at
// most 1024 slots: no step of the table is a big allocation.
const entryBytes = 128

// chargeEntries is called before a Map, a Set, a WeakMap or a WeakSet that
// has n entries gets another, when n has reached *next: the guard is told
// of the entries of the next step of its growth, a quarter of n more (at
// least AllocGuardFrom's worth), and *next moves there. The step, not the
// whole (as chargeGrowth tells): the collection is reachable, and a walk
// of the session counts what it holds. The first step, from no entries,
// is not told; nor is growth back to a size it had before (entries
// deleted, or the whole cleared, leave *next where it was).
func (r *Runtime) chargeEntries(next *int, n int) {
	step := max(n/4, AllocGuardFrom/entryBytes)
	if n >= step {
		r.chargeAlloc(int64(step) * entryBytes)
	}
	*next = n + step
}
