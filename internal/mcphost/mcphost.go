// Package mcphost answers the guest's tool.<name>(args) calls from the
// tools of an MCP server run as a subprocess over stdio, with the official
// Go SDK's client. It is what `wasmeval eval --tools-mcp` plugs in; it is
// not part of wasmeval's public API.
//
// The server runs on the host, outside the sandbox, with the host's
// environment: it is trusted as the command line that names it is.
//
// # Results
//
// A tool's structuredContent is returned as it is (an object for the guest);
// otherwise text content becomes a string (several text items joined by
// newlines), no content becomes null, and content that is not all text
// (images, resources) becomes the list of MCP content objects. A result
// with isError set becomes the helper's error, with the server's text.
//
// # Size
//
// A message from the server is one line of at most MaxMessage bytes. A
// longer answer is read to its end and dropped, holding at most that much
// of it: its call fails with an error that names the cap, and the
// connection goes on (the SDK's own cap would close it for good).
//
// # Names
//
// tool.<name> calls the server's tool of that name; when there is none, the
// name with '_' for '-' (tool.get_sum for "get-sum"), since a Python or
// JavaScript attribute cannot hold '-'. The tool list is read at start and
// again when a name is not found.
package mcphost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/redact"
)

// Client is a connection to one MCP server. It is safe for concurrent use.
//
// Its errors from Tool are read by the guest, so they never name the
// command, its arguments or paths, or hold a raw Go error: they are fixed
// descriptions, or the server's own words with the command line taken out.
// The details go to the stderr given to Start.
type Client struct {
	name    string   // the command, for the host's log
	secrets []string // the command line's words, which no guest-visible text may hold
	log     io.Writer
	cs      *mcp.ClientSession

	mu    sync.Mutex
	tools []string
}

// Start runs argv (a program and its arguments) and connects to it as an
// MCP server over its stdin and stdout; the server's stderr goes to stderr
// (nil discards it). ctx bounds the start and the first listing of tools,
// not the server's life: Close ends it.
func Start(ctx context.Context, argv []string, stderr io.Writer, version string) (*Client, error) {
	if len(argv) == 0 {
		return nil, errors.New("mcphost: no command given")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if stderr == nil {
		stderr = io.Discard
	}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "wasmeval", Version: version}, nil)
	dropped := func(size int64, id []byte) {
		fmt.Fprintf(stderr, "mcphost: the MCP server %q: a message of %d bytes or more, past the cap of %d MiB, was discarded (id %s)\n", argv[0], size, MaxMessage>>20, id)
	}
	// Close waits a second for the server to exit after its stdin closes,
	// then sends SIGTERM (some servers, server-everything among them, do
	// not exit on EOF).
	cs, err := client.Connect(ctx, &commandTransport{cmd: cmd, terminate: time.Second, max: MaxMessage, dropped: dropped}, nil)
	if err != nil {
		return nil, fmt.Errorf("mcphost: connecting to the MCP server %q: %w", argv[0], err)
	}
	c := &Client{name: argv[0], cs: cs, log: stderr, secrets: append([]string{strings.Join(argv, " ")}, argv...)}
	// Longest first, so a secret that contains another is replaced whole.
	slices.SortFunc(c.secrets, func(a, b string) int { return len(b) - len(a) })
	if _, err := c.listTools(ctx); err != nil {
		cs.Close()
		return nil, fmt.Errorf("mcphost: listing the tools of %q: %w", argv[0], err)
	}
	return c, nil
}

// Tools returns the names of the server's tools, as last listed.
func (c *Client) Tools() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.tools)
}

func (c *Client) listTools(ctx context.Context) ([]string, error) {
	var names []string
	for t, err := range c.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		names = append(names, t.Name)
	}
	c.mu.Lock()
	c.tools = names
	c.mu.Unlock()
	return names, nil
}

// Close ends the session and the server process. A server that had to be
// stopped with SIGTERM (some do not exit when their stdin closes) is not an
// error.
func (c *Client) Close() error {
	err := c.cs.Close()
	if _, ok := errors.AsType[*exec.ExitError](err); ok {
		return nil
	}
	return err
}

