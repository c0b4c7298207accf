package jupyter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Client speaks the messaging protocol to one kernel over a Conn: it sends
// requests and routes what comes back, by parent message id, to the
// request that caused it.
type Client struct {
	conn    Conn
	session string

	mu      sync.Mutex
	waiters map[string]*waiter // by request msg_id
	err     error              // set when the receive loop ended
	done    chan struct{}      // closed then
}

// waiter collects the messages of one request.
type waiter struct {
	ch chan received
}

// NewClient starts a client over conn; session is the protocol session id
// of its messages (on ZeroMQ, the same as DialZMQ's identity).
func NewClient(conn Conn, session string) *Client {
	c := &Client{conn: conn, session: session, waiters: make(map[string]*waiter), done: make(chan struct{})}
	go c.loop()
	return c
}

// Session is the client's protocol session id.
func (c *Client) Session() string { return c.session }

// Conn is the client's connection.
func (c *Client) Conn() Conn { return c.conn }

func (c *Client) loop() {
	for {
		ch, m, err := c.conn.Recv(context.Background())
		if err != nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			close(c.done)
			return
		}
		c.mu.Lock()
		w := c.waiters[m.ParentID()]
		c.mu.Unlock()
		if w == nil {
			continue // another client's, or a request already done
		}
		// Unbounded in effect: a cell's output must not be lost, and the
		// waiter drains its channel until the request ends.
		select {
		case w.ch <- received{ch, m}:
		case <-c.done:
			return
		}
	}
}

func (c *Client) register(id string) *waiter {
	w := &waiter{ch: make(chan received, 1024)}
	c.mu.Lock()
	c.waiters[id] = w
	c.mu.Unlock()
	return w
}

func (c *Client) unregister(id string) {
	c.mu.Lock()
	delete(c.waiters, id)
	c.mu.Unlock()
}

// ErrConnectionLost is returned when the connection's receive loop ended
// (the kernel went away or the connection was closed).
var ErrConnectionLost = errors.New("jupyter: the connection to the kernel was lost")

func (c *Client) lost() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Errorf("%w: %v", ErrConnectionLost, c.err)
}

