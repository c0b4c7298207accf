package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/store"
)

// DefaultLeaseTTL is how long a node's lease on a session lasts unless
// renewed (a third of it between renewals): how long a session of a node
// that died stays unreachable before another node takes it over.
const DefaultLeaseTTL = 10 * time.Second

// forwardedHeader marks a request that one node passed on to the node
// holding its session: the receiver serves it itself, so a request hops
// at most once.
const forwardedHeader = "X-Wasmeval-Forwarded-By"

// NodeConfig configures a Node.
type NodeConfig struct {
	// ID names this node in leases, logs and metrics (serve --node-id).
	// Required; unique among the nodes sharing a store.
	ID string
	// Addr is the host:port where the other nodes reach this one's HTTP
	// API, written into its leases so they can pass requests on. Required
	// when the store hands out leases.
	Addr string
	// Store keeps the sessions' state. When it is also a store.Leaser
	// (postgres://), the node is one of several: it runs a session only
	// while it holds the session's lease, passes requests for sessions
	// other nodes hold on to them, and takes over sessions whose holder's
	// lease expired. Required.
	Store store.Store
	// LeaseTTL is how long a lease lasts unless renewed. Zero means
	// DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Logger receives the node's events (takeovers, lost leases); nil
	// means none. Its lines do not add the node's id: give a logger that
	// carries it (serve's carries "node" on every line), so that no line
	// has it twice.
	Logger *slog.Logger
}

// Node makes a Server one node of several sharing a store (Ownership in
// issue 16): Store returns the store for the sandbox.Manager, fenced by
// the node's leases and measured for /metrics; Config.Node gives the node
// to the Server, which routes session requests through it. With a store
// that hands out no leases (dir://) a Node only measures the store and
// answers /readyz.
type Node struct {
	cfg     NodeConfig
	leases  store.Leaser // nil with one node
	log     *slog.Logger
	metrics *nodeMetrics
	proxyTr http.RoundTripper

	mu        sync.Mutex
	held      map[string]*heldLease
	epochs    map[string]int64 // the last epoch held per session: a copy from before is stale
	acquiring map[string]int   // Acquire calls in progress, which a renewal must not take for strays
	mgr       *sandbox.Manager
	stop      chan struct{}
	stopped   chan struct{}
	closed    bool
}

// heldLease is a lease this node holds, as it knows it.
type heldLease struct {
	epoch    int64
	until    time.Time // by this node's clock: when the acquire or renewal began, plus the TTL
	acquired time.Time
	used     time.Time
}

// NewNode checks cfg and returns a Node.
func NewNode(cfg NodeConfig) (*Node, error) {
	if cfg.ID == "" {
		return nil, errors.New("server: a node needs an id (serve --node-id)")
	}
	if cfg.Store == nil {
		return nil, errors.New("server: a node needs a store")
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	n := &Node{cfg: cfg, log: cfg.Logger, held: map[string]*heldLease{}, epochs: map[string]int64{}, acquiring: map[string]int{}}
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	if l, ok := cfg.Store.(store.Leaser); ok {
		if cfg.Addr == "" {
			return nil, errors.New("server: a node sharing a store with others needs the address they reach it at (serve --advertise)")
		}
		n.leases = l
	}
	n.metrics = newNodeMetrics(n)
	n.proxyTr = &http.Transport{
		Proxy:               nil, // loopback and private networks: never an HTTP proxy from the environment
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return n, nil
}

// ID is the node's id.
func (n *Node) ID() string { return n.cfg.ID }

// Clustered reports whether the node shares its store with others (the
// store hands out leases).
func (n *Node) Clustered() bool { return n.leases != nil }

// Store is the store to give the sandbox.Manager: the node's store, with
// every Save at the epoch of this node's lease (refused when the node
// does not hold it) and every Load taking the lease first, measured for
// /metrics.
func (n *Node) Store() store.Store { return &nodeStore{n: n, inner: n.cfg.Store} }

// Ping checks that the store answers, for /readyz.
func (n *Node) Ping(ctx context.Context) error { return n.cfg.Store.Ping(ctx) }

// attach starts the node's work for mgr: renewing its leases.
func (n *Node) attach(mgr *sandbox.Manager) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mgr != nil || n.closed {
		return
	}
	n.mgr = mgr
	if n.leases == nil {
		return
	}
	n.stop, n.stopped = make(chan struct{}), make(chan struct{})
	go n.renewer()
}

// Close stops renewing and releases every lease the node holds, so other
// nodes take its sessions at once instead of after the TTL: the last step
// of a drain, once the node's evals finished and were saved.
func (n *Node) Close(ctx context.Context) error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	stop, stopped := n.stop, n.stopped
	n.mu.Unlock()
	if stop != nil {
		close(stop)
		<-stopped
	}
	if n.leases == nil {
		return nil
	}
	n.mu.Lock()
	ids := make([]string, 0, len(n.held))
	for id := range n.held {
		ids = append(ids, id)
	}
	n.held = map[string]*heldLease{}
	n.mu.Unlock()
	var errs []error
	for _, id := range ids {
		if err := n.leases.Release(ctx, id, n.cfg.ID); err != nil {
			errs = append(errs, err)
		}
	}
	n.log.Info("leases released", "sessions", len(ids))
	return errors.Join(errs...)
}

