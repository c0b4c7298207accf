package sandbox

import "sync"

// frozenFree keeps a recording session's frozen requests and results
// (tapeRequestAs, freeze) for reuse once the tape has their JSON
// (tape.Recycler). The tape encodes and recycles them on a goroutine of
// its own, so a sync.Pool had each request's Get take them from another
// P's pool (its slow path, with the cache misses of another core's
// memory): that cost a recorded trivial cell more than anything else the
// recording does on the request's path. A session's list has one taker
// (its requests, one at a time but for nested ones) and one giver (the
// tape's encoding), and keeps at most maxFrozenFree of each.
type frozenFree struct {
	mu       sync.Mutex
	results  []*frozen
	requests []*frozenRequest
}

// maxFrozenFree bounds what a session keeps: about the records a tape
// lets wait for their encoding before a drain (tape's maxLater), twice.
const maxFrozenFree = 512

// result is a frozen result to fill, recycled to l (nil: to none).
func (l *frozenFree) result() *frozen {
	if l != nil {
		if f := take(&l.mu, &l.results); f != nil {
			return f
		}
	}
	return &frozen{free: l}
}

// request is a frozen request to fill, recycled to l (nil: to none).
func (l *frozenFree) request() *frozenRequest {
	if l != nil {
		if f := take(&l.mu, &l.requests); f != nil {
			return f
		}
	}
	return &frozenRequest{free: l}
}

// Recycle implements tape.Recycler.
func (f *frozen) Recycle() {
	l := f.free
	*f = frozen{free: l} // what it held is not kept alive
	if l != nil {
		give(&l.mu, &l.results, f)
	}
}

// Recycle implements tape.Recycler.
func (f *frozenRequest) Recycle() {
	l := f.free
	*f = frozenRequest{free: l}
	if l != nil {
		give(&l.mu, &l.requests, f)
	}
}

// take is the last of *list, taken from it under mu, or nil.
func take[T any](mu *sync.Mutex, list *[]*T) *T {
	mu.Lock()
	defer mu.Unlock()
	n := len(*list)
	if n == 0 {
		return nil
	}
	f := (*list)[n-1]
	*list = (*list)[:n-1]
	return f
}

// give keeps f in *list under mu, up to maxFrozenFree.
func give[T any](mu *sync.Mutex, list *[]*T, f *T) {
	mu.Lock()
	if len(*list) < maxFrozenFree {
		*list = append(*list, f)
	}
	mu.Unlock()
}
