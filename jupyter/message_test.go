package jupyter_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/wasmeval/wasmeval/jupyter"
)

// TestSignedRoundTrip: a message encodes to the wire frames, its HMAC
// checks out, and it decodes to the same message; a changed frame or
// another key is refused.
func TestSignedRoundTrip(t *testing.T) {
	s := jupyter.NewSigner("secret-key")
	m, err := jupyter.NewMessage("sess", "execute_request", map[string]any{"code": "1"})
	if err != nil {
		t.Fatal(err)
	}
	m.Identities = [][]byte{[]byte("ident")}
	m.Buffers = [][]byte{[]byte("buf")}
	frames, err := s.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if string(frames[0]) != "ident" || string(frames[1]) != "<IDS|MSG>" || len(frames[2]) != 64 {
		t.Fatalf("frames = %q", frames)
	}
	got, err := s.Decode(frames)
	if err != nil {
		t.Fatal(err)
	}
	if got.Header != m.Header || got.Parent != (jupyter.Header{}) || !bytes.Equal(got.Content, m.Content) || string(got.Buffers[0]) != "buf" {
		t.Errorf("decoded %+v, want %+v", got, m)
	}
	var c struct{ Code string }
	if err := got.Decode(&c); err != nil || c.Code != "1" {
		t.Errorf("content %q, %v", c.Code, err)
	}

	tampered := append([][]byte(nil), frames...)
	tampered[6] = []byte(`{"code": "import os"}`)
	if _, err := s.Decode(tampered); !errors.Is(err, jupyter.ErrBadSignature) {
		t.Errorf("tampered content: %v, want ErrBadSignature", err)
	}
	if _, err := jupyter.NewSigner("other").Decode(frames); !errors.Is(err, jupyter.ErrBadSignature) {
		t.Errorf("another key: %v, want ErrBadSignature", err)
	}

	// A reply's parent header is the request's header.
	r, err := got.Reply("input_reply", map[string]string{"value": ""})
	if err != nil || r.Parent != m.Header || r.Header.Session != "sess" {
		t.Errorf("reply %+v, %v", r, err)
	}
	// With no key, nothing is signed and nothing checked.
	none := jupyter.NewSigner("")
	frames, _ = none.Encode(m)
	if len(frames[2]) != 0 {
		t.Errorf("unsigned signature frame = %q", frames[2])
	}
	if _, err := none.Decode(frames); err != nil {
		t.Error(err)
	}
}

func TestDecodeMalformed(t *testing.T) {
	s := jupyter.NewSigner("")
	for _, frames := range [][][]byte{
		nil,
		{[]byte("no delimiter")},
		{[]byte("<IDS|MSG>"), []byte("sig"), []byte("{}")},
		{[]byte("<IDS|MSG>"), nil, []byte("not json"), []byte("{}"), []byte("{}"), []byte("{}")},
	} {
		if _, err := s.Decode(frames); err == nil {
			t.Errorf("Decode(%q) succeeded", frames)
		}
	}
}

// FuzzDecode: wire frames from a kernel or server never panic the
// decoder, and what it accepts encodes back to frames it accepts.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"msg_id":"a","msg_type":"status"}`), []byte(`{}`), []byte(`{"execution_state":"idle"}`))
	f.Add([]byte(`[]`), []byte(`null`), []byte(`"x"`))
	s := jupyter.NewSigner("") // no key: the fuzzer reaches the JSON
	f.Fuzz(func(t *testing.T, header, parent, content []byte) {
		msg, err := s.Decode([][]byte{[]byte("<IDS|MSG>"), nil, header, parent, []byte("{}"), content})
		if err != nil {
			return
		}
		out, err := s.Encode(msg)
		if err != nil {
			return
		}
		if _, err := s.Decode(out); err != nil {
			t.Fatalf("re-encoded message does not decode: %v", err)
		}
	})
}
