package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/sandbox"
)

// Defaults of Config.
const (
	DefaultMaxBodyBytes = 8 << 20
	DefaultMaxInFlight  = 64
	DefaultBodyTimeout  = 30 * time.Second
	// maxLoggedCode is how much of a cell's code a log line carries.
	maxLoggedCode = 200
)

// OpenAPI is the API's OpenAPI 3 document, served at /openapi.json. A test
// keeps docs/openapi.json equal to it.
//
//go:embed openapi.json
var OpenAPI []byte

// Config configures a Server.
type Config struct {
	// Sandbox runs the stateless /v1/run requests. Required.
	Sandbox *sandbox.Sandbox
	// Manager holds the sessions. Required; the Server does not close it.
	Manager *sandbox.Manager
	// Tokens are the bearer tokens accepted. At least one is required: a
	// server without tokens would let anyone run code.
	Tokens []string
	// Logger receives one line per request; nil means none. Tokens are
	// never logged, and code is cut at 200 characters.
	Logger *slog.Logger
	// MaxBodyBytes caps a request body; past it the answer is 413. Zero
	// means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxInFlight caps the evals and runs in progress at once; past it the
	// answer is 429 with Retry-After. Zero means DefaultMaxInFlight.
	MaxInFlight int
	// MaxSessionsPerToken caps the sessions one token holds; past it
	// creating or forking answers 429. Zero means no refusal: the
	// Manager's own per-owner cap (sandbox.ManagerOptions.
	// MaxSessionsPerOwner, 100 by default) then evicts the token's least
	// recently used idle session, never another token's.
	MaxSessionsPerToken int
	// TempDir holds the folders of /v1/run's one-shot sessions. Empty
	// means os.TempDir().
	TempDir string
	// Host answers the tool, llm and agent calls of evals that do not
	// stream (and of /v1/run): the operator's backends. Nil means none:
	// those calls fail with a message saying how to get some, as do the
	// calls of a hostcalls.HostFuncs whose function for them is nil. A
	// streaming eval's calls always go to its client.
	Host hostcalls.Host
	// CallTimeout is how long a streaming client has to answer a host
	// call before the guest gets an error. Zero means DefaultCallTimeout.
	CallTimeout time.Duration
	// BodyTimeout is how long a client has to send a request body; past
	// it the answer is 408 and the connection closes, so a client that
	// trickles its body (Slowloris) holds nothing for long. Zero means
	// DefaultBodyTimeout.
	BodyTimeout time.Duration
	// Tools are the profiles served, at /mcp and at the profile endpoints
	// (serve --tools); the zero value serves all.
	Tools profiles.Set
	// KernelMode is the python profile's kernel mode for calls that name
	// none (serve --kernel-mode): profiles.KernelSession ("" too) or
	// profiles.KernelPerCall.
	KernelMode string
	// Node, when set, makes the server one node of several sharing a
	// store (cluster.go): it serves /readyz from the store's health and
	// passes requests for sessions other nodes hold on to them.
	Node *Node
}

// Server is the HTTP face of a sandbox. It implements http.Handler.
type Server struct {
	cfg      Config
	mux      *http.ServeMux
	tokens   [][sha256.Size]byte
	inflight chan struct{}
	turns    turns      // evals waiting for their session
	quotaMu  sync.Mutex // makes quota check and create one step
	callsMu  sync.Mutex
	calls    map[string]*pendingCall // host calls waiting for a client's answer, by call id
	log      *slog.Logger
	draining atomic.Bool // Drain was called: /readyz answers 503

	registry  *prometheus.Registry
	evals     *prometheus.CounterVec
	duration  prometheus.Histogram
	hostCalls *prometheus.CounterVec
}

