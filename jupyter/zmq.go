package jupyter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
)

// zmqConn is a Conn over the kernel's ZeroMQ sockets: DEALER for shell,
// control and stdin (shell and stdin share one identity, since the kernel
// sends a cell's input_request to the identity its execute_request came
// from), SUB for iopub and REQ for the heartbeat.
type zmqConn struct {
	info   ConnectionInfo
	signer *Signer
	ctx    context.Context
	cancel context.CancelFunc

	shell, control, stdin, iopub zmq4.Socket
	in                           chan received
	errc                         chan error

	sendMu sync.Mutex
	hbMu   sync.Mutex
	hb     zmq4.Socket // nil until the first ping, and after a failed one

	closeOnce sync.Once
}

type received struct {
	ch Channel
	m  *Message
}

// DialZMQ connects to a kernel's channels as its connection info says,
// with identity as the shell and stdin sockets' ZeroMQ identity (the
// client's session id is the usual choice). It retries while the kernel
// is still binding its ports, until ctx ends.
func DialZMQ(ctx context.Context, info ConnectionInfo, identity string) (Conn, error) {
	if info.Transport == "" {
		info.Transport = "tcp"
	}
	cctx, cancel := context.WithCancel(context.Background())
	c := &zmqConn{
		info: info, signer: NewSigner(info.Key), ctx: cctx, cancel: cancel,
		in: make(chan received, 256), errc: make(chan error, 1),
	}
	id := zmq4.SocketIdentity(identity)
	opts := func() []zmq4.Option {
		return []zmq4.Option{zmq4.WithDialerRetry(50 * time.Millisecond), zmq4.WithDialerMaxRetries(1)}
	}
	c.shell = zmq4.NewDealer(cctx, append(opts(), zmq4.WithID(id))...)
	c.stdin = zmq4.NewDealer(cctx, append(opts(), zmq4.WithID(id))...)
	c.control = zmq4.NewDealer(cctx, opts()...)
	c.iopub = zmq4.NewSub(cctx, opts()...)
	socks := []struct {
		s    zmq4.Socket
		port int
		ch   Channel
	}{
		{c.shell, info.ShellPort, Shell}, {c.iopub, info.IOPubPort, IOPub},
		{c.stdin, info.StdinPort, Stdin}, {c.control, info.ControlPort, Control},
	}
	// The dials run aside: one can hang in the ZMTP greeting (a kernel
	// that accepted the connection and then stalled), and ctx must still
	// end the wait.
	dialed := make(chan error, 1)
	go func() {
		for _, s := range socks {
			if err := dialRetry(ctx, s.s, info.endpoint(s.port)); err != nil {
				dialed <- fmt.Errorf("jupyter: connecting to the kernel's %s channel: %w", s.ch, err)
				return
			}
		}
		dialed <- nil
	}()
	select {
	case err := <-dialed:
		if err != nil {
			c.Close()
			return nil, err
		}
	case <-ctx.Done():
		go c.Close()
		return nil, fmt.Errorf("jupyter: connecting to the kernel: %w", ctx.Err())
	}
	if err := c.iopub.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		c.Close()
		return nil, fmt.Errorf("jupyter: subscribing to iopub: %w", err)
	}
	for _, s := range socks {
		go c.read(s.s, s.ch)
	}
	return c, nil
}

// dialRetry dials until the kernel listens or ctx ends: a kernel binds its
// ports a second or so after it starts.
func dialRetry(ctx context.Context, s zmq4.Socket, ep string) error {
	for {
		err := s.Dial(ep)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// read moves one socket's messages to c.in until the socket closes.
func (c *zmqConn) read(s zmq4.Socket, ch Channel) {
	for {
		msg, err := s.Recv()
		if err != nil {
			select {
			case c.errc <- fmt.Errorf("jupyter: %s channel: %w", ch, err):
			default:
			}
			return
		}
		m, err := c.signer.Decode(msg.Frames)
		if err != nil {
			continue // a bad signature or a malformed message is dropped, as jupyter_client does
		}
		select {
		case c.in <- received{ch, m}:
		case <-c.ctx.Done():
			return
		}
	}
}

// Send signs and sends m on channel. Send(ctx, Heartbeat, nil) pings the
// kernel's heartbeat and waits for its echo until ctx ends.
func (c *zmqConn) Send(ctx context.Context, channel Channel, m *Message) error {
	if channel == Heartbeat {
		return c.ping(ctx)
	}
	var s zmq4.Socket
	switch channel {
	case Shell:
		s = c.shell
	case Control:
		s = c.control
	case Stdin:
		s = c.stdin
	default:
		return fmt.Errorf("jupyter: cannot send on the %s channel", channel)
	}
	frames, err := c.signer.Encode(m)
	if err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := c.ctx.Err(); err != nil {
		return errors.New("jupyter: connection closed")
	}
	done := make(chan error, 1)
	go func() { done <- s.SendMulti(zmq4.NewMsgFrom(frames...)) }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("jupyter: sending %s on %s: %w", m.Header.MsgType, channel, err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ping sends one heartbeat and waits for its echo. A REQ socket whose
// echo did not come is stuck in its send/receive cycle, so it is dropped
// and the next ping dials a new one. The dial happens under ctx too: a
// kernel that is stopped (not dead) accepts the TCP connection but never
// sends the ZMTP greeting.
func (c *zmqConn) ping(ctx context.Context) error {
	c.hbMu.Lock()
	defer c.hbMu.Unlock()
	hb, fresh := c.hb, false
	if hb == nil {
		hb, fresh = zmq4.NewReq(c.ctx, zmq4.WithDialerRetry(50*time.Millisecond), zmq4.WithDialerMaxRetries(1)), true
	}
	done := make(chan error, 1)
	go func() {
		if fresh {
			if err := hb.Dial(c.info.endpoint(c.info.HBPort)); err != nil {
				done <- err
				return
			}
		}
		if err := hb.Send(zmq4.NewMsgString("ping")); err != nil {
			done <- err
			return
		}
		_, err := hb.Recv()
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			go hb.Close()
			c.hb = nil
			return fmt.Errorf("jupyter: heartbeat: %w", err)
		}
		c.hb = hb
		return nil
	case <-ctx.Done():
		// Closing may wait on the stuck connection: not here.
		go hb.Close()
		c.hb = nil
		return fmt.Errorf("jupyter: heartbeat: no answer: %w", ctx.Err())
	}
}

// Recv returns the next message from shell, iopub, stdin or control.
func (c *zmqConn) Recv(ctx context.Context) (Channel, *Message, error) {
	select {
	case r := <-c.in:
		return r.ch, r.m, nil
	default:
	}
	select {
	case r := <-c.in:
		return r.ch, r.m, nil
	case err := <-c.errc:
		select { // every later Recv sees it too
		case c.errc <- err:
		default:
		}
		return "", nil, err
	case <-c.ctx.Done():
		return "", nil, errors.New("jupyter: connection closed")
	case <-ctx.Done():
		return "", nil, ctx.Err()
	}
}

// Close closes every socket.
func (c *zmqConn) Close() error {
	c.closeOnce.Do(func() {
		c.cancel()
		for _, s := range []zmq4.Socket{c.shell, c.control, c.stdin, c.iopub} {
			if s != nil {
				s.Close()
			}
		}
		c.hbMu.Lock()
		if c.hb != nil {
			c.hb.Close()
			c.hb = nil
		}
		c.hbMu.Unlock()
	})
	return nil
}
