package mcphost

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

// TestCapLines: the server's lines pass through whole up to the cap; a
// longer one is dropped, and when it is an answer an error answer with its
// id stands in for it (the id found at the top level wherever it is, also
// after a result of any size); the lines after it pass on.
func TestCapLines(t *testing.T) {
	const max = 100
	big := strings.Repeat("x", 300)
	for _, tc := range []struct {
		name, line string
		id         string // the stand-in's id; empty: dropped with no stand-in
	}{
		{"id first", `{"jsonrpc":"2.0","id":7,"result":{"text":"` + big + `"}}`, "7"},
		{"id last", `{"result":{"content":[{"type":"text","text":"` + big + `"}]},"jsonrpc":"2.0","id":12}`, "12"},
		{"string id", `{"result":"` + big + `", "id" : "a\"b"}`, `"a\"b"`},
		{"nested ids are not the id", `{"result":{"id":1,"items":[{"id":2}],"t":"` + big + `"},"id":3}`, "3"},
		{"an id-like string is not the id", `{"result":"\"id\":5 ` + big + `","id":4}`, "4"},
		{"a key named id inside a string", `{"result":{"x":"` + big + `"},"key":"id","id":5}`, "5"},
		{"a request of the server's", `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"t":"` + big + `"}}`, ""},
		{"a request with its method last", `{"jsonrpc":"2.0","id":1,"params":{"t":"` + big + `"},"method":"roots/list"}`, ""},
		{"a method inside the result", `{"result":{"method":"x","t":"` + big + `"},"id":6}`, "6"},
		{"a notification", `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + big + `"}}`, ""},
		{"an object id", `{"id":{"a":1},"result":"` + big + `"}`, ""},
		{"a batch", `[{"id":1,"result":"` + big + `"}]`, ""},
		{"a bare string", `"` + big + `"`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var droppedSize int64
			r := &capLines{br: bufio.NewReaderSize(strings.NewReader("{\"a\":1}\n"+tc.line+"\n{\"b\":2}\n"), 16), max: max,
				dropped: func(size int64, id []byte) { droppedSize = size }}
			b, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			want := 2
			if tc.id != "" {
				want = 3
			}
			if len(lines) != want || lines[0] != `{"a":1}` || lines[len(lines)-1] != `{"b":2}` {
				t.Fatalf("got %q; want the line before, %d stand-in(s) and the line after", lines, want-2)
			}
			if droppedSize != int64(len(tc.line)+1) {
				t.Errorf("dropped %d bytes; want %d", droppedSize, len(tc.line)+1)
			}
			if tc.id != "" {
				if s := lines[1]; !strings.Contains(s, `"id":`+tc.id) || !strings.Contains(s, tooLargeText) || !strings.Contains(s, "-32099") {
					t.Errorf("the stand-in %s; want an error answer with id %s", s, tc.id)
				}
			}
		})
	}
	// A line of exactly the cap (its newline included) passes.
	line := `{"id":1,"r":"` + strings.Repeat("y", max-len(`{"id":1,"r":""}`)-1) + `"}`
	r := &capLines{br: bufio.NewReaderSize(strings.NewReader(line+"\n"), 16), max: max}
	if b, err := io.ReadAll(r); err != nil || string(b) != line+"\n" {
		t.Errorf("a line at the cap: %q, %v", b, err)
	}
}
