package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/wasmeval/wasmeval/sandbox"
)

// Serve serves h on ln until ctx is done, then shuts down gracefully: the
// listener closes, requests in progress get grace to finish, then mgr.Close
// cancels the cells still running (they answer "cancelled") and the
// remaining connections are closed. It returns nil after a shutdown asked
// for by ctx.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, mgr *sandbox.Manager, grace time.Duration) error {
	// Against slow clients (Slowloris): headers must arrive within
	// ReadHeaderTimeout and be small; bodies have the handler's own read
	// deadline (Config.BodyTimeout) and answers a write deadline. There is
	// no ReadTimeout or WriteTimeout: they would cut long evals and their
	// streams, which end by their cells' limits instead.
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		IdleTimeout:       2 * time.Minute,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		mgr.Close(context.Background())
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		// Cancel the cells still running so their handlers answer, then
		// give them a moment to write before closing connections.
		cerr := mgr.Close(context.Background())
		wctx, wcancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = srv.Shutdown(wctx)
		wcancel()
		if err != nil {
			err = srv.Close()
		}
		return errors.Join(err, cerr)
	}
	return errors.Join(err, mgr.Close(context.Background()))
}
