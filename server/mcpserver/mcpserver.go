package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/sandbox"
)

// Config configures a Server.
type Config struct {
	// Sandbox runs run_code's one-shot sessions. Required.
	Sandbox *sandbox.Sandbox
	// Manager holds eval's sessions and the code contexts. Required; the
	// Server does not close it.
	Manager *sandbox.Manager
	// Version is reported to clients as the server's version; empty means
	// "(devel)".
	Version string
	// Logger receives one line per tool call, code cut at 200 characters;
	// nil means none.
	Logger *slog.Logger
	// TempDir holds run_code's one-shot session folders; empty means
	// os.TempDir().
	TempDir string
	// Admit, when set, is asked before code runs; ok false makes the call a
	// tool error that says the server is busy. done ends the admission.
	// nil admits DefaultMaxInFlight calls at once: a client that sends
	// thousands of calls without waiting (each run_code a new interpreter)
	// must not make the host hold thousands of sessions.
	Admit func() (done func(), ok bool)
	// Turn, when set, is asked before Admit by a call that runs code in a
	// session (eval, run_in_code_context): it waits until the session's
	// earlier evals are done, so that a call queued on a busy session
	// holds no admission meanwhile. The error (ctx's, or one saying too
	// many wait) becomes the call's. end ends the turn.
	Turn func(ctx context.Context, session string) (end func(), err error)
	// Host answers the cells' tool and agent calls, and llm when the
	// client does not offer MCP sampling; nil means none (those helpers
	// then fail with a message saying so).
	Host hostcalls.Host
	// Create, when set, makes the sessions in place of Manager.Create, so a
	// server can apply its per-owner quota.
	Create func(ctx context.Context, owner string) (string, error)
	// CreateWith, when set, makes the sessions of code contexts that name
	// their Python backend (create_code_context's python) in place of
	// Manager.CreateWith, so a server can apply its quota to them too.
	CreateWith func(ctx context.Context, owner string, o sandbox.CreateOptions) (string, error)
	// Tools are the profiles whose tools are served (--tools); the zero
	// value serves all. See profiles.go.
	Tools profiles.Set
	// KernelMode is the python profile's kernel mode for calls that name
	// none (--kernel-mode): profiles.KernelSession ("" too) or
	// profiles.KernelPerCall.
	KernelMode string
	// Elsewhere, when set, is asked first by a call of a tool that runs in
	// a session of its own (run_in_code_context, delete_code_context, …)
	// whether another process runs that session (on a node of several,
	// the node holding its lease), and if so, makes the call there:
	// handled false runs it here. header is the call's HTTP request header
	// (the caller's bearer token, for the hop); a failed hop is err, the
	// call's tool error.
	Elsewhere func(ctx context.Context, header http.Header, tool string, args []byte) (result any, failed, handled bool, err error)
}

// DefaultMaxInFlight is how many tool calls run code at once when
// Config.Admit is nil.
const DefaultMaxInFlight = 16

// Server serves wasmeval's MCP tools. Make one with New.
type Server struct {
	cfg Config
	srv *mcp.Server
	log *slog.Logger

	http atomic.Bool // HTTPHandler was called: sessions with ids are HTTP's

	mu    sync.Mutex
	conns map[*mcp.ServerSession]*conn
	byID  map[string]*conn // the conns of HTTP sessions, by MCP session id
}

// conn is what the server keeps per MCP session.
type conn struct {
	owner     string // for connections without a bearer token
	evalID    string // eval's session, made on first use
	evalOwner string // and its owner
	// seen says the server sees the connection's answers written;
	// settle are the sessions to settle after the next (settle.go).
	seen   bool
	settle []*sandbox.Session
}

// New checks cfg and returns a Server with its tools.
func New(cfg Config) (*Server, error) {
	if cfg.Sandbox == nil || cfg.Manager == nil {
		return nil, errors.New("mcpserver: Config.Sandbox and Config.Manager are required")
	}
	if cfg.Version == "" {
		cfg.Version = "(devel)"
	}
	if cfg.Create == nil {
		cfg.Create = cfg.Manager.Create
	}
	if cfg.Admit == nil {
		slots := make(chan struct{}, DefaultMaxInFlight)
		cfg.Admit = func() (func(), bool) {
			select {
			case slots <- struct{}{}:
				return func() { <-slots }, true
			default:
				return nil, false
			}
		}
	}
	s := &Server{cfg: cfg, log: cfg.Logger, conns: map[*mcp.ServerSession]*conn{}, byID: map[string]*conn{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "wasmeval", Title: "wasmeval sandbox", Version: cfg.Version}, &mcp.ServerOptions{
		SupportedProtocolVersions: protocolVersions(),
		Instructions: "Runs Python (py), JavaScript (js) and TypeScript (ts) code in a WebAssembly sandbox. " +
			"eval keeps one session per MCP connection: variables, imports and files persist across calls. " +
			"python runs Python cells in that session too (the Jupyter-backed python tool's shape), and evaluate_python short scripts in a fresh namespace of it (the asteval tool's). " +
			"run_code is one-shot; create_code_context, run_in_code_context and delete_code_context manage persistent code contexts by contextId (the CodeInterpreter interface).",
	})
	s.addTools()
	s.srv.AddReceivingMiddleware(s.streamCalls) // progress and log notifications (progress.go)
	s.addProfileTools()
	return s, nil
}