// New checks cfg and returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Sandbox == nil || cfg.Manager == nil {
		return nil, errors.New("server: Config.Sandbox and Config.Manager are required")
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), log: cfg.Logger, calls: map[string]*pendingCall{}}
	for _, t := range cfg.Tokens {
		if t = strings.TrimSpace(t); t != "" {
			s.tokens = append(s.tokens, sha256.Sum256([]byte(t)))
		}
	}
	if len(s.tokens) == 0 {
		return nil, errors.New("server: no bearer tokens; give at least one, or anyone could run code")
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.cfg.MaxBodyBytes <= 0 {
		s.cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if s.cfg.MaxInFlight <= 0 {
		s.cfg.MaxInFlight = DefaultMaxInFlight
	}
	s.inflight = make(chan struct{}, s.cfg.MaxInFlight)
	if s.cfg.CallTimeout <= 0 {
		s.cfg.CallTimeout = DefaultCallTimeout
	}
	if s.cfg.BodyTimeout <= 0 {
		s.cfg.BodyTimeout = DefaultBodyTimeout
	}

	s.registry = prometheus.NewRegistry()
	s.evals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wasmeval_evals_total",
		Help: "Evals and runs by outcome: complete, error (a cell failed), cancelled, invalid (400), rejected (429), failed (host failure).",
	}, []string{"status"})
	s.duration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "wasmeval_eval_duration_seconds",
		Help:    "Wall-clock time of evals and runs that ran.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
	})
	s.hostCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wasmeval_client_host_calls_total",
		Help: "Host calls sent to streaming clients, by kind (tool, llm, agent) and outcome (ok, error, timeout, cancelled).",
	}, []string{"kind", "outcome"})
	s.registry.MustRegister(
		s.evals, s.duration, s.hostCalls,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "wasmeval_evals_in_flight",
			Help: "Evals and runs holding an in-flight slot (Config.MaxInFlight).",
		}, func() float64 { return float64(len(s.inflight)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "wasmeval_evals_waiting",
			Help: "Evals waiting for their session's turn behind its running eval; they hold no in-flight slot.",
		}, func() float64 { return float64(s.turns.waiting.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "wasmeval_sessions",
			Help: "Sessions held by the session manager.",
		}, func() float64 { return float64(cfg.Manager.Len()) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if cfg.Node != nil {
		s.registry.MustRegister(cfg.Node.metrics.all...)
		cfg.Node.attach(cfg.Manager)
	}

	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(OpenAPI)
	})
	s.mux.Handle("GET /metrics", s.auth(func(w http.ResponseWriter, r *http.Request, _ string) {
		promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	}))
	s.mux.Handle("POST /v1/sessions", s.auth(s.createSession))
	s.mux.Handle("POST /v1/sessions/{id}/eval", s.auth(s.eval))
	s.mux.Handle("POST /v1/sessions/{id}/fork", s.auth(s.fork))
	s.mux.Handle("DELETE /v1/sessions/{id}", s.auth(s.deleteSession))
	s.mux.Handle("GET /v1/sessions/{id}/outputs/{outputID}", s.auth(s.output))
	s.mux.Handle("GET /v1/sessions/{id}/tape", s.auth(s.tape))
	s.mux.Handle("POST /v1/sessions/{id}/calls/{callID}", s.auth(s.answerCall))
	s.mux.Handle("POST /v1/run", s.auth(s.run))
	s.routeSessions()
	s.routeProfiles()
	if err := s.mountMCP(); err != nil {
		return nil, err
	}
	s.mux.HandleFunc("/", s.notFound)
	return s, nil
}

// notFound answers what no route took: 405 with Allow when the path is an
// endpoint under other methods (the catch-all route would otherwise hide
// the mux's own 405), 404 otherwise.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed",
			fmt.Sprintf("%s %s: this endpoint takes %s; see /openapi.json", r.Method, r.URL.Path, strings.Join(allow, " or ")))
		return
	}
	writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no endpoint %s %s; see /openapi.json", r.Method, r.URL.Path))
}

// Registry is the Prometheus registry that /metrics serves, for embedders
// that add their own collectors.
func (s *Server) Registry() *prometheus.Registry { return s.registry }

// ServeHTTP implements http.Handler, logging each request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	defer s.guardBody(w, rec, r)()
	if !s.route(rec, r) { // cluster.go: another node's session
		s.mux.ServeHTTP(rec, r)
	}
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
		slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.Int("status", rec.status), slog.Duration("duration", time.Since(start)))
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	body   *deadlineBody // guardBody's, nil without a body
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
		r.closeIfUnread()
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if !r.wrote {
		r.closeIfUnread()
	}
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

// closeIfUnread closes the connection after an answer that starts before
// the request's body is in (guardBody).
func (r *statusRecorder) closeIfUnread() {
	if !r.body.complete() {
		r.Header().Set("Connection", "close")
	}
}

// Unwrap lets http.ResponseController reach Flush.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// ownerHandler is a handler that knows the caller's owner id.
type ownerHandler func(w http.ResponseWriter, r *http.Request, owner string)

