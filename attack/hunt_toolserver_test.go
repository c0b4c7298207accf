package attack_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/internal/mcphost"
	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// fakeToolServerEnv makes the test binary a hostile MCP tool server on
// stdio (see init): the tool server is the operator's, but what its tools
// return may come from anywhere (a fetch tool returns the page the guest
// asked for).
const fakeToolServerEnv = "WASMEVAL_ATTACK_FAKE_TOOL_SERVER"

func init() {
	if os.Getenv(fakeToolServerEnv) != "1" {
		return
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "attack-tools", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "huge", Description: "64 MiB of text"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 64<<20)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "never answers"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		select {}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "ok"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	s.Run(context.Background(), &mcp.StdioTransport{})
	os.Exit(0)
}

// TestHuntToolServer: a tool server's answers (--tools-mcp) are bounded
// like the LLM endpoint's: a 64 MiB result fails the call in the guest
// with an error that says so (mcphost reads at most 16 MiB of a message
// and skips the rest), the host's heap growing by less
// than the result; a tool that never answers holds its cell no longer
// than the cell's hard limit; the session goes on.
func TestHuntToolServer(t *testing.T) {
	t.Setenv(fakeToolServerEnv, "1")
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Stretch(30*time.Second))
	defer cancel()
	c, err := mcphost.Start(ctx, []string{os.Args[0]}, nil, "attack")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	os.Unsetenv(fakeToolServerEnv)
	sb, err := sandbox.New(context.Background(), sandbox.Options{Host: hostcalls.HostFuncs{ToolFunc: c.Tool}, Languages: []string{"js"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(context.Background())
	w := newWorld(t)
	s, err := sb.NewSession(context.Background(), sessionOptions(w.root))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	call := func(name string) string {
		return `try { const r = await tool.` + name + `({}); print('GOT', r.length) } catch (e) { print('ERR', e.message) }`
	}
	for _, tc := range []struct {
		name, tool string
		timeout    int
		want       string
	}{
		{"a working tool", "echo", 10, "GOT 2"},
		{"a tool that never answers", "hang", 1, "hard limit"},
		{"a 64 MiB result", "huge", 30, "larger than 16 MiB and was discarded"},
		// The answer past the cap fails its call alone: the connection goes on.
		{"a call after it", "echo", 10, "GOT 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peak := heapPeak()
			start := time.Now()
			out, status := eval(t, s, "js", call(tc.tool), tc.timeout)
			took, grew := time.Since(start), peak()
			t.Logf("%s after %v (heap +%d MiB): %.300q", status, took.Round(time.Millisecond), grew>>20, out)
			if !strings.Contains(out, tc.want) {
				t.Errorf("the output lacks %q: %.300q", tc.want, out)
			}
			if grew > 128<<20 {
				t.Errorf("the host's heap grew by %d MiB for one tool call", grew>>20)
			}
			if hard := time.Duration(sandbox.HardLimitFactor*tc.timeout)*time.Second + 10*time.Second; took > testenv.Stretch(hard) {
				t.Errorf("the cell took %v", took.Round(time.Millisecond))
			}
			alive(t, s, "js")
		})
	}
}