// request sends msgType on channel and returns the reply on that channel
// (the message whose type is msgType's _request replaced by _reply).
func (c *Client) request(ctx context.Context, channel Channel, msgType string, content any) (*Message, error) {
	m, err := NewMessage(c.session, msgType, content)
	if err != nil {
		return nil, err
	}
	w := c.register(m.Header.MsgID)
	defer c.unregister(m.Header.MsgID)
	if err := c.conn.Send(ctx, channel, m); err != nil {
		return nil, err
	}
	want := msgType[:len(msgType)-len("_request")] + "_reply"
	for {
		select {
		case r := <-w.ch:
			if r.ch == channel && r.m.Header.MsgType == want {
				return r.m, nil
			}
		case <-c.done:
			return nil, c.lost()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// KernelInfo is what a kernel_info_reply says about the kernel.
type KernelInfo struct {
	Status          string `json:"status"`
	ProtocolVersion string `json:"protocol_version"`
	Implementation  string `json:"implementation"`
	Banner          string `json:"banner"`
	LanguageInfo    struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"language_info"`
}

// KernelInfo does the kernel_info handshake. It also waits until the
// request's iopub status messages arrive, asking again while they do not:
// a SUB socket misses what is published before its subscription reaches
// the kernel, and a cell's output must not be lost that way.
func (c *Client) KernelInfo(ctx context.Context) (KernelInfo, error) {
	var info KernelInfo
	for attempt := 0; ; attempt++ {
		m, err := NewMessage(c.session, "kernel_info_request", nil)
		if err != nil {
			return info, err
		}
		w := c.register(m.Header.MsgID)
		if err := c.conn.Send(ctx, Shell, m); err != nil {
			c.unregister(m.Header.MsgID)
			return info, err
		}
		var reply *Message
		iopub := false
		timer := time.NewTimer(time.Duration(200*(attempt+1)) * time.Millisecond)
	wait:
		for reply == nil || !iopub {
			select {
			case r := <-w.ch:
				switch {
				case r.ch == Shell && r.m.Header.MsgType == "kernel_info_reply":
					reply = r.m
				case r.ch == IOPub:
					iopub = true
				}
			case <-timer.C:
				if reply != nil {
					break wait // the reply came, the iopub status did not: ask again
				}
				timer.Reset(time.Second)
			case <-c.done:
				timer.Stop()
				c.unregister(m.Header.MsgID)
				return info, c.lost()
			case <-ctx.Done():
				timer.Stop()
				c.unregister(m.Header.MsgID)
				return info, fmt.Errorf("jupyter: the kernel did not answer kernel_info: %w", ctx.Err())
			}
		}
		timer.Stop()
		c.unregister(m.Header.MsgID)
		if reply != nil && iopub {
			err := reply.Decode(&info)
			return info, err
		}
	}
}

// Interrupt sends an interrupt_request on the control channel and waits
// for its reply.
func (c *Client) Interrupt(ctx context.Context) error {
	_, err := c.request(ctx, Control, "interrupt_request", nil)
	return err
}

// Shutdown asks the kernel to shut down (or restart, where the kernel's
// manager restarts it) and waits for the reply.
func (c *Client) Shutdown(ctx context.Context, restart bool) error {
	_, err := c.request(ctx, Control, "shutdown_request", map[string]bool{"restart": restart})
	return err
}

// Ping checks the kernel's heartbeat once, waiting at most timeout.
func (c *Client) Ping(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return c.conn.Send(ctx, Heartbeat, nil)
}

// Handler receives what an executing cell produces. Its methods are called
// from the goroutine that called Execute, in the order the kernel sent
// the messages.
type Handler interface {
	// IOPub receives one iopub message of the cell (stream, display_data,
	// update_display_data, execute_result, error, clear_output, ...);
	// status messages are not passed on.
	IOPub(msgType string, m *Message)
	// Input answers an input_request of the cell; the returned text is
	// sent as the input_reply's value.
	Input(prompt string, password bool) string
}

// ExecuteReply is the content of an execute_reply.
type ExecuteReply struct {
	Status         string   `json:"status"` // ok, error or aborted
	ExecutionCount int      `json:"execution_count"`
	EName          string   `json:"ename"`
	EValue         string   `json:"evalue"`
	Traceback      []string `json:"traceback"`
}

// ExecuteOptions are an execute_request's flags.
type ExecuteOptions struct {
	// Silent runs the code without output or history (the prelude).
	Silent bool
	// NoStdin tells the kernel not to send input_requests.
	NoStdin bool
}

// Execute runs code and returns its execute_reply once the kernel has
// also published the request's idle status, so that every iopub message
// of the cell has reached h. It returns early with ctx's error when ctx
// ends (the caller interrupts the kernel first and cancels ctx when the
// kernel does not stop).
func (c *Client) Execute(ctx context.Context, code string, opts ExecuteOptions, h Handler) (*ExecuteReply, error) {
	m, err := NewMessage(c.session, "execute_request", map[string]any{
		"code": code, "silent": opts.Silent, "store_history": !opts.Silent,
		"user_expressions": map[string]any{}, "allow_stdin": !opts.NoStdin,
		// Not stop_on_error: one cell is one request, and ipykernel would
		// abort the next request that reaches it soon after an error.
		"stop_on_error": false,
	})
	if err != nil {
		return nil, err
	}
	w := c.register(m.Header.MsgID)
	defer c.unregister(m.Header.MsgID)
	if err := c.conn.Send(ctx, Shell, m); err != nil {
		return nil, err
	}
	var reply *ExecuteReply
	idle := false
	for reply == nil || !idle {
		select {
		case r := <-w.ch:
			switch r.ch {
			case Shell:
				if r.m.Header.MsgType == "execute_reply" {
					reply = &ExecuteReply{}
					if err := r.m.Decode(reply); err != nil {
						return nil, err
					}
				}
			case IOPub:
				if r.m.Header.MsgType == "status" {
					var st struct {
						ExecutionState string `json:"execution_state"`
					}
					if r.m.Decode(&st) == nil && st.ExecutionState == "idle" {
						idle = true
					}
					continue
				}
				if h != nil {
					h.IOPub(r.m.Header.MsgType, r.m)
				}
			case Stdin:
				if r.m.Header.MsgType != "input_request" {
					continue
				}
				var req struct {
					Prompt   string `json:"prompt"`
					Password bool   `json:"password"`
				}
				_ = r.m.Decode(&req)
				value := ""
				if h != nil {
					value = h.Input(req.Prompt, req.Password)
				}
				rep, err := r.m.Reply("input_reply", map[string]string{"value": value})
				if err != nil {
					return nil, err
				}
				if err := c.conn.Send(ctx, Stdin, rep); err != nil {
					return nil, err
				}
			}
		case <-c.done:
			return nil, c.lost()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return reply, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// DisplayContent is the content of display_data, update_display_data and
// execute_result messages.
type DisplayContent struct {
	Data           map[string]json.RawMessage `json:"data"`
	Metadata       map[string]json.RawMessage `json:"metadata"`
	ExecutionCount int                        `json:"execution_count"`
	Transient      struct {
		DisplayID string `json:"display_id"`
	} `json:"transient"`
}

// StreamContent is the content of a stream message.
type StreamContent struct {
	Name string `json:"name"` // stdout or stderr
	Text string `json:"text"`
}

// ErrorContent is the content of an error message.
type ErrorContent struct {
	EName     string   `json:"ename"`
	EValue    string   `json:"evalue"`
	Traceback []string `json:"traceback"`
}