// maxProtocolVersion is the newest MCP version served. From 2026-07-28 a
// server may not send sampling/createMessage while it serves a tool call
// (it must answer "input required" and be called again, SEP-2322), which a
// running cell cannot do: llm() blocks the guest mid-cell. Older versions
// let it, so those are the ones negotiated.
const maxProtocolVersion = "2025-11-25"

func protocolVersions() []string {
	var vs []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v <= maxProtocolVersion {
			vs = append(vs, v)
		}
	}
	return vs
}

// MCP is the SDK server, for Run over a transport such as
// mcp.StdioTransport or one of mcp.NewInMemoryTransports.
func (s *Server) MCP() *mcp.Server { return s.srv }

type ownerKey struct{}

// WithOwner returns a context whose HTTP requests HTTPHandler serves as
// owner's. Servers set it after they have checked the caller's bearer token.
func WithOwner(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, ownerKey{}, owner)
}

// HTTPHandler serves the streamable HTTP transport. Every request must
// carry an owner set with WithOwner (the caller's authenticated identity);
// one without answers 401. An MCP session is bound to the owner that opened
// it: another owner's requests for it answer 403. sessionTimeout closes MCP
// sessions idle for that long (zero: never); maxBody caps request bodies.
func (s *Server) HTTPHandler(sessionTimeout time.Duration, maxBody int64) http.Handler {
	s.http.Store(true)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, &mcp.StreamableHTTPOptions{
		Logger:              s.cfg.Logger,
		SessionTimeout:      sessionTimeout,
		MaxRequestBodyBytes: maxBody,
	})
	// The SDK binds sessions to TokenInfo.UserID, which only its bearer
	// middleware sets: feed it the owner the outer server checked.
	verify := func(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		owner, _ := r.Context().Value(ownerKey{}).(string)
		if owner == "" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: owner}, nil
	}
	return auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(s.capSessions(refuseBatches(s.answeredHTTP(h), maxBody)))
}

// MaxSessionsPerOwner caps the MCP sessions one owner holds open over
// HTTP at once: each lives until it is deleted or idle for the session
// timeout, so an owner that opened sessions in a loop would otherwise fill
// the host's memory with them.
const MaxSessionsPerOwner = 100

// capSessions refuses a request that would open an owner's
// MaxSessionsPerOwner+1st MCP session, with HTTP 429 and a JSON-RPC error.
func (s *Server) capSessions(h http.Handler) http.Handler {
	var (
		mu      sync.Mutex
		byOwner = map[string]map[string]bool{} // owner -> session ids
		pending = map[string]int{}             // owner -> sessions being opened
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		owner, _ := r.Context().Value(ownerKey{}).(string)
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" || owner == "" {
			h.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		if ids := byOwner[owner]; len(ids)+pending[owner] >= MaxSessionsPerOwner {
			live := map[string]bool{}
			for ss := range s.srv.Sessions() {
				live[ss.ID()] = true
			}
			for id := range ids {
				if !live[id] {
					delete(ids, id)
				}
			}
		}
		if len(byOwner[owner])+pending[owner] >= MaxSessionsPerOwner {
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
			json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32000,
				"message": fmt.Sprintf("this token holds %d MCP sessions, the most it may; end one (DELETE /mcp with its Mcp-Session-Id) or let an idle one time out", MaxSessionsPerOwner)}})
			return
		}
		pending[owner]++
		mu.Unlock()
		defer func() {
			mu.Lock()
			defer mu.Unlock()
			if pending[owner]--; pending[owner] == 0 {
				delete(pending, owner)
			}
			if id := w.Header().Get("Mcp-Session-Id"); id != "" {
				if byOwner[owner] == nil {
					byOwner[owner] = map[string]bool{}
				}
				byOwner[owner][id] = true
			}
		}()
		h.ServeHTTP(w, r)
	})
}

// batchRefusal is the one answer to a JSON-RPC batch, on every face.
const batchRefusal = "Invalid Request: JSON-RPC batches are not supported (MCP removed them in its 2025-06-18 revision); send one JSON-RPC message at a time"

