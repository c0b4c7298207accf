package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/store"
)

// Code contexts on a node of several. A code context is a session, run by
// the node that holds its lease. The JSON API's session requests name the
// session in their path (/v1/sessions/{id}/…), and route passes them on to
// that node; the code-context tools name it in their arguments
// (contextId) instead, on both faces: POST /v1/profiles/{tool} and MCP's
// tools. The functions here pass those on too, so that a context made
// through one node's MCP session is usable through every node.

// contextElsewhere is the lease of the session a code-context call names
// (args' contextId) when another live node holds it. ok false means run
// the call here: no cluster, no contextId, held here, never stored, or
// free or run out (the call's load then takes it over, as route does).
func (s *Server) contextElsewhere(ctx context.Context, args []byte) (l store.Lease, ok bool, err error) {
	n := s.cfg.Node
	if n == nil || n.leases == nil {
		return l, false, nil
	}
	var p struct {
		ContextID string `json:"contextId"`
	}
	if json.Unmarshal(args, &p) != nil || store.CheckID(p.ContextID) != nil || n.holdsLive(p.ContextID) {
		return l, false, nil
	}
	l, err = n.leases.Get(ctx, p.ContextID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return l, false, nil
	case err != nil:
		return l, false, err
	}
	return l, l.Live && l.Holder != n.cfg.ID, nil
}

// toolElsewhere passes an HTTP call of a code-context tool (POST
// /v1/profiles/{tool}, body already read) on to the node running its
// context, as route does for the session requests. A call another node
// passed on is answered here. It reports whether it answered.
func (s *Server) toolElsewhere(w http.ResponseWriter, r *http.Request, body []byte) bool {
	if r.Header.Get(forwardedHeader) != "" {
		return false
	}
	l, ok, err := s.contextElsewhere(r.Context(), body)
	switch {
	case err != nil:
		storeUnavailable(w, err)
		return true
	case !ok:
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	s.cfg.Node.forward(w, r, l)
	return true
}

// maxForwardedResult caps the answer of a tool call made on another node
// for an MCP client: far above what a run's capped outputs make.
const maxForwardedResult = 64 << 20

// mcpElsewhere is mcpserver.Config.Elsewhere: an MCP call of a
// code-context tool whose context another node runs is made on that node,
// through its JSON API's POST /v1/profiles/{tool}, with the caller's
// bearer token, and its answer decoded as the tool's result.
func (s *Server) mcpElsewhere(ctx context.Context, header http.Header, tool string, args []byte) (any, bool, bool, error) {
	var res any
	switch tool {
	case "run_in_code_context":
		res = new(profiles.CodeResult)
	case "delete_code_context":
		res = new(profiles.CodeContextDeleted)
	default:
		return nil, false, false, nil
	}
	l, ok, err := s.contextElsewhere(ctx, args)
	switch {
	case err != nil:
		return nil, false, true, fmt.Errorf("the session store cannot be reached (%v); retry in a few seconds", err)
	case !ok:
		return nil, false, false, nil
	}
	n := s.cfg.Node
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+l.Addr+"/v1/profiles/"+tool, bytes.NewReader(args))
	if err != nil {
		return nil, false, true, fmt.Errorf("host error: %v", err)
	}
	req.Header.Set("Authorization", header.Get("Authorization"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(forwardedHeader, n.cfg.ID)
	resp, err := (&http.Client{Transport: n.proxyTr}).Do(req)
	if err != nil {
		n.metrics.proxied.WithLabelValues("unreachable").Inc()
		wait := max(1, int(time.Until(l.Expires).Seconds()+1))
		return nil, false, true, fmt.Errorf("code context %s is run by node %s at %s, which did not answer (%v); its lease runs out within %d s, then any node takes the context over: retry then",
			l.ID, l.Holder, l.Addr, err, wait)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxForwardedResult+1))
	switch {
	case err != nil:
		return nil, false, true, fmt.Errorf("node %s's answer for code context %s broke off: %v; retry", l.Holder, l.ID, err)
	case len(body) > maxForwardedResult:
		return nil, false, true, fmt.Errorf("node %s's answer for code context %s is over %d MiB", l.Holder, l.ID, maxForwardedResult>>20)
	}
	n.metrics.proxied.WithLabelValues("ok").Inc()
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error apiError `json:"error"`
		}
		if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
			return nil, false, true, fmt.Errorf("node %s answered %s for code context %s", l.Holder, resp.Status, l.ID)
		}
		return nil, false, true, errors.New(e.Error.Message)
	}
	if err := json.Unmarshal(body, res); err != nil {
		return nil, false, true, fmt.Errorf("node %s's answer for code context %s does not decode: %v", l.Holder, l.ID, err)
	}
	run, _ := res.(*profiles.CodeResult)
	return res, run != nil && run.Failed(), true, nil
}
