package server

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
)

// maxWaiting is how many evals may wait for their turn in one session;
// past it the answer is 429.
const maxWaiting = 8

// turns lets the evals of one session take turns before they take an
// in-flight slot: an eval waiting behind another of its session holds no
// slot, so a tenant that queues evals on a busy session does not starve
// the others.
type turns struct {
	mu      sync.Mutex
	m       map[string]*turn // by session id
	waiting atomic.Int64     // evals in takeOrNest, not yet through
}

type turn struct {
	ch    chan struct{} // held by the session's running eval
	users int           // holding or waiting
}

// take waits for session id's turn, or until ctx ends. The returned
// function ends the turn.
func (t *turns) take(ctx context.Context, id string) (func(), error) {
	end, _, err := t.takeOrNest(ctx, id, nil)
	return end, err
}

// nestedReady is sandbox.Session.NestedReady: whether an eval of the
// session now runs inside a cell that waits in agent() or tool().
type nestedReady func() (ready bool, changed <-chan struct{})

// takeOrNest is take for an eval that may run nested: while (or as soon
// as) a cell of the session waits in agent() or tool(), the eval needs no
// turn (nested is true): it runs inside that cell, whose eval holds the
// turn, so waiting for it would deadlock. It still counts against
// maxWaiting until end is called.
func (t *turns) takeOrNest(ctx context.Context, id string, ready nestedReady) (end func(), nested bool, err error) {
	t.mu.Lock()
	if t.m == nil {
		t.m = map[string]*turn{}
	}
	tu := t.m[id]
	if tu == nil {
		tu = &turn{ch: make(chan struct{}, 1)}
		t.m[id] = tu
	}
	if tu.users > maxWaiting {
		t.mu.Unlock()
		return nil, false, errTooManyWaiting
	}
	tu.users++
	t.mu.Unlock()
	t.waiting.Add(1)
	defer t.waiting.Add(-1)
	leave := func() {
		t.mu.Lock()
		if tu.users--; tu.users == 0 {
			delete(t.m, id)
		}
		t.mu.Unlock()
	}
	for {
		var changed <-chan struct{}
		if ready != nil {
			var ok bool
			if ok, changed = ready(); ok {
				// Counted until it ends, so that nested evals too are
				// capped at maxWaiting per session.
				return sync.OnceFunc(leave), true, nil
			}
		}
		select {
		case tu.ch <- struct{}{}:
			return sync.OnceFunc(func() {
				<-tu.ch
				leave()
			}), false, nil
		case <-changed:
		case <-ctx.Done():
			leave()
			return nil, false, ctx.Err()
		}
	}
}

var errTooManyWaiting = fmt.Errorf("server: %d evals already wait for this session", maxWaiting)

// waitTurn takes session id's turn for r, answering 429 when too many
// wait; false means the handler is done. nested says that the eval runs
// inside a cell of the session that waits in agent() or tool(): it took
// no turn, and needs no in-flight slot (the waiting eval holds one).
func (s *Server) waitTurn(w http.ResponseWriter, r *http.Request, id string, ready nestedReady) (end func(), nested, ok bool) {
	end, nested, err := s.turns.takeOrNest(r.Context(), id, ready)
	switch {
	case err == errTooManyWaiting:
		s.evals.WithLabelValues("rejected").Inc()
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, "too_busy", fmt.Sprintf("%d evals already wait for this session, which runs one at a time; retry when one has ended", maxWaiting))
		return nil, false, false
	case err != nil:
		return nil, false, false // the client is gone
	}
	return end, nested, true
}