// Release moves session id off this node: it is unloaded here (once the
// eval running in it, and its save, end) and its lease released, so that
// the next request through any node loads it there. Without leases it
// only unloads.
func (n *Node) Release(ctx context.Context, id string) error {
	n.mu.Lock()
	mgr := n.mgr
	delete(n.held, id)
	n.mu.Unlock()
	if mgr != nil {
		mgr.Unload(ctx, id)
	}
	if n.leases == nil {
		return nil
	}
	return n.leases.Release(ctx, id, n.cfg.ID)
}

// owned is the number of sessions the node holds the lease of.
func (n *Node) owned() int {
	if n.leases == nil {
		n.mu.Lock()
		mgr := n.mgr
		n.mu.Unlock()
		if mgr == nil {
			return 0
		}
		return mgr.Len()
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.held)
}

// holdsLive reports whether the node holds id's lease with time to spare
// (a request that starts now should end its save before it runs out),
// marking it used.
func (n *Node) holdsLive(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	h := n.held[id]
	now := time.Now()
	if h == nil || now.Add(n.cfg.LeaseTTL/3).After(h.until) {
		return false
	}
	h.used = now
	return true
}

// acquire takes id's lease for this node. A copy of the session this
// node still has from an earlier lease is unloaded when another node has
// held the session since (the epoch moved): the next use loads the
// store's newer state.
func (n *Node) acquire(ctx context.Context, id string) (store.Lease, error) {
	n.mu.Lock()
	n.acquiring[id]++
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		if n.acquiring[id]--; n.acquiring[id] == 0 {
			delete(n.acquiring, id)
		}
		n.mu.Unlock()
	}()
	start := time.Now()
	l, err := n.leases.Acquire(ctx, id, n.cfg.ID, n.cfg.Addr, n.cfg.LeaseTTL)
	if err != nil {
		return l, err
	}
	n.mu.Lock()
	last, known := n.epochs[id]
	n.held[id] = &heldLease{epoch: l.Epoch, until: start.Add(n.cfg.LeaseTTL), acquired: start, used: start}
	n.epochs[id] = l.Epoch
	mgr := n.mgr
	n.mu.Unlock()
	if known && last != l.Epoch && mgr != nil && mgr.Unload(ctx, id) {
		n.log.Info("stale copy unloaded", "session", id, "epoch", l.Epoch, "had", last)
	}
	return l, nil
}

