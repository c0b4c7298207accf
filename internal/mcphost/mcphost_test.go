package mcphost_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/mcphost"
)

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
		err      string
	}{
		{name: "plain", in: "npx -y @modelcontextprotocol/server-everything", want: []string{"npx", "-y", "@modelcontextprotocol/server-everything"}},
		{name: "quotes", in: `"/a b/node" 'x y' z\ w ""`, want: []string{"/a b/node", "x y", "z w", ""}},
		{name: "spaces", in: "  a \t b  ", want: []string{"a", "b"}},
		{name: "unclosed", in: `a "b`, err: "unclosed \" quote"},
		{name: "empty", in: "  ", err: "the command is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mcphost.SplitCommand(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("%q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
