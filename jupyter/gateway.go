package jupyter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// TokenEnv is the environment variable that holds the token of an external
// Jupyter server (--jupyter-url). It is read by the command, never passed
// to a kernel (WASMEVAL_ variables are secret-looking: SecretEnvName).
const TokenEnv = "WASMEVAL_JUPYTER_TOKEN"

// Gateway is an external Jupyter Server or Kernel Gateway that runs
// kernels for wasmeval: kernels are made and deleted over its REST API
// (/api/kernels) and spoken to over its websocket
// (/api/kernels/{id}/channels). Its methods are safe for concurrent use.
type Gateway struct {
	base   *url.URL // with a trailing slash
	shown  string   // base for messages: no credentials or query
	token  string
	client *http.Client
	// KernelName is the kernel spec new kernels use: DialGateway sets the
	// server's default (from /api/kernelspecs); set another before the
	// first StartKernel to use it.
	KernelName string
}

// DialGateway checks the server at rawURL (http or https, with any path
// prefix the server is mounted under) with token, by fetching its kernel
// specs, and returns it. An empty token sends no Authorization header.
//
// # Errors
//
// A server that refuses the token (401, 403) gives an error that names
// TokenEnv; one that cannot be reached, an error that names the URL.
func DialGateway(ctx context.Context, rawURL, token string) (*Gateway, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("jupyter: the Jupyter server URL %q is not an http:// or https:// URL with a host; give the server's base URL, such as http://127.0.0.1:8888", redactURL(rawURL))
	}
	u.RawQuery, u.Fragment = "", ""
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	u.RawPath = ""
	shown := *u
	shown.User = nil
	g := &Gateway{base: u, shown: strings.TrimSuffix(shown.String(), "/"), token: token, client: &http.Client{}}
	specs, err := g.kernelSpecs(ctx)
	if err != nil {
		return nil, err
	}
	g.KernelName = specs.Default
	if g.KernelName == "" {
		return nil, fmt.Errorf("jupyter: the Jupyter server at %s has no default kernel spec; it cannot start Python kernels", g.shown)
	}
	return g, nil
}

// URL is the server's base URL, without credentials.
func (g *Gateway) URL() string { return g.shown }

// redactURL drops a URL's credentials and query for messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

type kernelSpecs struct {
	Default     string                     `json:"default"`
	KernelSpecs map[string]json.RawMessage `json:"kernelspecs"`
}

func (g *Gateway) kernelSpecs(ctx context.Context) (kernelSpecs, error) {
	var specs kernelSpecs
	err := g.do(ctx, http.MethodGet, "api/kernelspecs", nil, http.StatusOK, &specs)
	return specs, err
}

func (g *Gateway) endpoint(path string) *url.URL {
	return g.base.ResolveReference(&url.URL{Path: path})
}

func (g *Gateway) header() http.Header {
	h := http.Header{}
	if g.token != "" {
		h.Set("Authorization", "token "+g.token)
	}
	return h
}

// do makes one REST call and decodes its answer into out (when not nil).
func (g *Gateway) do(ctx context.Context, method, path string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	u := g.endpoint(path)
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return fmt.Errorf("jupyter: %s %s: %w", method, path, err)
	}
	req.Header = g.header()
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := g.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("jupyter: %s %s/%s: %w", method, g.shown, path, ctx.Err())
		}
		return fmt.Errorf("jupyter: cannot reach the Jupyter server at %s (%s %s: %v); check --jupyter-url and that the server is running and listening there", g.shown, method, path, unwrapURLError(err))
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != want {
		return g.statusError(method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("jupyter: the Jupyter server at %s answered %s %s with something that is not its JSON (%v); is --jupyter-url a Jupyter Server or Kernel Gateway?", g.shown, method, path, err)
		}
	}
	return nil
}

// unwrapURLError drops *url.Error's repetition of the method and URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func (g *Gateway) statusError(method, path string, code int, body []byte) error {
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		how := "set " + TokenEnv + " to the server's token"
		if g.token != "" {
			how = TokenEnv + " does not hold the server's token; set it to the token the server was started with"
		}
		return fmt.Errorf("jupyter: the Jupyter server at %s refused the request (%s %s: HTTP %d): %s", g.shown, method, path, code, how)
	case http.StatusNotFound:
		if path == "api/kernelspecs" {
			return fmt.Errorf("jupyter: %s has no /api/kernelspecs (HTTP 404); give --jupyter-url the base URL of a Jupyter Server or Kernel Gateway", g.shown)
		}
	}
	msg := strings.TrimSpace(string(body))
	var j struct {
		Message string `json:"message"`
		Reason  string `json:"reason"`
	}
	if json.Unmarshal(body, &j) == nil && (j.Message != "" || j.Reason != "") {
		msg = strings.TrimSpace(j.Reason + " " + j.Message)
	}
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return fmt.Errorf("jupyter: the Jupyter server at %s answered %s %s with HTTP %d: %s", g.shown, method, path, code, msg)
}