// lose forgets id's lease (another node holds it now) and unloads this
// node's copy of the session (from a save inside the session's eval:
// detaches it).
func (n *Node) lose(ctx context.Context, id, why string, inEval bool) {
	n.mu.Lock()
	_, had := n.held[id]
	delete(n.held, id)
	mgr := n.mgr
	n.mu.Unlock()
	if had {
		n.log.Warn("lease lost", "session", id, "why", why)
	}
	switch {
	case mgr == nil:
	case inEval:
		mgr.Detach(id)
	default:
		mgr.Unload(ctx, id)
	}
}

// epochFor is the epoch to save id at: its lease's. A session this node
// never held a lease on, and that has none, is new: the node takes its
// lease now. One whose lease another node took is refused.
func (n *Node) epochFor(ctx context.Context, id string) (int64, error) {
	n.mu.Lock()
	h := n.held[id]
	var epoch int64
	live := false
	if h != nil {
		epoch, live = h.epoch, time.Now().Before(h.until)
	}
	n.mu.Unlock()
	if live {
		return epoch, nil
	}
	if h == nil {
		_, err := n.leases.Get(ctx, id)
		if err == nil {
			return 0, fmt.Errorf("%w: %w: this node does not hold session %s", store.ErrStaleEpoch, store.ErrLeaseLost, id)
		}
		if !errors.Is(err, store.ErrNotFound) {
			return 0, err
		}
	}
	// New, or held by this node until its lease ran out: take it (again).
	// Nobody held it since when the epoch stays.
	l, err := n.acquire(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrLeaseHeld) {
			return 0, fmt.Errorf("%w: %w", store.ErrStaleEpoch, err)
		}
		return 0, err
	}
	if h != nil && l.Epoch != h.epoch {
		return 0, fmt.Errorf("%w: %w: session %s was held by another node since", store.ErrStaleEpoch, store.ErrLeaseLost, id)
	}
	return l.Epoch, nil
}

// renewer renews the node's leases every third of the TTL, unloading the
// sessions whose lease another node took and releasing the leases of
// sessions this node no longer runs (evicted, or from an earlier run of a
// node with the same id).
func (n *Node) renewer() {
	defer close(n.stopped)
	t := time.NewTicker(n.cfg.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
			n.renew()
		}
	}
}

func (n *Node) renew() {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.LeaseTTL/2)
	defer cancel()
	start := time.Now()
	held, err := n.leases.Renew(ctx, n.cfg.ID, n.cfg.LeaseTTL)
	if err != nil {
		n.log.Warn("renewing leases", "err", err)
		return
	}
	var lost, release []string
	n.mu.Lock()
	for id, h := range n.held {
		l, ok := held[id]
		switch {
		case !h.acquired.Before(start):
			// Taken after the renewal read the table: its answer
			// cannot know of it.
		case !ok || l.Epoch != h.epoch:
			lost = append(lost, id)
			delete(n.held, id)
		case n.mgr != nil && !n.mgr.Holds(id) && start.Sub(h.acquired) > 2*n.cfg.LeaseTTL && start.Sub(h.used) > n.cfg.LeaseTTL:
			// Evicted here, unused since: let any node load it.
			release = append(release, id)
			delete(n.held, id)
		default:
			h.until = start.Add(n.cfg.LeaseTTL)
		}
	}
	for id := range held {
		if _, ok := n.held[id]; !ok && n.acquiring[id] == 0 && !containsString(release, id) {
			release = append(release, id) // a stray: an earlier run's
		}
	}
	n.mu.Unlock()
	for _, id := range lost {
		n.lose(ctx, id, "taken over by another node", false)
	}
	for _, id := range release {
		if err := n.leases.Release(ctx, id, n.cfg.ID); err != nil {
			n.log.Warn("releasing a lease", "session", id, "err", err)
		}
	}
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// sessionOf is the session id a request's path names, if any.
func sessionOf(r *http.Request) (string, bool) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/sessions/")
	if !ok {
		return "", false
	}
	id, _, _ := strings.Cut(rest, "/")
	if store.CheckID(id) != nil {
		return "", false
	}
	return id, true
}