// auth checks the bearer token in constant time and passes the token's
// owner id (a hash, never the token) on.
func (s *Server) auth(h ownerHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearer(r.Header.Get("Authorization"))
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="wasmeval"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "missing bearer token; send the header Authorization: Bearer <token>")
			return
		}
		sum := sha256.Sum256([]byte(token))
		match := 0
		for _, t := range s.tokens { // no early exit: the time does not tell which
			match |= subtle.ConstantTimeCompare(sum[:], t[:])
		}
		if match != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="wasmeval", error="invalid_token"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "invalid bearer token")
			return
		}
		h(w, r, Owner(token))
	})
}

// bearer returns the token of an Authorization header in the Bearer
// scheme, whose name is case-insensitive (RFC 9110, section 11.1).
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	token = strings.TrimLeft(token, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}

// Owner is the owner id of a token: a hash of it, so the token itself is
// never stored or logged.
func Owner(token string) string {
	sum := sha256.Sum256([]byte("wasmeval-owner\x00" + token))
	return hex.EncodeToString(sum[:12])
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "sessions": s.cfg.Manager.Len()})
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request, owner string) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	co, err := decodeCreateOptions(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	id, err := s.withQuota(owner, func() (string, error) { return s.cfg.Manager.CreateWith(r.Context(), owner, co) })
	if err != nil {
		if createRefused(w, err) {
			return
		}
		s.sessionError(w, r, err)
		return
	}
	if err := s.claim(r.Context(), id); err != nil { // cluster.go
		s.cfg.Manager.Unload(context.WithoutCancel(r.Context()), id)
		storeUnavailable(w, err)
		return
	}
	s.log.Info("session created", "owner", owner, "session", id)
	writeJSON(w, http.StatusCreated, map[string]string{"id": id})
}

func (s *Server) fork(w http.ResponseWriter, r *http.Request, owner string) {
	if !s.drainBody(w, r) {
		return
	}
	src := r.PathValue("id")
	id, err := s.withQuota(owner, func() (string, error) { return s.cfg.Manager.Fork(r.Context(), owner, src) })
	if err != nil {
		if errors.Is(err, sandbox.ErrNoSession) || errors.Is(err, errQuota) || errors.Is(err, sandbox.ErrTooManySessions) || errors.Is(err, sandbox.ErrClosed) || r.Context().Err() != nil {
			s.sessionError(w, r, err)
			return
		}
		// Most often state that cannot be copied (JavaScript); the message
		// says what to do.
		writeError(w, http.StatusConflict, "fork_failed", strings.TrimPrefix(err.Error(), "sandbox: "))
		return
	}
	if err := s.claim(r.Context(), id); err != nil { // cluster.go
		s.cfg.Manager.Unload(context.WithoutCancel(r.Context()), id)
		storeUnavailable(w, err)
		return
	}
	s.log.Info("session forked", "owner", owner, "session", id, "from", src)
	fa := ForkAnswer{ID: id}
	if cp, err := s.cfg.Manager.Session(owner, id); err == nil {
		fa.FreshLanguages = cp.FreshLanguages()
	}
	if len(fa.FreshLanguages) > 0 {
		fa.Note = fmt.Sprintf("the copy has the files and the Python state; %s state cannot be copied, so it starts afresh there", strings.Join(fa.FreshLanguages, " and "))
	}
	writeJSON(w, http.StatusCreated, fa)
}

// ForkAnswer is the answer of POST /v1/sessions/{id}/fork.
type ForkAnswer struct {
	ID string `json:"id"`
	// FreshLanguages are the languages whose state could not be copied
	// (JavaScript): they start afresh in the copy. Note says so in words.
	FreshLanguages []string `json:"freshLanguages,omitempty"`
	Note           string   `json:"note,omitempty"`
}

// errQuota is a per-token session quota reached.
var errQuota = errors.New("server: session quota reached")

