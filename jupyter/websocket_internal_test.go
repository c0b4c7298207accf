package jupyter

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/coder/websocket"
)

func TestWebsocketFrameRoundTrip(t *testing.T) {
	parent, _ := NewMessage("s", "execute_request", nil)
	for _, tc := range []struct {
		name    string
		buffers [][]byte
		typ     websocket.MessageType
	}{
		{"text", nil, websocket.MessageText},
		{"binary", [][]byte{[]byte("\x00\x01two"), {}, []byte("three")}, websocket.MessageBinary},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := parent.Reply("comm_msg", map[string]any{"data": map[string]int{"x": 1}})
			m.Buffers = tc.buffers
			typ, data, err := encodeWebsocket(Shell, m)
			if err != nil {
				t.Fatal(err)
			}
			if typ != tc.typ {
				t.Errorf("frame type = %v, want %v", typ, tc.typ)
			}
			ch, got, err := decodeWebsocket(typ, data)
			if err != nil {
				t.Fatal(err)
			}
			if ch != Shell || got.Header != m.Header || got.Parent != m.Parent || !bytes.Equal(got.Content, m.Content) || len(got.Buffers) != len(tc.buffers) {
				t.Fatalf("round trip: %s %+v, want %+v", ch, got, m)
			}
			for i := range tc.buffers {
				if !bytes.Equal(got.Buffers[i], tc.buffers[i]) {
					t.Errorf("buffer %d = %q, want %q", i, got.Buffers[i], tc.buffers[i])
				}
			}
		})
	}
}

func TestDecodeWebsocketBad(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  websocket.MessageType
		data string
	}{
		{"not JSON", websocket.MessageText, "hello"},
		{"unknown channel", websocket.MessageText, `{"header":{},"parent_header":{},"metadata":{},"content":{},"channel":"nope"}`},
		{"short binary", websocket.MessageBinary, "\x00\x00"},
		{"zero buffers", websocket.MessageBinary, "\x00\x00\x00\x00"},
		{"offset past the end", websocket.MessageBinary, "\x00\x00\x00\x01\x00\x00\x00\xff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := decodeWebsocket(tc.typ, []byte(tc.data)); err == nil {
				t.Error("decoded")
			}
		})
	}
}

// FuzzDecodeWebsocket: frames come from a server over the network; no
// frame may panic the decoder.
func FuzzDecodeWebsocket(f *testing.F) {
	m, _ := NewMessage("s", "stream", map[string]string{"name": "stdout", "text": "hi"})
	m.Buffers = [][]byte{[]byte("b")}
	_, bin, _ := encodeWebsocket(IOPub, m)
	m.Buffers = nil
	_, text, _ := encodeWebsocket(IOPub, m)
	f.Add(true, bin)
	f.Add(false, text)
	f.Fuzz(func(t *testing.T, binary bool, data []byte) {
		typ := websocket.MessageText
		if binary {
			typ = websocket.MessageBinary
		}
		ch, got, err := decodeWebsocket(typ, data)
		if err == nil && (ch == "" || got == nil || !json.Valid(jsonOrEmpty(got.Content))) {
			t.Errorf("decoded %q into %s %+v", data, ch, got)
		}
	})
}
