package mcphost

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessage is the largest message (one line of JSON) taken from the
// server, the Go SDK's own default cap.
const MaxMessage = mcp.DefaultMaxLineLength

// codeTooLarge is the JSON-RPC error code of the answer that stands in for
// one past MaxMessage; problem tells it from a server's by its message too.
const codeTooLarge = -32099

// tooLargeText begins that answer's message.
const tooLargeText = "the answer is larger than the cap"

// commandTransport is the SDK's CommandTransport with the server's output
// read through capLines: the SDK reads a message past its cap as a broken
// stream and closes the connection, so every later call failed; here the
// message is skipped and its call alone fails.
type commandTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration // how long Close waits after closing stdin
	max       int
	dropped   func(size int64, id []byte)
}

func (t *commandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	in := &capLines{br: bufio.NewReaderSize(stdout, 64<<10), max: t.max, dropped: t.dropped}
	// capLines bounds every message, so the SDK's own cap is off.
	return (&mcp.IOTransport{Reader: in, Writer: &serverInput{stdin, t.cmd, t.terminate}, MaxLineLength: -1}).Connect(ctx)
}

// serverInput is the server's stdin; closing it ends the server as the
// SDK's CommandTransport does: close stdin, wait, SIGTERM, wait, SIGKILL.
type serverInput struct {
	io.WriteCloser
	cmd       *exec.Cmd
	terminate time.Duration
}

func (s *serverInput) Close() error {
	if err := s.WriteCloser.Close(); err != nil {
		return fmt.Errorf("closing stdin: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	wait := func() (error, bool) {
		select {
		case err := <-done:
			return err, true
		case <-time.After(s.terminate):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if s.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := s.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("the MCP server did not exit after SIGKILL")
}

// capLines passes the server's output on line by line (a message is one
// line, as MCP's stdio transport says). A line longer than max is read to
// its end and dropped, holding at most max bytes of it; when it is an
// answer (an object with an "id" and no "method" at its top level) it is
// replaced by an error answer with that id, so the call that asked for it
// fails and the connection goes on.
type capLines struct {
	br      *bufio.Reader
	max     int
	dropped func(size int64, id []byte)
	line    []byte
	out     []byte // what Read hands on next
	err     error  // the error after out
}

func (r *capLines) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		r.err = r.next()
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

func (r *capLines) Close() error { return nil } // the server's stdin closes the connection

// next sets out to the next line, or to the answer that stands in for it;
// its error comes after out.
func (r *capLines) next() error {
	if cap(r.line) > 1<<20 {
		r.line = nil // do not keep a large message's buffer
	}
	r.line = r.line[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(r.line)+len(chunk) > r.max {
			return r.skip(chunk, err)
		}
		r.line = append(r.line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		r.out = r.line
		return err
	}
}

// skip reads the rest of a line past max (line holds its start, chunk the
// next part), keeping only the answer's id.
func (r *capLines) skip(chunk []byte, err error) error {
	var s idScan
	s.feed(r.line)
	size := int64(len(r.line))
	r.line = r.line[:0]
	for {
		s.feed(chunk)
		size += int64(len(chunk))
		if err != bufio.ErrBufferFull {
			break
		}
		chunk, err = r.br.ReadSlice('\n')
	}
	id := s.id
	if id != nil && (!json.Valid(id) || s.method) {
		id = nil // a request of the server's has an id of its own numbering: no answer stands in
	}
	if r.dropped != nil {
		r.dropped(size, id)
	}
	if id != nil {
		msg := fmt.Sprintf("%s of %d MiB (%d bytes or more) and was discarded", tooLargeText, r.max>>20, size)
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "error": map[string]any{"code": codeTooLarge, "message": msg}})
		r.out = append(b, '\n')
	}
	return err
}

// idScan finds the raw value of "id" at the top level of a JSON object
// fed to it in parts, holding nothing else: a server may put it after a
// result of any size.
type idScan struct {
	depth     int
	inStr     bool
	esc       bool
	keyMode   bool   // in a top-level key
	key       []byte // that key, up to a few bytes
	afterKey  bool   // a top-level key ended; ':' comes next
	expectKey bool   // a top-level key may start
	valueNext bool   // the id's value starts at the next token
	inVal     bool   // in the id's value
	val       []byte
	id        []byte // the id's value, once read
	method    bool   // a top-level "method": a request of the server's, not an answer
}

const idScanMax = 256 // longer keys and ids are not the id

func (s *idScan) feed(b []byte) {
	for _, c := range b {
		if s.inStr {
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
			}
			switch {
			case s.inVal:
				s.val = appendMax(s.val, c)
				if !s.inStr {
					s.endValue()
				}
			case s.keyMode && s.inStr:
				s.key = appendMax(s.key, c)
			case s.keyMode:
				s.keyMode, s.afterKey = false, true
			}
			continue
		}
		top := s.depth == 1
		switch c {
		case '"':
			s.inStr = true
			switch {
			case top && s.valueNext:
				s.valueNext, s.inVal = false, true
				s.val = append(s.val[:0], c)
			case top && s.expectKey:
				s.expectKey, s.keyMode = false, true
				s.key = s.key[:0]
			}
		case '{', '[':
			if top {
				s.valueNext = false // an object or array is not an id
			}
			s.depth++
			if s.depth == 1 && c == '{' {
				s.expectKey = true
			}
		case '}', ']':
			if top && s.inVal {
				s.endValue()
			}
			s.depth--
		case ':':
			if top && s.afterKey {
				s.afterKey = false
				s.valueNext = string(s.key) == "id"
				s.method = s.method || string(s.key) == "method"
			}
		case ',':
			if top {
				if s.inVal {
					s.endValue()
				}
				s.expectKey = true
			}
		case ' ', '\t', '\r', '\n':
			if top && s.inVal {
				s.endValue()
			}
		default:
			if top && (s.valueNext || s.inVal) {
				s.valueNext, s.inVal = false, true
				s.val = appendMax(s.val, c)
			}
		}
	}
}

func (s *idScan) endValue() {
	s.inVal = false
	if len(s.val) <= idScanMax {
		s.id = append([]byte(nil), s.val...)
	}
	s.val = s.val[:0]
}

func appendMax(b []byte, c byte) []byte {
	if len(b) > idScanMax {
		return b
	}
	return append(b, c)
}
