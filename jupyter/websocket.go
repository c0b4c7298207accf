package jupyter

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// WebsocketReadLimit is the largest message a kernel's websocket accepts
// from the server: a cell's image or a large table arrives as one message.
const WebsocketReadLimit = 256 << 20

// websocketWriteTimeout bounds one write to a kernel's websocket; a server
// that takes longer is treated as gone.
const websocketWriteTimeout = 30 * time.Second

// WebsocketConn is a Conn to a kernel behind a Jupyter Server or Kernel
// Gateway: its channels multiplexed over the server's websocket
// (/api/kernels/{id}/channels), each message a JSON text frame naming its
// channel, or a binary frame when it carries buffers (the server's
// default protocol, the one without a subprotocol).
//
// Heartbeat has no message on the websocket: Send(ctx, Heartbeat, nil)
// pings the server and waits for its pong, so it fails when the server is
// gone; a kernel that died behind a live server shows as its "restarting"
// or "dead" status on iopub, which closes Dead.
type WebsocketConn struct {
	c *websocket.Conn

	wmu sync.Mutex // serialises writes

	msgs chan wsReceived
	done chan struct{} // closed when the reader stops
	err  error         // why it stopped; read after done

	dead     chan struct{} // closed on the kernel's restarting or dead status, or the connection's end
	deadOnce sync.Once

	closing   chan struct{} // closed by Close
	closeOnce sync.Once
}

// wsReceived is one message with its channel.
type wsReceived struct {
	ch Channel
	m  *Message
}

// DialWebsocket opens a kernel's channels websocket at url (ws:// or
// wss://, with its session_id query) sending header (the token) with the
// handshake.
func DialWebsocket(ctx context.Context, url string, header http.Header) (*WebsocketConn, error) {
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		if resp != nil {
			return nil, httpStatusError("opening the kernel's channels", resp.StatusCode, err)
		}
		return nil, fmt.Errorf("jupyter: opening the kernel's channels: %w", err)
	}
	c.SetReadLimit(WebsocketReadLimit)
	w := &WebsocketConn{c: c, msgs: make(chan wsReceived, 64), done: make(chan struct{}), dead: make(chan struct{}), closing: make(chan struct{})}
	go w.read()
	return w, nil
}

// wsMessage is a message as the server's websocket carries it.
type wsMessage struct {
	Header       Header          `json:"header"`
	ParentHeader json.RawMessage `json:"parent_header"`
	Metadata     json.RawMessage `json:"metadata"`
	Content      json.RawMessage `json:"content"`
	Buffers      []any           `json:"buffers,omitempty"`
	Channel      Channel         `json:"channel"`
}

// read receives every frame, so pongs are handled and the kernel's death
// is seen whatever the caller is doing.
func (w *WebsocketConn) read() {
	defer close(w.done)
	defer w.markDead()
	for {
		typ, data, err := w.c.Read(context.Background())
		if err != nil {
			w.err = fmt.Errorf("jupyter: the kernel's websocket: %w", err)
			return
		}
		ch, m, err := decodeWebsocket(typ, data)
		if err != nil {
			w.err = err
			w.c.Close(websocket.StatusUnsupportedData, "bad message")
			return
		}
		if ch == IOPub && m.Header.MsgType == "status" {
			var st struct {
				ExecutionState string `json:"execution_state"`
			}
			if json.Unmarshal(m.Content, &st) == nil && (st.ExecutionState == "restarting" || st.ExecutionState == "dead") {
				w.markDead()
			}
		}
		select {
		case w.msgs <- wsReceived{ch, m}:
		case <-w.closing:
			return
		}
	}
}

func (w *WebsocketConn) markDead() { w.deadOnce.Do(func() { close(w.dead) }) }

// Dead is closed when the kernel restarted or died behind the server (its
// state is gone) or the connection ended.
func (w *WebsocketConn) Dead() <-chan struct{} { return w.dead }