// resolve maps a guest's tool name to the server's.
func (c *Client) resolve(ctx context.Context, name string) (string, error) {
	find := func(tools []string) (string, bool) {
		if slices.Contains(tools, name) {
			return name, true
		}
		if alt := strings.ReplaceAll(name, "_", "-"); slices.Contains(tools, alt) {
			return alt, true
		}
		return "", false
	}
	if n, ok := find(c.Tools()); ok {
		return n, nil
	}
	tools, err := c.listTools(ctx) // the server may have added it since
	if err != nil {
		return "", c.problem(ctx, "listing its tools", err)
	}
	if n, ok := find(tools); ok {
		return n, nil
	}
	return "", fmt.Errorf("the MCP server has no tool %q; its tools are: %s", name, strings.Join(tools, ", "))
}

// Tool calls the server's tool. Its errors are meant for the guest (the
// dispatcher prefixes them with "tool.NAME: ").
func (c *Client) Tool(ctx context.Context, req hostcalls.ToolRequest) (hostcalls.ToolResponse, error) {
	name, err := c.resolve(ctx, req.Name)
	if err != nil {
		return hostcalls.ToolResponse{}, err
	}
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: req.Args})
	if err != nil {
		return hostcalls.ToolResponse{}, c.problem(ctx, "calling "+name, err)
	}
	if res.IsError {
		msg := strings.TrimSpace(texts(res.Content))
		if msg == "" {
			msg = "the tool failed and said nothing more"
		}
		return hostcalls.ToolResponse{}, errors.New(c.hide(msg))
	}
	out, err := convert(res)
	if err != nil {
		c.logf("the result of %s: %v", name, err)
		return hostcalls.ToolResponse{}, errors.New("the MCP server's result could not be converted to JSON")
	}
	return hostcalls.ToolResponse{Result: out}, nil
}

// problem turns a failed request to the server into the guest's message:
// the stop's cause, a closed connection, or the server's JSON-RPC error
// (its code and words, scrubbed); anything else is logged and described.
func (c *Client) problem(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("the call was stopped: %w", context.Cause(ctx))
	}
	c.logf("%s: %v", what, err)
	var we *jsonrpc.Error
	switch {
	case errors.As(err, &we) && we.Code == codeTooLarge && strings.HasPrefix(we.Message, tooLargeText):
		// capLines' stand-in: the connection goes on.
		return fmt.Errorf("the MCP server's answer was larger than %d MiB and was discarded (a tool's result must be smaller; return a file path or a page of it)", MaxMessage>>20)
	case errors.As(err, &we):
		return fmt.Errorf("the MCP server answered error %d: %s", we.Code, redact.Text(we.Message, c.secrets...))
	case errors.Is(err, mcp.ErrConnectionClosed), errors.Is(err, io.EOF), errors.Is(err, io.ErrClosedPipe):
		return errors.New("the MCP server has exited or closed its connection")
	}
	return errors.New("the MCP server failed (the host's log has the details)")
}

// hide takes the command line out of the server's words.
func (c *Client) hide(s string) string {
	for _, sec := range c.secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, redact.Mark)
		}
	}
	return s
}

// logf tells the operator what the guest only gets a description of.
func (c *Client) logf(format string, args ...any) {
	fmt.Fprintf(c.log, "mcphost: the MCP server %q: %s\n", c.name, fmt.Sprintf(format, args...))
}

func texts(content []mcp.Content) string {
	var parts []string
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// convert turns a tool's result into the JSON the guest gets; see the
// package doc.
func convert(res *mcp.CallToolResult) (json.RawMessage, error) {
	if res.StructuredContent != nil {
		return json.Marshal(res.StructuredContent)
	}
	if len(res.Content) == 0 {
		return json.RawMessage("null"), nil
	}
	allText := true
	for _, c := range res.Content {
		if _, ok := c.(*mcp.TextContent); !ok {
			allText = false
		}
	}
	if allText {
		return json.Marshal(texts(res.Content))
	}
	return json.Marshal(res.Content)
}

// SplitCommand splits a command line as --tools-mcp takes it: on spaces,
// with '...' and "..." quoting and backslash escapes; no shell runs it.
func SplitCommand(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inArg = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inArg = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("mcphost: the command %q has an unclosed %c quote", s, quote)
	}
	if escaped {
		return nil, fmt.Errorf("mcphost: the command %q ends in a lone backslash", s)
	}
	if inArg {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, errors.New("mcphost: the command is empty; give a program and its arguments, as in 'npx -y @modelcontextprotocol/server-everything'")
	}
	return args, nil
}