// route sends a request for a session this node does not hold to the
// node that does, or takes the session over when its holder's lease ran
// out (the handler then loads it from the store). It reports whether it
// answered the request.
func (s *Server) route(w http.ResponseWriter, r *http.Request) bool {
	n := s.cfg.Node
	if n == nil || n.leases == nil {
		return false
	}
	id, ok := sessionOf(r)
	if !ok || r.Header.Get(forwardedHeader) != "" || n.holdsLive(id) || !s.validToken(r) {
		return false // the handler answers (401 for a bad token)
	}
	ctx := r.Context()
	l, err := n.leases.Get(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false // never stored: the handler's 404
	case err != nil:
		storeUnavailable(w, err)
		return true
	case l.Live && l.Holder != n.cfg.ID:
		n.forward(w, r, l)
		return true
	}
	// Free, run out, or this node's from before: take it.
	prev := l
	l, err = n.acquire(ctx, id)
	switch {
	case errors.Is(err, store.ErrLeaseHeld):
		n.forward(w, r, l) // another node took it first
		return true
	case err != nil:
		storeUnavailable(w, err)
		return true
	}
	if prev.Holder != "" && prev.Holder != n.cfg.ID {
		n.metrics.takeovers.Inc()
		n.log.Info("session taken over", "session", id, "from", prev.Holder, "epoch", l.Epoch)
	}
	return false
}

// validToken reports whether r carries one of the server's tokens (the
// handler's auth answers the rest): a request without one neither moves a
// session nor reaches another node.
func (s *Server) validToken(r *http.Request) bool {
	token, ok := bearer(r.Header.Get("Authorization"))
	if !ok {
		return false
	}
	sum := sha256.Sum256([]byte(token))
	match := 0
	for _, t := range s.tokens {
		match |= subtle.ConstantTimeCompare(sum[:], t[:])
	}
	return match == 1
}

// claim takes the lease of a session just made on this node, before its
// id is answered, so that a request for it through another node finds
// this one.
func (s *Server) claim(ctx context.Context, id string) error {
	n := s.cfg.Node
	if n == nil || n.leases == nil {
		return nil
	}
	_, err := n.acquire(ctx, id)
	return err
}

// forward passes r on to the node holding l.
func (n *Node) forward(w http.ResponseWriter, r *http.Request, l store.Lease) {
	target := &url.URL{Scheme: "http", Host: l.Addr}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
			pr.Out.Header.Set(forwardedHeader, n.cfg.ID)
			pr.SetXForwarded()
		},
		Transport:     n.proxyTr,
		FlushInterval: -1, // event streams pass through as they come
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			n.metrics.proxied.WithLabelValues("unreachable").Inc()
			wait := max(1, int(time.Until(l.Expires).Seconds()+1))
			w.Header().Set("Retry-After", strconv.Itoa(wait))
			writeError(w, http.StatusServiceUnavailable, "holder_unreachable",
				fmt.Sprintf("session %s is run by node %s at %s, which did not answer (%v); its lease runs out within %d s, then any node takes the session over: retry then",
					l.ID, l.Holder, l.Addr, err, wait))
		},
		ModifyResponse: func(*http.Response) error {
			n.metrics.proxied.WithLabelValues("ok").Inc()
			return nil
		},
	}
	rp.ServeHTTP(w, r)
}

// moved answers, on a node of several, a request whose session the
// manager did not find although the store holds it for the caller: it
// moved between nodes while the request was on its way here (a takeover,
// a lease renewed late), so the client gets 503 and retries, rather than
// a 404 saying the session is gone. Another owner's session stays a 404.
func (s *Server) moved(w http.ResponseWriter, r *http.Request) bool {
	n := s.cfg.Node
	if n == nil || n.leases == nil {
		return false
	}
	id, ok := sessionOf(r)
	token, tok := bearer(r.Header.Get("Authorization"))
	if !ok || !tok {
		return false
	}
	owner, err := n.leases.StoredOwner(r.Context(), id)
	if err != nil || owner != Owner(token) {
		return false
	}
	w.Header().Set("Retry-After", "1")
	writeError(w, http.StatusServiceUnavailable, "session_moved",
		fmt.Sprintf("session %s moved between nodes while this request was on its way; retry", id))
	return true
}