func (s *Server) withQuota(owner string, create func() (string, error)) (string, error) {
	if s.cfg.MaxSessionsPerToken <= 0 {
		return create()
	}
	s.quotaMu.Lock()
	defer s.quotaMu.Unlock()
	if s.cfg.Manager.OwnerLen(owner) >= s.cfg.MaxSessionsPerToken {
		return "", errQuota
	}
	return create()
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request, owner string) {
	if err := s.cfg.Manager.Delete(r.Context(), owner, r.PathValue("id")); err != nil {
		s.sessionError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) output(w http.ResponseWriter, r *http.Request, owner string) {
	sess, err := s.cfg.Manager.Session(owner, r.PathValue("id"))
	if err != nil {
		s.sessionError(w, r, err)
		return
	}
	text, err := sess.Output(r.PathValue("outputID"))
	if err != nil {
		writeError(w, http.StatusNotFound, "not_found", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"output": text})
}

// sessionError answers a Manager error.
func (s *Server) sessionError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, sandbox.ErrNoSession):
		if s.moved(w, r) { // cluster.go: it moved to another node meanwhile
			return
		}
		writeError(w, http.StatusNotFound, "not_found", "no such session (never created, deleted, evicted, or not yours)")
	case errors.Is(err, errQuota):
		w.Header().Set("Retry-After", "60")
		writeError(w, http.StatusTooManyRequests, "quota_exceeded", fmt.Sprintf("this token already holds %d sessions, its quota; delete one first", s.cfg.MaxSessionsPerToken))
	case errors.Is(err, sandbox.ErrTooManySessions):
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusTooManyRequests, "quota_exceeded", strings.TrimPrefix(err.Error(), "sandbox: "))
	case errors.Is(err, sandbox.ErrClosed):
		writeError(w, http.StatusServiceUnavailable, "shutting_down", "the server is shutting down")
	case errors.Is(err, sandbox.ErrMemoryBudget): // running cells hold the budget
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, "memory_budget", strings.TrimPrefix(err.Error(), "sandbox: "))
	case errors.Is(err, sandbox.ErrStore): // the session's state could not be saved or loaded
		s.log.Error("session store", "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", "2")
		writeError(w, http.StatusServiceUnavailable, "store_error", strings.TrimPrefix(err.Error(), "sandbox: "))
	case r.Context().Err() != nil:
		// The client is gone; nobody reads the answer.
	default:
		s.log.Error("host failure", "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "host_error", err.Error())
	}
}

// readBody reads the body under the size cap and the body timeout,
// answering 413 or 408 past them.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	// A deadline on the connection, lifted once the body is in: the
	// server's ReadTimeout would instead also end a long eval's context.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err == nil {
		rc.SetReadDeadline(time.Time{})
	} else {
		// Past deadline, so that net/http does not wait for the rest of
		// a body it would discard before closing; and closing, said
		// here: MaxBytesReader's own word to net/http does not reach it
		// through the handlers' wrapped writer, and a past deadline
		// left on a connection net/http goes on using fails its
		// background read, which cancels every later request on it
		// (TestHuntServeFiles's eval after a PUT past the body cap).
		rc.SetReadDeadline(time.Now())
		w.Header().Set("Connection", "close")
	}
	if err != nil {
		var mbe *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mbe):
			writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the request body is over %d bytes, the limit", mbe.Limit))
		case errors.As(err, &ne) && ne.Timeout():
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusRequestTimeout, "body_timeout", fmt.Sprintf("the request body did not arrive within %v; send it at once", s.cfg.BodyTimeout))
		default:
			writeError(w, http.StatusBadRequest, "invalid_request", "reading the request body: "+err.Error())
		}
		return nil, false
	}
	return body, true
}

// drainBody reads (and ignores) the optional body of bodiless endpoints.
func (s *Server) drainBody(w http.ResponseWriter, r *http.Request) bool {
	_, ok := s.readBody(w, r)
	return ok
}

// admit takes an in-flight slot, answering 429 when there is none.
func (s *Server) admit(w http.ResponseWriter) bool {
	select {
	case s.inflight <- struct{}{}:
		return true
	default:
		s.evals.WithLabelValues("rejected").Inc()
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, "too_busy", fmt.Sprintf("%d evals are running, the server's limit; retry after a second", s.cfg.MaxInFlight))
		return false
	}
}

func (s *Server) done() { <-s.inflight }

// answer writes a JSON answer under a write deadline, so a client that
// does not read it holds the handler (and its connection) for at most
// writeTimeout.
func answer(w http.ResponseWriter, status int, v any) {
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(writeTimeout))
	writeJSON(w, status, v)
}

