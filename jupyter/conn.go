package jupyter

import "context"

// Channel names one of a kernel's five channels.
type Channel string

// The kernel channels of the Jupyter messaging protocol.
const (
	Shell     Channel = "shell"
	IOPub     Channel = "iopub"
	Stdin     Channel = "stdin"
	Control   Channel = "control"
	Heartbeat Channel = "heartbeat"
)

// Conn is a connection to one kernel's channels. The ZeroMQ transport
// (local kernels) and the websocket transport (Jupyter Server) both
// implement it, so the kernel client above does not know which it has.
//
// Send and Recv may be called from different goroutines; Send calls are
// serialised by the implementation. Recv returns the next message from any
// of shell, iopub, stdin or control, with the channel it came on. Heartbeat
// is not delivered by Recv: a transport that has a heartbeat socket answers
// Send(ctx, Heartbeat, nil) with nil once the kernel echoed a ping, or an
// error when it did not before ctx ended; a transport without one (the
// websocket) returns nil while its connection is open.
type Conn interface {
	Send(ctx context.Context, channel Channel, m *Message) error
	Recv(ctx context.Context) (Channel, *Message, error)
	Close() error
}