// storeUnavailable answers 503 for a store that cannot be reached.
func storeUnavailable(w http.ResponseWriter, err error) {
	w.Header().Set("Retry-After", "2")
	writeError(w, http.StatusServiceUnavailable, "store_unavailable",
		fmt.Sprintf("the session store cannot be reached (%v); nothing was changed: retry shortly", err))
}

// nodeStore is the store a Node gives the Manager (Node.Store).
type nodeStore struct {
	n     *Node
	inner store.Store
}

// Save saves at the epoch of the node's lease, whatever epoch it is
// given, and measures the save.
func (s *nodeStore) Save(ctx context.Context, st *store.State, epoch int64) error {
	m := s.n.metrics
	if s.n.leases != nil {
		e, err := s.n.epochFor(ctx, st.ID)
		if err != nil {
			m.persists.WithLabelValues(outcome(err)).Inc()
			if errors.Is(err, store.ErrStaleEpoch) {
				s.n.lose(context.WithoutCancel(ctx), st.ID, err.Error(), true)
			} else {
				s.n.detach(st.ID, err)
			}
			return err
		}
		epoch = e
	}
	start := time.Now()
	var written atomic.Int64 // what the store wrote: new frames, changed files, the record
	err := s.inner.Save(store.WithWritten(ctx, &written), st, epoch)
	m.persistSeconds.Observe(time.Since(start).Seconds())
	m.persists.WithLabelValues(outcome(err)).Inc()
	switch {
	case err == nil:
		m.persistBytes.Add(float64(written.Load()))
	case errors.Is(err, store.ErrStaleEpoch) && s.n.leases != nil:
		s.n.lose(context.WithoutCancel(ctx), st.ID, err.Error(), true)
	case errors.Is(err, store.ErrNotFound):
		// A delta for a record that is gone: the caller saves it whole.
	default:
		s.n.detach(st.ID, err)
	}
	return err
}

// detach drops, on a node of several, the copy in memory of a session
// whose save failed: it is ahead of the store, which holds the session as
// of its last answered eval, and the next request may reach another node,
// which loads that. Dropping it here too makes every node agree (once the
// store is back) rather than the session's state depending on which node
// answers, and nothing builds on an eval whose client was told it failed.
// A lone node keeps its copy, and its next save carries the change
// (sandbox's contract).
func (n *Node) detach(id string, err error) {
	n.mu.Lock()
	mgr := n.mgr
	n.mu.Unlock()
	if n.leases != nil && mgr != nil && mgr.Detach(id) {
		n.log.Warn("session detached after a failed save", "session", id, "err", err)
	}
}

func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, store.ErrStaleEpoch):
		return "stale"
	case errors.Is(err, store.ErrUnavailable):
		return "unavailable"
	}
	return "error"
}

// Load takes the session's lease first (with several nodes) and counts
// the load.
func (s *nodeStore) Load(ctx context.Context, id, artifact string) (*store.State, error) {
	if s.n.leases != nil && !s.n.holdsLive(id) {
		if _, err := s.n.acquire(ctx, id); err != nil {
			if errors.Is(err, store.ErrLeaseHeld) {
				// Requests that name a session are passed on before they
				// get here (route, toolElsewhere, mcpElsewhere): this one
				// lost a race with another node's take-over.
				return nil, fmt.Errorf("%w; it moved to that node while this call was on its way: retry it", err)
			}
			return nil, err
		}
	}
	st, err := s.inner.Load(ctx, id, artifact)
	switch {
	case err == nil:
		s.n.metrics.loads.Inc()
		s.n.log.Info("session loaded", "session", id, "epoch", st.Epoch)
	case !errors.Is(err, store.ErrNotFound):
		s.n.metrics.loadFailures.Inc()
	}
	return st, err
}

