package store

import (
	"context"
	"errors"
	"time"
)

// Errors of a Leaser.
var (
	// ErrLeaseHeld: another node holds a live lease on the session; the
	// Lease returned with it says which node, at which address.
	ErrLeaseHeld = errors.New("store: the session is held by another node")
	// ErrLeaseLost: the node no longer holds the lease it names (it
	// expired and another node took the session over).
	ErrLeaseLost = errors.New("store: lease lost to another node")
)

// Lease is one node's right to run a session, until Expires. Its Epoch
// fences writes: every change of holder raises it, and a store that
// shares the Leaser's database refuses a Save with a lower epoch
// (ErrStaleEpoch), so a node that was partitioned away and still thinks
// it holds the session cannot overwrite what the new holder wrote.
type Lease struct {
	// ID is the session's id.
	ID string
	// Holder is the node id of the holder; empty when the lease was
	// released.
	Holder string
	// Addr is where the holder serves HTTP (host:port), for proxying.
	Addr string
	// Epoch is the fencing epoch, raised by every takeover.
	Epoch int64
	// Expires is when the lease lapses unless renewed (the database's
	// clock, not the nodes').
	Expires time.Time
	// Live says the lease had not expired when it was read.
	Live bool
}

// Leaser hands out per-session leases (Ownership in issue 16): one node
// runs a session at a time, and a database, not the nodes, decides which.
// Times are the database's, so the nodes' clocks need not agree. Every
// method is safe for concurrent use; errors for an unreachable backend
// wrap ErrUnavailable.
type Leaser interface {
	// Acquire takes the lease on id for node holder (serving at addr) for
	// ttl, when no node holds it, its lease expired or was released, or
	// holder holds it already (then it is renewed, epoch unchanged). A
	// change of holder raises the epoch above both the lease's and the
	// stored state's. When another node holds a live lease, Acquire
	// returns that lease and ErrLeaseHeld.
	Acquire(ctx context.Context, id, holder, addr string, ttl time.Duration) (Lease, error)
	// Renew extends every lease holder holds by ttl from now and returns
	// the ids it holds; an id the node thinks it holds and that is not in
	// the answer was taken over.
	Renew(ctx context.Context, holder string, ttl time.Duration) (map[string]Lease, error)
	// Release gives up holder's lease on id (drain, eviction): the next
	// Acquire by any node succeeds at once. The epoch is kept. Releasing
	// a lease holder does not hold does nothing.
	Release(ctx context.Context, id, holder string) error
	// Get returns the lease on id; ErrNotFound when there has never been
	// one (or the session was deleted).
	Get(ctx context.Context, id string) (Lease, error)
	// Forget removes the lease on id, when the session is deleted.
	Forget(ctx context.Context, id string) error
	// StoredOwner returns the owner of the session stored under id
	// (State.Owner); ErrNotFound when none is stored. A node that does
	// not find a session it was asked for tells "moved while the request
	// was on its way" from "not the caller's" with it.
	StoredOwner(ctx context.Context, id string) (string, error)
}