func (s *Server) eval(w http.ResponseWriter, r *http.Request, owner string) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	req, err := sandbox.DecodeRequest(body)
	if err != nil {
		s.badRequest(w, err)
		return
	}
	id := r.PathValue("id")
	sess, err := s.cfg.Manager.Session(owner, id)
	if err != nil {
		s.sessionError(w, r, err)
		return
	}
	// Wait behind the session's running eval before taking a slot; a
	// sub-agent's eval into a cell that waits in agent() needs neither.
	endTurn, nested, ok := s.waitTurn(w, r, id, sess.NestedReady)
	if !ok {
		return
	}
	defer endTurn()
	if s.rerouted(w, r, id, body) { // cluster.go: it moved to another node while this eval waited
		return
	}
	if !nested && !s.admit(w) {
		return
	}
	// The slot is the cell's: freed as soon as the eval ends, not once a
	// slow client has read the answer.
	release := sync.OnceFunc(s.done)
	if nested {
		release = func() {}
	}
	defer release()
	// Once the answer is out, the session does its work between cells
	// (settle.go); after the stream's end too (deferred before closeSSE).
	// Not for a nested eval, whose session's running eval goes on.
	settle := false
	defer func() {
		if settle {
			settleLater(sess)
		}
	}()
	s.logCells(r.Context(), "eval", owner, id, req)
	stream := wantsSSE(r)
	var sse *sseWriter
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	ctx = sandbox.WithHost(ctx, s.serverHost())
	if stream {
		sse = newSSE(w, func() { cancel(errStreamEnded) })
		defer s.closeSSE(sse, owner, id)
		ctx = sandbox.WithEventFunc(ctx, sse.event)
		// The client that streams answers the host calls.
		ctx = sandbox.WithHost(ctx, &clientHost{s: s, owner: owner, session: id, sse: sse})
	}
	start := time.Now()
	res, err := s.cfg.Manager.Eval(ctx, owner, id, req)
	release()
	endTurn()
	s.observe(res, err, start)
	if stream {
		if err != nil {
			code, msg := s.streamError(r, owner, id, err) // cluster.go: session_moved
			sse.send("error", errorBody(code, msg))
			return
		}
		sse.send("done", res)
		settle = !nested
		return
	}
	if err != nil {
		s.sessionError(w, r, err)
		return
	}
	answerNow(w, http.StatusOK, res)
	settle = !nested
}

// errStreamEnded stops the cells of a stream whose client stopped reading.
var errStreamEnded = errors.New("server: the client stopped reading its stream")

// closeSSE ends a stream, logging a stream that ended early because its
// client stopped reading: its cell was stopped as for a disconnect, and
// the session keeps its state and its cut outputs.
func (s *Server) closeSSE(sse *sseWriter, owner, id string) {
	if why := sse.close(); why != "" {
		s.log.Warn("stream ended early", "owner", owner, "session", id, "why", why)
	}
}

func (s *Server) badRequest(w http.ResponseWriter, err error) {
	s.evals.WithLabelValues("invalid").Inc()
	msg := err.Error()
	var re *sandbox.RequestError
	if errors.As(err, &re) {
		msg = re.Detail()
	}
	writeError(w, http.StatusBadRequest, "invalid_request", msg)
}

func (s *Server) observe(res *sandbox.Result, err error, start time.Time) {
	status := "failed"
	switch {
	case err != nil:
	case !res.Details.IsError:
		status = "complete"
	default:
		status = "error"
		for _, c := range res.Details.Cells {
			if c.Status == sandbox.StatusCancelled {
				status = "cancelled"
			}
		}
	}
	s.evals.WithLabelValues(status).Inc()
	if err == nil {
		s.duration.Observe(time.Since(start).Seconds())
	}
}

func (s *Server) logCells(ctx context.Context, what, owner, id string, req sandbox.Request) {
	if !s.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	for i, c := range req.Cells {
		s.log.LogAttrs(ctx, slog.LevelInfo, what, slog.String("owner", owner), slog.String("session", id),
			slog.Int("cell", i), slog.String("language", c.Language), slog.String("code", cut(c.Code, maxLoggedCode)))
	}
}

// cut shortens s to at most n runes, saying so.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func errorCode(err error) string {
	switch {
	case errors.Is(err, sandbox.ErrNoSession):
		return "not_found"
	case errors.Is(err, sandbox.ErrClosed):
		return "shutting_down"
	case errors.Is(err, sandbox.ErrStore):
		return "store_error"
	case errors.Is(err, sandbox.ErrMemoryBudget):
		return "memory_budget"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return "host_error"
}

func wantsSSE(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func errorBody(code, msg string) map[string]apiError {
	return map[string]apiError{"error": {Code: code, Message: msg}}
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, errorBody(code, msg))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}