// httpStatusError is the error of a websocket handshake the server
// answered with an HTTP status.
func httpStatusError(what string, code int, err error) error {
	if code == http.StatusUnauthorized || code == http.StatusForbidden {
		return fmt.Errorf("jupyter: %s: the Jupyter server refused the token (HTTP %d): set %s to the server's token", what, code, TokenEnv)
	}
	return fmt.Errorf("jupyter: %s: HTTP %d: %w", what, code, err)
}

// RemoteKernel is a kernel running on a Gateway. It implements Kernel.
type RemoteKernel struct {
	g      *Gateway
	id     string
	conn   *WebsocketConn
	client *Client

	closeOnce sync.Once
	closeErr  error
}

// kernelModel is the server's description of a kernel.
type kernelModel struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// StartKernel makes a kernel on the server (POST /api/kernels), opens its
// channels and does the kernel_info handshake. The kernel is deleted again
// when any step fails.
func (g *Gateway) StartKernel(ctx context.Context) (*RemoteKernel, error) {
	var km kernelModel
	if err := g.do(ctx, http.MethodPost, "api/kernels", map[string]string{"name": g.KernelName}, http.StatusCreated, &km); err != nil {
		return nil, err
	}
	if km.ID == "" {
		return nil, fmt.Errorf("jupyter: the Jupyter server at %s made a kernel without an id", g.shown)
	}
	k := &RemoteKernel{g: g, id: km.ID}
	fail := func(err error) (*RemoteKernel, error) {
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if k.conn != nil {
			k.conn.Close()
		}
		k.g.deleteKernel(dctx, k.id)
		return nil, err
	}
	session := NewID()
	ws := g.endpoint("api/kernels/" + url.PathEscape(km.ID) + "/channels")
	ws.Scheme = map[string]string{"http": "ws", "https": "wss"}[ws.Scheme]
	ws.RawQuery = url.Values{"session_id": {session}}.Encode()
	conn, err := DialWebsocket(ctx, ws.String(), g.header())
	if err != nil {
		return fail(err)
	}
	k.conn = conn
	k.client = NewClient(conn, session)
	if _, err := k.client.KernelInfo(ctx); err != nil {
		return fail(fmt.Errorf("jupyter: the kernel %s on %s did not answer kernel_info: %w", km.ID, g.shown, err))
	}
	return k, nil
}

// Start is StartKernel as a Starter: opts are not sent to the server (its
// kernels run on its own machine, in its own folder and environment; the
// runtime's prelude sets the session's).
func (g *Gateway) Start(ctx context.Context, opts StartOptions) (Kernel, error) {
	k, err := g.StartKernel(ctx)
	if err != nil {
		return nil, err
	}
	return k, nil
}

// ID is the kernel's id on the server.
func (k *RemoteKernel) ID() string { return k.id }

// Client talks to the kernel.
func (k *RemoteKernel) Client() *Client { return k.client }

// Conn is the kernel's websocket.
func (k *RemoteKernel) Conn() *WebsocketConn { return k.conn }

// Dead is closed when the kernel restarted or died behind the server, or
// the websocket ended.
func (k *RemoteKernel) Dead() <-chan struct{} { return k.conn.Dead() }

// Interrupt asks the server to interrupt the kernel
// (POST /api/kernels/{id}/interrupt).
func (k *RemoteKernel) Interrupt(ctx context.Context) error {
	return k.g.do(ctx, http.MethodPost, "api/kernels/"+url.PathEscape(k.id)+"/interrupt", nil, http.StatusNoContent, nil)
}

// Close closes the websocket and deletes the kernel
// (DELETE /api/kernels/{id}); a kernel the server no longer has is not an
// error.
func (k *RemoteKernel) Close(ctx context.Context) error {
	k.closeOnce.Do(func() {
		k.client.Close()
		k.closeErr = k.g.deleteKernel(ctx, k.id)
	})
	return k.closeErr
}

func (g *Gateway) deleteKernel(ctx context.Context, id string) error {
	err := g.do(ctx, http.MethodDelete, "api/kernels/"+url.PathEscape(id), nil, http.StatusNoContent, nil)
	if err != nil && strings.Contains(err.Error(), "HTTP 404") {
		return nil
	}
	return err
}

// Kernels lists the ids of the server's kernels (GET /api/kernels).
func (g *Gateway) Kernels(ctx context.Context) ([]string, error) {
	var ks []kernelModel
	if err := g.do(ctx, http.MethodGet, "api/kernels", nil, http.StatusOK, &ks); err != nil {
		return nil, err
	}
	ids := make([]string, len(ks))
	for i, km := range ks {
		ids[i] = km.ID
	}
	return ids, nil
}

var (
	_ Kernel = (*RemoteKernel)(nil)
	_ Conn   = (*WebsocketConn)(nil)
)