// refuseBatches answers a POST whose body is a JSON-RPC batch (an array)
// with HTTP 400 and one JSON-RPC error without an id (-32600), as the
// streamable HTTP transport says a server answers input it cannot accept.
// The SDK still takes batches from clients that negotiate a protocol older
// than 2025-06-18, and serves every message of one in parallel, however
// many; the current protocol, which the SDK implements, has none, so no
// version gets them. Only the leading whitespace and the first byte of the
// body are read here.
func refuseBatches(h http.Handler, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			h.ServeHTTP(w, r)
			return
		}
		br := bufio.NewReader(r.Body)
		var lead []byte
		for maxBody <= 0 || int64(len(lead)) <= maxBody {
			c, err := br.ReadByte()
			if err != nil {
				break
			}
			lead = append(lead, c)
			if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
				break
			}
		}
		if len(lead) > 0 && lead[len(lead)-1] == '[' {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil,
				"error": map[string]any{"code": codeInvalidRequest, "message": batchRefusal}})
			return
		}
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(lead), br), r.Body}
		h.ServeHTTP(w, r)
	})
}

// conn returns the state of ss, making it on first use. The eval session of
// a connection is deleted when the connection ends.
func (s *Server) conn(ss *mcp.ServerSession) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.conns[ss]
	if !ok {
		c = &conn{owner: "mcp-" + randomID()}
		s.conns[ss] = c
		id := ss.ID()
		if id != "" && s.http.Load() { // over HTTP: answeredHTTP sees its answers
			c.seen = true
			s.byID[id] = c
		}
		go func() {
			ss.Wait()
			s.mu.Lock()
			delete(s.conns, ss)
			if s.byID[id] == c {
				delete(s.byID, id)
			}
			c.settle = nil
			s.mu.Unlock()
			if c.evalID != "" {
				s.cfg.Manager.Delete(context.Background(), c.evalOwner, c.evalID)
			}
		}()
	}
	return c
}

// owner is who owns the sessions a call makes: the bearer token's owner
// over HTTP, else the connection.
func (s *Server) owner(_ *mcp.ServerSession, c *conn, extra *mcp.RequestExtra) string {
	if extra != nil && extra.TokenInfo != nil && extra.TokenInfo.UserID != "" {
		return extra.TokenInfo.UserID
	}
	return c.owner
}

func randomID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Schemas are written out rather than inferred: they carry the enums and
// bounds of the cell contract, and clients show their descriptions.
var (
	cellSchema = `{
	  "type": "object",
	  "properties": {
	    "language": {"type": "string", "enum": ["py", "js", "ts"], "description": "py for Python 3.11, js for JavaScript (ES2020+, no modules), ts for TypeScript (types stripped; shares the js state)"},
	    "code": {"type": "string", "minLength": 1, "description": "the code to run; the last expression's value is shown"},
	    "title": {"type": "string", "description": "a name for the cell in the result"},
	    "timeout": {"type": "integer", "minimum": 1, "maximum": 600, "description": "seconds before the cell is stopped (default 30)"},
	    "reset": {"type": "boolean", "description": "discard this language's state before running"}
	  },
	  "required": ["language", "code"]
	}`
	evalSchema = json.RawMessage(`{
	  "type": "object",
	  "properties": {
	    "cells": {"type": "array", "minItems": 1, "items": ` + cellSchema + `,
	      "description": "cells run in order in this connection's session; state persists per language; the first failing cell stops the rest"}
	  },
	  "required": ["cells"],
	  "additionalProperties": false
	}`)
)

// EvalInput is the eval tool's input: DESIGN.md's cell request.
type EvalInput = sandbox.Request

func (s *Server) addTools() {
	notRO := false
	s.srv.AddTool(&mcp.Tool{
		Name:  "eval",
		Title: "Run cells",
		Description: "Runs Python (py), JavaScript (js) and TypeScript (ts) cells in order in this connection's sandbox session. " +
			"Variables, imports and files persist across calls (per language); reset discards a language's state. " +
			"Returns the cells' output as text and displayed images as image content; the structured result has per-cell details.",
		InputSchema:  evalSchema,
		OutputSchema: evalOutputSchema,
		Annotations:  &mcp.ToolAnnotations{DestructiveHint: &notRO, OpenWorldHint: &notRO},
	}, typed(decodeEval, s.eval))
}

type sessionKey struct{}

// runCtx is the context code runs under: it carries the MCP session, for
// SamplingHost, and sends the cells' host calls to a SamplingHost.
func (s *Server) runCtx(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	ctx = context.WithValue(ctx, sessionKey{}, req.Session)
	return sandbox.WithHost(ctx, &SamplingHost{Fallback: s.cfg.Host})
}

// requestError turns a *sandbox.RequestError into its detail, without the
// package prefix: the model reads it.
func requestError(err error) error {
	var re *sandbox.RequestError
	if errors.As(err, &re) {
		return errors.New(re.Detail())
	}
	return err
}