// Delete deletes the state and forgets the lease.
func (s *nodeStore) Delete(ctx context.Context, id string) error {
	if err := s.inner.Delete(ctx, id); err != nil {
		return err
	}
	if s.n.leases == nil {
		return nil
	}
	s.n.mu.Lock()
	delete(s.n.held, id)
	delete(s.n.epochs, id)
	s.n.mu.Unlock()
	return s.n.leases.Forget(ctx, id)
}

func (s *nodeStore) List(ctx context.Context) ([]string, error) { return s.inner.List(ctx) }

// SavedBefore passes store.Aged through, so that the manager expires
// records nobody came back for; a store that does not know its records'
// ages has none to give.
func (s *nodeStore) SavedBefore(ctx context.Context, t time.Time) ([]string, error) {
	if a, ok := s.inner.(store.Aged); ok {
		return a.SavedBefore(ctx, t)
	}
	return nil, nil
}
func (s *nodeStore) Ping(ctx context.Context) error { return s.inner.Ping(ctx) }
func (s *nodeStore) Close() error                   { return s.inner.Close() }

// Summaries passes store.Summarizer through, so that a listing shows the
// sessions other nodes hold; a store without it lists none.
func (s *nodeStore) Summaries(ctx context.Context, owner string) ([]store.Summary, error) {
	if sum, ok := s.inner.(store.Summarizer); ok {
		return sum.Summaries(ctx, owner)
	}
	return nil, nil
}

// rerouted is for an eval that waited for its session's turn on a node of
// several: the session may have moved meanwhile (its lease taken over,
// the node gave it up), and the manager no longer holds it. The request
// then goes where the session is now, as it would have on arrival: passed
// on to the node holding it (with body, the body as read), or, when this
// node takes the lease, left to the handler, which loads it. A request
// another node passed on is not passed on again (a request hops at most
// once): the handler answers it (session_moved, streamError). It reports
// whether it answered.
func (s *Server) rerouted(w http.ResponseWriter, r *http.Request, id string, body []byte) bool {
	n := s.cfg.Node
	if n == nil || n.leases == nil || s.cfg.Manager.Holds(id) || r.Header.Get(forwardedHeader) != "" {
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return s.route(w, r)
}

// streamError is the code and message of the error event that ends a
// streaming eval whose eval failed: on a node of several, a session that
// moved to another node after the stream began says so (as sessionError's
// session_moved does for an eval that does not stream), naming the node
// when the lease says which, so the client retries instead of taking the
// session for gone.
func (s *Server) streamError(r *http.Request, owner, id string, err error) (code, msg string) {
	n := s.cfg.Node
	if n == nil || n.leases == nil || !(errors.Is(err, sandbox.ErrNoSession) || errors.Is(err, store.ErrLeaseHeld) || errors.Is(err, store.ErrStaleEpoch)) {
		return errorCode(err), err.Error()
	}
	ctx := context.WithoutCancel(r.Context())
	if stored, serr := n.leases.StoredOwner(ctx, id); serr != nil || stored != owner {
		return errorCode(err), err.Error()
	}
	where := "another node"
	if l, lerr := n.leases.Get(ctx, id); lerr == nil && l.Live && l.Holder != "" && l.Holder != n.cfg.ID {
		where = fmt.Sprintf("node %s at %s", l.Holder, l.Addr)
	}
	if errors.Is(err, store.ErrStaleEpoch) {
		return "session_moved", fmt.Sprintf("session %s moved to %s while this eval ran here: its changes were not kept (the session is as of its last answered eval); retry it (through any node)", id, where)
	}
	return "session_moved", fmt.Sprintf("session %s moved to %s while this eval was on its way, and this eval did not run; retry it (through any node)", id, where)
}
