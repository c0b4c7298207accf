//go:build linux

package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

const (
	tokenA = "cluster-token-a"
	tokenB = "cluster-token-b"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// wasmevalBin builds cmd/wasmeval once per test process.
func wasmevalBin(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wasmeval-cluster-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "wasmeval")
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/wasmeval").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// lockedBuffer is a process's log.
type lockedBuffer = testenv.LockedBuffer

// proc is a child process of the test other than a node: HAProxy.
type proc struct {
	name string
	addr string
	cmd  *exec.Cmd
	logs *lockedBuffer
	done chan struct{}
}

func startProc(t testing.TB, name, addr string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, addr: addr, logs: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(args[0], args[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			keepLog(t, name, p.logs.String())
		}
	})
	return p
}

func (p *proc) kill() {
	select {
	case <-p.done:
	default:
		p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// node is a `wasmeval serve` process of the test, one node over a
// shared store.
type node struct {
	*testenv.Serve
	name string
	addr string
}

// startNode starts `wasmeval serve` as node id over storeURL (through
// testenv.StartServeBinary, on a loopback port of the kernel's choosing,
// which it advertises) and waits until its /readyz answers 200. Its whole
// log outlives a failed test, in the temporary folder.
func startNode(t testing.TB, id, storeURL string, ttl time.Duration, extra ...string) *node {
	t.Helper()
	args := append([]string{"--store", storeURL, "--node-id", id, "--lease-ttl", ttl.String(),
		"--token", tokenA, "--token", tokenB, "--workspace", t.TempDir(), "--shutdown-timeout", "10s"}, extra...)
	s := testenv.StartServeBinary(t, wasmevalBin(t), nil, args...)
	n := &node{Serve: s, name: id, addr: s.Addr}
	t.Cleanup(func() { // before the Serve's own cleanup stops it
		if t.Failed() {
			keepLog(t, id, s.Log())
		}
	})
	waitReady(t, n)
	return n
}

// kill kills the node with SIGKILL and waits until it is gone.
func (n *node) kill() {
	n.Cmd.Process.Kill()
	for !n.Exited() {
		time.Sleep(10 * time.Millisecond)
	}
}

func (n *node) exited() bool { return n.Exited() }

// keepLog writes a process's whole log to the temporary folder, for a
// failure's cause, and logs its end.
func keepLog(t testing.TB, name, log string) {
	file := filepath.Join(os.TempDir(), fmt.Sprintf("wasmeval-cluster-%s-%d.log", name, os.Getpid()))
	os.WriteFile(file, []byte(log), 0o600)
	t.Logf("%s's log (all of it in %s; the last 2000 bytes):\n%s", name, file, tail(log, 2000))
}

func waitReady(t testing.TB, n *node) {
	t.Helper()
	deadline := time.Now().Add(testenv.ServeStartTimeout)
	for {
		resp, err := http.Get("http://" + n.addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if n.exited() {
			t.Fatalf("%s exited before it was ready:\n%s", n.name, tail(n.Log(), 4000))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready within %v:\n%s", n.name, testenv.ServeStartTimeout, tail(n.Log(), 4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startHAProxy starts Debian's haproxy in front of the nodes, round
// robin, with /readyz as the health check, and returns its address.
func startHAProxy(t testing.TB, nodes []*node) string {
	t.Helper()
	bin := testenv.HAProxy(t)
	port := freePort(t)
	var servers strings.Builder
	for i, n := range nodes {
		fmt.Fprintf(&servers, "  server n%d %s check\n", i+1, n.addr)
	}
	cfg := fmt.Sprintf(`global
  maxconn 2000
defaults
  mode http
  timeout connect 2s
  timeout client 180s
  timeout server 180s
  retries 3
  option redispatch
frontend fe
  bind 127.0.0.1:%d
  default_backend nodes
backend nodes
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  default-server inter 300ms fall 2 rise 2
  # An MCP session lives on the node that opened it (README): its
  # requests go back there, by the Mcp-Session-Id its answer gave.
  stick-table type string len 64 size 100k expire 30m
  stick on req.hdr(Mcp-Session-Id)
  stick store-response res.hdr(Mcp-Session-Id)
%s`, port, servers.String())
	file := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p := startProc(t, "haproxy", addr, bin, "-db", "-f", file)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("haproxy did not start:\n%s", p.logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// client talks to the API through one address.
type client struct {
	base string
	hc   *http.Client
}

func newClient(addr string) *client {
	return &client{base: "http://" + addr, hc: &http.Client{
		Timeout:   120 * time.Second,
		Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64},
	}}
}

type answer struct {
	status int
	body   []byte
	err    error
}

func (c *client) do(ctx context.Context, method, path, token string, body any) answer {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.hc.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, body: b, err: err}
}

func (c *client) create(ctx context.Context, token string) (string, answer) {
	a := c.do(ctx, "POST", "/v1/sessions", token, nil)
	if a.err != nil || a.status != http.StatusCreated {
		return "", a
	}
	var v struct{ ID string }
	json.Unmarshal(a.body, &v)
	return v.ID, a
}

func (c *client) eval(ctx context.Context, token, id, lang, code string) (*sandbox.Result, answer) {
	a := c.do(ctx, "POST", "/v1/sessions/"+id+"/eval", token, sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: code}}})
	if a.err != nil || a.status != http.StatusOK {
		return nil, a
	}
	var res sandbox.Result
	if err := json.Unmarshal(a.body, &res); err != nil {
		a.err = err
		return nil, a
	}
	return &res, a
}

func output(res *sandbox.Result) string {
	var b strings.Builder
	for _, c := range res.Details.Cells {
		b.WriteString(c.Output)
	}
	return b.String()
}

// metric sums the samples of a metric (any labels) in a node's /metrics.
func metric(t testing.TB, c *client, name string) float64 {
	t.Helper()
	a := c.do(context.Background(), "GET", "/metrics", tokenA, nil)
	if a.err != nil || a.status != http.StatusOK {
		t.Fatalf("metrics: %d %v", a.status, a.err)
	}
	sum := 0.0
	for _, line := range strings.Split(string(a.body), "\n") {
		if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
			var v float64
			fields := strings.Fields(line)
			fmt.Sscan(fields[len(fields)-1], &v)
			sum += v
		}
	}
	return sum
}

// listedIDs is GET /v1/sessions for token through c: the ids listed.
func listedIDs(t testing.TB, c *client, token string) []string {
	t.Helper()
	a := c.do(context.Background(), "GET", "/v1/sessions", token, nil)
	if a.err != nil || a.status != http.StatusOK {
		t.Fatalf("GET /v1/sessions through %s: %d %s %v", c.base, a.status, a.body, a.err)
	}
	var v struct{ Sessions []struct{ ID string } }
	if err := json.Unmarshal(a.body, &v); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range v.Sessions {
		ids = append(ids, s.ID)
	}
	return ids
}