func (s *Server) admit() (func(), error) {
	if s.cfg.Admit == nil {
		return func() {}, nil
	}
	done, ok := s.cfg.Admit()
	if !ok {
		return nil, errors.New("the server is running as many evals as it allows; retry in a second")
	}
	return done, nil
}

// turn waits for session's turn (Config.Turn).
func (s *Server) turn(ctx context.Context, session string) (func(), error) {
	if s.cfg.Turn == nil {
		return func() {}, nil
	}
	return s.cfg.Turn(ctx, session)
}

// hostError is a failure of the host, said for a model.
func hostError(err error) error {
	switch {
	case errors.Is(err, sandbox.ErrNoSession):
		return errors.New("no such code context (never created, deleted, evicted after being idle, or not yours); create one with create_code_context")
	case errors.Is(err, sandbox.ErrClosed):
		return errors.New("the server is shutting down")
	case errors.Is(err, sandbox.ErrMemoryBudget): // not a failure: try again later
		return errors.New(strings.TrimPrefix(err.Error(), "sandbox: "))
	}
	return fmt.Errorf("host error: %s", strings.TrimPrefix(err.Error(), "sandbox: "))
}

func (s *Server) logCells(ctx context.Context, tool, owner string, req sandbox.Request) {
	if !s.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	for i, c := range req.Cells {
		code := []rune(c.Code)
		short := c.Code
		if len(code) > 200 {
			short = string(code[:200]) + "…"
		}
		s.log.LogAttrs(ctx, slog.LevelInfo, "mcp "+tool, slog.String("owner", owner),
			slog.Int("cell", i), slog.String("language", c.Language), slog.String("code", short))
	}
}

func (s *Server) eval(ctx context.Context, req *mcp.CallToolRequest, _ EvalInput) (*mcp.CallToolResult, any, error) {
	// The schema checked the shape; DecodeRequest is the contract's own
	// check, with its messages (unknown fields, bounds).
	in, err := sandbox.DecodeRequest(req.Params.Arguments)
	if err != nil {
		return nil, nil, requestError(err)
	}
	c := s.conn(req.Session)
	owner := s.owner(req.Session, c, req.Extra)
	s.mu.Lock()
	id := c.evalID
	s.mu.Unlock()
	// Wait behind the session's running eval before taking a slot.
	endTurn := func() {}
	defer func() { endTurn() }()
	takeTurn := func(id string) error {
		endTurn()
		end, err := s.turn(ctx, id)
		if err != nil {
			endTurn = func() {}
			return err
		}
		endTurn = end
		return nil
	}
	if id != "" {
		if err := takeTurn(id); err != nil {
			return nil, nil, err
		}
	}
	done, err := s.admit()
	if err != nil {
		return nil, nil, err
	}
	defer done()
	s.logCells(ctx, "eval", owner, in)

	var note string
	for attempt := 0; ; attempt++ {
		if id == "" {
			if id, err = s.cfg.Create(ctx, owner); err != nil {
				return nil, nil, hostError(err)
			}
			// The new session's turn is free (no other call knows it
			// yet): take it before the connection's next calls can.
			if err := takeTurn(id); err != nil {
				return nil, nil, err
			}
			s.mu.Lock()
			c.evalID, c.evalOwner = id, owner
			s.mu.Unlock()
		}
		sess, _ := s.cfg.Manager.Session(owner, id) // to settle after the answer
		res, err := s.cfg.Manager.Eval(s.runCtx(ctx, req), owner, id, in)
		if errors.Is(err, sandbox.ErrNoSession) && attempt == 0 {
			// Evicted while idle: start again, and say so.
			id, note = "", "(note: this connection's previous session was evicted after being idle; it starts fresh)\n"
			continue
		}
		if err != nil {
			return nil, nil, hostError(err)
		}
		s.settleAfterAnswer(req.Session, sess)
		return toolResult(res, note), res.Details, nil
	}
}

// toolResult is res's content as MCP content, IsError as the cells'.
func toolResult(res *sandbox.Result, note string) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: res.Details.IsError, Content: []mcp.Content{}}
	for _, c := range res.Content {
		switch c.Type {
		case "image":
			data, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				out.Content = append(out.Content, &mcp.TextContent{Text: fmt.Sprintf("(an image of type %s that was not valid base64)", c.MIMEType)})
				continue
			}
			out.Content = append(out.Content, &mcp.ImageContent{Data: data, MIMEType: c.MIMEType})
		default:
			text := c.Text
			if note != "" && len(out.Content) == 0 {
				text = note + text
			}
			out.Content = append(out.Content, &mcp.TextContent{Text: text})
		}
	}
	return out
}