// decodeWebsocket decodes one frame: JSON text, or the binary form of a
// message with buffers (a count n, n offsets, the JSON, the buffers; all
// big-endian uint32).
func decodeWebsocket(typ websocket.MessageType, data []byte) (Channel, *Message, error) {
	var buffers [][]byte
	if typ == websocket.MessageBinary {
		if len(data) < 4 {
			return "", nil, errors.New("jupyter: a binary websocket message shorter than its header")
		}
		n := int(binary.BigEndian.Uint32(data))
		if n < 1 || n > 1<<16 || len(data) < 4*(n+1) {
			return "", nil, fmt.Errorf("jupyter: a binary websocket message with a bad buffer count %d", n)
		}
		offs := make([]int, n+1)
		for i := 0; i < n; i++ {
			offs[i] = int(binary.BigEndian.Uint32(data[4*(i+1):]))
		}
		offs[n] = len(data)
		for i := 0; i < n; i++ {
			if offs[i] < 4*(n+1) || offs[i] > offs[i+1] {
				return "", nil, errors.New("jupyter: a binary websocket message with bad offsets")
			}
		}
		for i := 1; i < n; i++ {
			buffers = append(buffers, data[offs[i]:offs[i+1]])
		}
		data = data[offs[0]:offs[1]]
	}
	var wm wsMessage
	if err := json.Unmarshal(data, &wm); err != nil {
		return "", nil, fmt.Errorf("jupyter: a websocket message that is not a Jupyter message: %w", err)
	}
	m := &Message{Header: wm.Header, Metadata: wm.Metadata, Content: wm.Content, Buffers: buffers}
	if len(wm.ParentHeader) > 0 && string(wm.ParentHeader) != "{}" && string(wm.ParentHeader) != "null" {
		if err := json.Unmarshal(wm.ParentHeader, &m.Parent); err != nil {
			return "", nil, fmt.Errorf("jupyter: a websocket message's parent_header: %w", err)
		}
	}
	switch wm.Channel {
	case Shell, IOPub, Stdin, Control:
	default:
		return "", nil, fmt.Errorf("jupyter: a websocket message on an unknown channel %q", wm.Channel)
	}
	return wm.Channel, m, nil
}

// encodeWebsocket is the frame of m on channel: JSON text, or the binary
// form when m has buffers.
func encodeWebsocket(channel Channel, m *Message) (websocket.MessageType, []byte, error) {
	parent := json.RawMessage("{}")
	if m.Parent.MsgID != "" {
		b, err := json.Marshal(m.Parent)
		if err != nil {
			return 0, nil, err
		}
		parent = b
	}
	wm := wsMessage{
		Header: m.Header, ParentHeader: parent, Channel: channel,
		Metadata: jsonOrEmpty(m.Metadata), Content: jsonOrEmpty(m.Content),
	}
	data, err := json.Marshal(wm)
	if err != nil {
		return 0, nil, fmt.Errorf("jupyter: encoding a %s message: %w", m.Header.MsgType, err)
	}
	if len(m.Buffers) == 0 {
		return websocket.MessageText, data, nil
	}
	n := len(m.Buffers) + 1
	out := make([]byte, 4*(n+1), 4*(n+1)+len(data))
	binary.BigEndian.PutUint32(out, uint32(n))
	off := 4 * (n + 1)
	parts := append([][]byte{data}, m.Buffers...)
	for i, p := range parts {
		binary.BigEndian.PutUint32(out[4*(i+1):], uint32(off))
		off += len(p)
	}
	for _, p := range parts {
		out = append(out, p...)
	}
	return websocket.MessageBinary, out, nil
}

// Send sends m on channel; on Heartbeat it pings the server instead.
func (w *WebsocketConn) Send(ctx context.Context, channel Channel, m *Message) error {
	if channel == Heartbeat {
		if err := w.c.Ping(ctx); err != nil {
			return fmt.Errorf("jupyter: the Jupyter server did not answer a ping: %w", err)
		}
		return nil
	}
	if m == nil {
		return fmt.Errorf("jupyter: no message to send on %s", channel)
	}
	typ, data, err := encodeWebsocket(channel, m)
	if err != nil {
		return err
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	// The websocket library closes the connection when a write's context
	// ends mid-write; a cell's deadline must not cost the kernel its
	// connection, so the write gets its own, generous one.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), websocketWriteTimeout)
	defer cancel()
	if err := w.c.Write(wctx, typ, data); err != nil {
		return fmt.Errorf("jupyter: sending %s on the kernel's websocket: %w", m.Header.MsgType, err)
	}
	return nil
}

// Recv returns the next message and its channel.
func (w *WebsocketConn) Recv(ctx context.Context) (Channel, *Message, error) {
	select {
	case r := <-w.msgs:
		return r.ch, r.m, nil
	case <-ctx.Done():
		return "", nil, ctx.Err()
	case <-w.done:
		// Deliver what was read before the end.
		select {
		case r := <-w.msgs:
			return r.ch, r.m, nil
		default:
		}
		return "", nil, w.err
	}
}

// Close closes the websocket.
func (w *WebsocketConn) Close() error {
	var err error
	w.closeOnce.Do(func() {
		close(w.closing)
		select {
		case <-w.done:
			// The connection already ended; its end was reported by Recv.
			w.c.CloseNow()
		default:
			if e := w.c.Close(websocket.StatusNormalClosure, ""); e != nil && !errors.Is(e, net.ErrClosed) {
				// The server went away meanwhile: nothing left to close.
				w.c.CloseNow()
			}
		}
	})
	return err
}
