package hostcalls

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"unicode/utf8"
)

// DefaultMemoryLimitBytes is the session memory limit a Dispatcher assumes
// when DispatcherOptions.MemoryLimitBytes is zero: the runtimes' default
// guest memory cap.
const DefaultMemoryLimitBytes = 256 << 20

// callOverhead is what one call is charged beyond the bytes it is known to
// hold: buffers, the decoded request's small fields, the response's frame.
const callOverhead = 64 << 10

// CallBudget is the share of a session's memory that its runtime may hold
// for host calls it has made and not yet handed to the guest: requests
// copied out of the guest and answers waiting for the guest to take them.
// (What a Dispatcher holds while it serves a call is bounded apart, by a
// pool of the same size.)
//
// A runtime reserves a request's bytes before it copies the request out
// of the guest (Reserve, which refuses at once rather than wait: the guest
// may be the one that must take answers out first), releases them when
// the call returns, then waits for room for the answer (Acquire) before it
// queues the answer for the guest, and releases that when the guest has
// it or the call is dropped. A guest that does not take its answers thus
// stalls its own calls, not the host.
//
// It is safe for concurrent use.
type CallBudget struct {
	p           pool
	maxResponse int64
}

// NewCallBudget returns a budget of max bytes for calls whose answers are
// at most maxResponse bytes.
func NewCallBudget(max, maxResponse int64) *CallBudget {
	return &CallBudget{p: pool{size: max}, maxResponse: min(maxResponse, max)}
}

// Reserve takes n bytes of the budget at once, or returns an error that
// says how much the session's calls hold already. It may take room that an
// answer waits for (Acquire): answers can wait, the guest cannot.
func (b *CallBudget) Reserve(n int64) error {
	if n <= 0 {
		return nil
	}
	if n > b.p.size {
		return fmt.Errorf("the request needs %s of host memory, more than the %s a host call of this session may carry; send less at once (write large content in parts with append)",
			sizeText(n), sizeText(b.p.size))
	}
	if !b.p.tryAcquire(n, true) {
		return fmt.Errorf("the host calls in flight of this session hold %s of the %s they may (this call needs %s more); wait for some to finish, or run fewer at once",
			sizeText(b.Held()), sizeText(b.p.size), sizeText(n))
	}
	return nil
}

// Acquire takes n bytes (at most Max) of the budget, waiting for room
// until ctx is done.
func (b *CallBudget) Acquire(ctx context.Context, n int64) error {
	if n <= 0 {
		return nil
	}
	if n > b.p.size {
		return fmt.Errorf("%s is more than the whole budget of %s", sizeText(n), sizeText(b.p.size))
	}
	return b.p.acquire(ctx, n)
}

// Release gives back n bytes taken by Reserve or Acquire.
func (b *CallBudget) Release(n int64) {
	if n > 0 {
		b.p.release(n)
	}
}

// Held returns the bytes taken now.
func (b *CallBudget) Held() int64 {
	b.p.mu.Lock()
	defer b.p.mu.Unlock()
	return b.p.used
}

// Max returns the budget's size in bytes.
func (b *CallBudget) Max() int64 { return b.p.size }

// MaxResponseBytes is the largest answer a call of this session can get.
func (b *CallBudget) MaxResponseBytes() int64 { return b.maxResponse }

// pool is a weighted semaphore of bytes whose waiters are served in the
// order they came. It bounds what a Dispatcher's calls hold while served.
type pool struct {
	mu      sync.Mutex
	size    int64
	used    int64
	waiters []*poolWaiter
}

type poolWaiter struct {
	n     int64
	ready chan struct{}
}

// tryAcquire takes n bytes if they are free. Unless barge is set, it also
// leaves them to the waiters, if any.
func (p *pool) tryAcquire(n int64, barge bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if (barge || len(p.waiters) == 0) && p.used+n <= p.size {
		p.used += n
		return true
	}
	return false
}

// acquire waits until n bytes (n <= size) are free, or ctx is done.
func (p *pool) acquire(ctx context.Context, n int64) error {
	p.mu.Lock()
	if len(p.waiters) == 0 && p.used+n <= p.size {
		p.used += n
		p.mu.Unlock()
		return nil
	}
	w := &poolWaiter{n: n, ready: make(chan struct{})}
	p.waiters = append(p.waiters, w)
	p.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		select {
		case <-w.ready: // granted meanwhile: give it back
			p.used -= n
		default:
			p.waiters = slices.DeleteFunc(p.waiters, func(x *poolWaiter) bool { return x == w })
		}
		p.grantLocked() // a smaller waiter behind it may fit now
		p.mu.Unlock()
		return ctx.Err()
	}
}

func (p *pool) release(n int64) {
	p.mu.Lock()
	p.used -= n
	p.grantLocked()
	p.mu.Unlock()
}

func (p *pool) grantLocked() {
	for len(p.waiters) > 0 && p.used+p.waiters[0].n <= p.size {
		w := p.waiters[0]
		p.waiters = p.waiters[1:]
		p.used += w.n
		close(w.ready)
	}
}

// meter is what one call holds of its dispatcher's pool.
type meter struct {
	p    *pool
	held int64
}

// grow takes n more bytes for the call. When the pool has no room it waits
// holding nothing, then takes all it needs at once: calls that each hold
// part of the pool and wait for more can then never block each other for
// good. A call that would need more than the whole pool fails.
func (m *meter) grow(ctx context.Context, n int64) error {
	if n <= 0 || m == nil {
		return nil
	}
	total := m.held + n
	if total > m.p.size {
		return fmt.Errorf("it needs %s of host memory, more than the %s the host calls of this session may use at once (half its memory limit)",
			sizeText(total), sizeText(m.p.size))
	}
	if m.p.tryAcquire(n, false) {
		m.held = total
		return nil
	}
	m.p.release(m.held)
	m.held = 0
	if err := m.p.acquire(ctx, total); err != nil {
		return fmt.Errorf("it was waiting for other host calls of this session to free memory: %w", err)
	}
	m.held = total
	return nil
}

func (m *meter) close() {
	if m.held > 0 {
		m.p.release(m.held)
		m.held = 0
	}
}

// jsonStringLen is the length of s as appendJSONString writes it.
func jsonStringLen(s string) int64 {
	n := int64(2)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			n += 3 // U+FFFD
		} else {
			n += int64(size)
		}
		i += size
	}
	return n
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 as U+FFFD, and nothing else
// (no HTML escapes: the reader is a JSON parser, and <, > and & would
// take six bytes each).
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, "\ufffd"...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
