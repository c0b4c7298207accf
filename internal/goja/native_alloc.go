package goja

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
	if r.allocGuard == nil {
		return
	}
	n, room := b.builderBytes()
	add := stringBytes(s)
	if b.ascii() && add > int64(s.Length()) {
		n, room, add = 2*n, 0, 2*int64(s.Length())
	}
	if n+add > room {
		r.chargeAlloc(max(n+add, room+room/4))
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
