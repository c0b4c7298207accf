package main

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

// serveAndDrain serves srv on ln until ctx is done (SIGINT, SIGTERM), then
// drains: /readyz answers 503 at once, the listener closes, the requests
// in progress get grace to finish (each eval saves its session as it
// ends), the manager closes, and last the node releases its leases so
// that the other nodes take its sessions at once rather than after the
// lease TTL. It returns nil after a drain asked for by ctx.
func serveAndDrain(ctx context.Context, ln net.Listener, srv *server.Server, mgr *sandbox.Manager, node *server.Node, grace time.Duration) error {
	stop := context.AfterFunc(ctx, srv.Drain)
	defer stop()
	err := server.Serve(ctx, ln, srv, mgr, grace)
	if node != nil {
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = errors.Join(err, node.Close(rctx))
	}
	return err
}
