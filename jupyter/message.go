package jupyter

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ProtocolVersion is the Jupyter messaging protocol version this client speaks.
const ProtocolVersion = "5.3"

// Header is a Jupyter message header (also the parent_header of a reply).
type Header struct {
	MsgID    string `json:"msg_id"`
	Session  string `json:"session"`
	Username string `json:"username"`
	Date     string `json:"date"`
	MsgType  string `json:"msg_type"`
	Version  string `json:"version"`
	// SubshellID is absent unless the kernel supports subshells; kept so a
	// reply's parent header round-trips unchanged.
	SubshellID *string `json:"subshell_id,omitempty"`
}

// Message is one Jupyter wire message. Content and Metadata stay raw JSON so
// a message can be relayed or re-signed without re-encoding; Parent is the
// zero Header when the message has no parent (encoded as {}).
type Message struct {
	// Identities are the ZeroMQ routing prefixes before the <IDS|MSG>
	// delimiter (iopub topics, router identities). The websocket transport
	// has none.
	Identities [][]byte
	Header     Header
	Parent     Header
	Metadata   json.RawMessage
	Content    json.RawMessage
	Buffers    [][]byte
}

// NewMessage returns a message of type msgType in session with a fresh id,
// the current time and content encoded as JSON (nil content becomes {}).
func NewMessage(session, msgType string, content any) (*Message, error) {
	raw := json.RawMessage("{}")
	if content != nil {
		b, err := json.Marshal(content)
		if err != nil {
			return nil, fmt.Errorf("jupyter: encode %s content: %w", msgType, err)
		}
		raw = b
	}
	return &Message{
		Header: Header{
			MsgID:    NewID(),
			Session:  session,
			Username: "wasmeval",
			Date:     time.Now().UTC().Format(time.RFC3339Nano),
			MsgType:  msgType,
			Version:  ProtocolVersion,
		},
		Metadata: json.RawMessage("{}"),
		Content:  raw,
	}, nil
}

// Reply returns a message of type msgType whose parent is m, in m's session.
// The host uses it to answer a kernel's input_request.
func (m *Message) Reply(msgType string, content any) (*Message, error) {
	r, err := NewMessage(m.Header.Session, msgType, content)
	if err != nil {
		return nil, err
	}
	r.Parent = m.Header
	return r, nil
}

// Decode unmarshals the message's content into v.
func (m *Message) Decode(v any) error {
	if err := json.Unmarshal(m.Content, v); err != nil {
		return fmt.Errorf("jupyter: decode %s content: %w", m.Header.MsgType, err)
	}
	return nil
}

// ParentID is the msg_id of the message this one answers ("" when none).
func (m *Message) ParentID() string { return m.Parent.MsgID }

// NewID returns a random message or session id (32 hex digits, as
// jupyter_client's uuid4().hex).
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b[:])
}

// delimiter separates routing identities from the signed frames.
var delimiter = []byte("<IDS|MSG>")

// Signer signs and verifies messages with HMAC-SHA256 over the header,
// parent header, metadata and content frames. A Signer with an empty key
// signs with "" and accepts any signature, as the protocol specifies for
// an empty key.
type Signer struct{ key []byte }

// NewSigner returns a Signer for the connection file's key.
func NewSigner(key string) *Signer { return &Signer{key: []byte(key)} }

// sign returns the hex HMAC of the four frames.
func (s *Signer) sign(frames [4][]byte) []byte {
	if len(s.key) == 0 {
		return nil
	}
	h := hmac.New(sha256.New, s.key)
	for _, f := range frames {
		h.Write(f)
	}
	out := make([]byte, hex.EncodedLen(h.Size()))
	hex.Encode(out, h.Sum(nil))
	return out
}

// ErrBadSignature is returned for a message whose HMAC does not match.
var ErrBadSignature = errors.New("jupyter: message signature does not match the connection key")

// jsonOrEmpty encodes an empty raw message as {}.
func jsonOrEmpty(r json.RawMessage) []byte {
	if len(r) == 0 {
		return []byte("{}")
	}
	return r
}

// headerFrame encodes a header; a zero header (no parent) becomes {}.
func headerFrame(h Header) ([]byte, error) {
	if h == (Header{}) {
		return []byte("{}"), nil
	}
	return json.Marshal(h)
}

// Encode returns the wire frames of m: identities, delimiter, signature,
// header, parent header, metadata, content, then buffers.
func (s *Signer) Encode(m *Message) ([][]byte, error) {
	var f [4][]byte
	var err error
	if f[0], err = headerFrame(m.Header); err != nil {
		return nil, fmt.Errorf("jupyter: encode header: %w", err)
	}
	if f[1], err = headerFrame(m.Parent); err != nil {
		return nil, fmt.Errorf("jupyter: encode parent header: %w", err)
	}
	f[2], f[3] = jsonOrEmpty(m.Metadata), jsonOrEmpty(m.Content)
	frames := make([][]byte, 0, len(m.Identities)+6+len(m.Buffers))
	frames = append(frames, m.Identities...)
	frames = append(frames, delimiter, s.sign(f))
	frames = append(frames, f[:]...)
	frames = append(frames, m.Buffers...)
	return frames, nil
}

// Decode parses wire frames into a message, checking the signature.
func (s *Signer) Decode(frames [][]byte) (*Message, error) {
	i := 0
	for ; i < len(frames); i++ {
		if string(frames[i]) == string(delimiter) {
			break
		}
	}
	if i == len(frames) {
		return nil, errors.New("jupyter: message has no <IDS|MSG> delimiter")
	}
	rest := frames[i+1:]
	if len(rest) < 5 {
		return nil, fmt.Errorf("jupyter: message has %d frames after the delimiter, want at least 5", len(rest))
	}
	var f [4][]byte
	copy(f[:], rest[1:5])
	if len(s.key) > 0 && !hmac.Equal(rest[0], s.sign(f)) {
		return nil, ErrBadSignature
	}
	m := &Message{Identities: frames[:i]}
	if err := json.Unmarshal(f[0], &m.Header); err != nil {
		return nil, fmt.Errorf("jupyter: decode header: %w", err)
	}
	if err := json.Unmarshal(f[1], &m.Parent); err != nil {
		return nil, fmt.Errorf("jupyter: decode parent header: %w", err)
	}
	m.Metadata = json.RawMessage(f[2])
	m.Content = json.RawMessage(f[3])
	if len(rest) > 5 {
		m.Buffers = rest[5:]
	}
	return m, nil
}
