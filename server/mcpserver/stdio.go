package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxLineBytes is the longest message a LineTransport reads when
// MaxLineBytes is zero.
const DefaultMaxLineBytes = 16 << 20

// JSON-RPC 2.0's error codes for input that is not a request.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// LineTransport is an mcp.Transport for newline-delimited JSON-RPC, the MCP
// stdio transport, that survives bad input. The SDK's own IOTransport ends
// the whole connection on one line that is not JSON, not a JSON-RPC message
// or too long; a LineTransport answers such a line with a JSON-RPC error
// (-32700 parse error, or -32600 invalid request for JSON that is not a
// message, with the line's id when it has one, else null) and reads on.
//
// A line longer than MaxLineBytes is answered with a parse error and
// skipped up to its newline without being buffered. JSON-RPC batches (an
// array on one line), which MCP dropped in its 2025-06-18 revision, are
// answered with -32600.
//
// Use it with Server.Run, as `wasmeval mcp` does:
//
//	err := srv.Run(ctx, &mcpserver.LineTransport{Reader: os.Stdin, Writer: os.Stdout})
type LineTransport struct {
	// Reader gives the client's messages. It is not closed.
	Reader io.Reader
	// Writer takes the server's messages, one Write per message. It is not
	// closed.
	Writer io.Writer
	// MaxLineBytes caps one message; zero means DefaultMaxLineBytes.
	MaxLineBytes int
	// Logger gets a warning for each line refused (its size and the
	// reason, not its text); nil logs nothing.
	Logger *slog.Logger

	answered func() // after each answer written (Server.Run)
}

var _ mcp.Transport = (*LineTransport)(nil)

// Connect implements mcp.Transport. Call it once.
func (t *LineTransport) Connect(context.Context) (mcp.Connection, error) {
	if t.Reader == nil || t.Writer == nil {
		return nil, errors.New("mcpserver: LineTransport needs a Reader and a Writer")
	}
	max := t.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	c := &lineConn{
		w:        t.Writer,
		answered: t.answered,
		logger:   t.Logger,
		incoming: make(chan jsonrpc.Message),
		eof:      make(chan struct{}),
		closed:   make(chan struct{}),
	}
	go c.readLoop(bufio.NewReaderSize(t.Reader, 64<<10), max)
	return c, nil
}

type lineConn struct {
	w        io.Writer
	wmu      sync.Mutex // one message at a time on w
	logger   *slog.Logger
	answered func() // or nil

	incoming chan jsonrpc.Message
	eof      chan struct{} // closed when reading ended; readErr says why
	readErr  error
	closed   chan struct{}
	once     sync.Once
}

func (c *lineConn) SessionID() string { return "" }

// Read implements mcp.Connection.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case m := <-c.incoming:
		return m, nil
	case <-c.eof:
		return nil, c.readErr
	}
}

// Write implements mcp.Connection.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	err = c.writeLine(data)
	if _, ok := msg.(*jsonrpc.Response); ok && err == nil && c.answered != nil {
		c.answered()
	}
	return err
}

func (c *lineConn) writeLine(data []byte) error {
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(data, '\n'))
	return err
}

// Close implements mcp.Connection: it stops Read; the reading goroutine
// ends at its next line or at the end of the input.
func (c *lineConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *lineConn) readLoop(br *bufio.Reader, max int) {
	for {
		line, tooLong, err := readLine(br, max)
		if tooLong {
			c.refuse(nil, codeParseError, "Parse error: the message is longer than "+sizeText(max)+"; send smaller messages", max+1)
		} else if len(bytes.TrimSpace(line)) > 0 {
			if msg := c.decode(line); msg != nil {
				select {
				case c.incoming <- msg:
				case <-c.closed:
					return
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.readErr = io.EOF
			} else {
				c.readErr = fmt.Errorf("mcpserver: reading messages: %w", err)
			}
			close(c.eof)
			return
		}
	}
}

// decode returns the line's message, or answers the line with an error and
// returns nil.
func (c *lineConn) decode(line []byte) jsonrpc.Message {
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		c.refuse(nil, codeParseError, parseErrorText(line), len(line))
		return nil
	}
	if line[0] == '[' {
		c.refuse(nil, codeInvalidRequest, batchRefusal+", one a line", len(line))
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		c.refuse(idOf(line), codeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message (an object with \"jsonrpc\": \"2.0\", a \"method\" and, for a request, an \"id\" that is a string or a number)", len(line))
		return nil
	}
	return msg
}

// maxJSONDepth is how deep encoding/json lets arrays and objects nest,
// which the SDK's decoding (and so the HTTP face) holds to as well.
const maxJSONDepth = 10000

// parseErrorText is the message of a line that is not valid JSON: one too
// deeply nested says so and gives the limit, since its JSON may be
// otherwise fine and "not valid JSON" would send the client looking for
// a syntax error.
func parseErrorText(line []byte) string {
	var raw json.RawMessage
	err := json.Unmarshal(line, &raw)
	var se *json.SyntaxError
	if errors.As(err, &se) && strings.Contains(se.Error(), "exceeded max depth") {
		return fmt.Sprintf("Parse error: the message is nested too deep: its arrays and objects nest more than %d deep (at byte %d); send one JSON-RPC message a line, nested at most %d deep", maxJSONDepth, se.Offset, maxJSONDepth)
	}
	return "Parse error: the line is not valid JSON; send one JSON-RPC message a line"
}

// idOf is the id of a line that is a JSON object with a string or number
// id, for the error's answer; nil otherwise.
func idOf(line []byte) any {
	var m struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	switch m.ID.(type) {
	case string, float64:
		return m.ID
	}
	return nil
}

// refuse answers a line that is not a message.
func (c *lineConn) refuse(id any, code int, message string, size int) {
	if c.logger != nil {
		c.logger.Warn("mcp: refused a line", "bytes", size, "code", code, "reason", message)
	}
	data, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   any    `json:"error"`
	}{"2.0", id, struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	c.writeLine(data) // a failed write shows in the server's next Write
}

// readLine reads one line without its end; a line longer than max is
// skipped to its newline without being kept (tooLong). err is io.EOF after
// the last line.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+2 { // room for "\r\n"
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		return line, false, err
	}
}

func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
