package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

// nodeUsage is the part of serve's usage about running several nodes.
const nodeUsage = `  --node-id ID
        this node's name in leases, logs and metrics; unique among the nodes
        sharing a store (default: the host name and the port, like web1:8080)
  --advertise HOST:PORT
        where the other nodes reach this one, written into its leases so
        that a request reaching another node is passed on here (default:
        --addr, or the host name and port when --addr listens on all
        addresses)
  --lease-ttl DURATION
        with a postgres:// store, how long this node's claim on a session
        lasts unless renewed (renewed every third of it): a node that dies
        holds its sessions this long before another node takes them over
        (default 10s)
`

// nodeFlags are serve's flags for being one node of several.
type nodeFlags struct {
	id, advertise string
	leaseTTL      time.Duration
	ln            net.Listener // opened by listen, so the default id knows the port
	nodeID, addr  string       // the id and address in effect
}

func (f *nodeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.id, "node-id", "", "")
	fs.StringVar(&f.advertise, "advertise", "", "")
	fs.DurationVar(&f.leaseTTL, "lease-ttl", server.DefaultLeaseTTL, "")
}

func (f *nodeFlags) check() error {
	if f.leaseTTL < 300*time.Millisecond {
		return fmt.Errorf("--lease-ttl %s: give at least 300ms, like 10s", f.leaseTTL)
	}
	if f.advertise != "" {
		if _, _, err := net.SplitHostPort(f.advertise); err != nil {
			return fmt.Errorf("--advertise %q: want HOST:PORT, like 10.0.0.5:8080", f.advertise)
		}
	}
	return nil
}

// listen opens the listener now, before the sandbox is made, so that the
// default node id knows its port, and returns logger with the node's id
// on every line when --node-id is given or the store is one that several
// nodes share (a lone serve's log lines stay as they were).
func (f *nodeFlags) listen(addr, storeURL string, logger *slog.Logger) (*slog.Logger, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return logger, err
	}
	f.ln = ln
	tcp := ln.Addr().(*net.TCPAddr)
	host, _ := os.Hostname()
	if host == "" {
		host = "localhost"
	}
	f.nodeID = f.id
	if f.nodeID == "" {
		f.nodeID = net.JoinHostPort(host, strconv.Itoa(tcp.Port))
	}
	f.addr = f.advertise
	if f.addr == "" {
		f.addr = ln.Addr().String()
		if tcp.IP.IsUnspecified() {
			f.addr = net.JoinHostPort(host, strconv.Itoa(tcp.Port))
		}
	}
	if f.id != "" || strings.HasPrefix(storeURL, "postgres://") || strings.HasPrefix(storeURL, "postgresql://") {
		logger = logger.With("node", f.nodeID)
	}
	return logger, nil
}

// node makes this process a node over mo.Store (when there is one) and
// gives the manager the node's store instead: saves fenced by the node's
// leases, measured for /metrics.
func (f *nodeFlags) node(mo *sandbox.ManagerOptions, logger *slog.Logger) (*server.Node, error) {
	if mo.Store == nil {
		return nil, nil
	}
	node, err := server.NewNode(server.NodeConfig{ID: f.nodeID, Addr: f.addr, Store: mo.Store, LeaseTTL: f.leaseTTL, Logger: logger})
	if err != nil {
		return nil, err
	}
	mo.Store = node.Store()
	return node, nil
}

// listener returns the listener listen opened.
func (f *nodeFlags) listener(addr string) (net.Listener, error) {
	if f.ln != nil {
		return f.ln, nil
	}
	return net.Listen("tcp", addr)
}

// close closes the listener when serving never took it (an early exit).
func (f *nodeFlags) close() {
	if f.ln != nil {
		f.ln.Close()
	}
}
