package tape

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Writer writes a tape's records. It is safe for concurrent use: records
// are written in the order the calls of Write take its lock.
type Writer struct {
	mu       sync.Mutex
	zw       *zstd.Encoder
	out      *countWriter
	buf      bytes.Buffer
	enc      *json.Encoder // to buf
	complete int64         // bytes written up to the end of the last frame
	pending  bool          // records written since the last frame ended
	since    int64         // bytes of records written since then
	soon     *time.Timer   // ends the frame for FlushSoon
	armed    bool          // soon is set to fire
	holds    int           // Hold calls not yet Released
	due      bool          // soon fired while held
	closed   bool
	err      error // the first error, after which every call fails
}

// countWriter counts what reaches the underlying writer.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// NewWriter returns a Writer that writes a zstd stream to w. Nothing is
// written to w before the first Flush or Close.
func NewWriter(w io.Writer) (*Writer, error) {
	out := &countWriter{w: w}
	zw, err := zstd.NewWriter(out, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		return nil, fmt.Errorf("tape: %w", err)
	}
	return &Writer{zw: zw, out: out}, nil
}

// Complete is how many bytes of the tape are complete zstd frames: the
// tape up to the last Flush, which a Reader reads whole even while the
// Writer goes on.
func (w *Writer) Complete() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.complete
}

// Write checks r and writes it as one line.
func (w *Writer) Write(r Record) error {
	if err := r.Check(); err != nil {
		return fmt.Errorf("tape: writing a %s record: %w", r.Type, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.buf.Reset()
	if line, ok := appendQuick(w.buf.AvailableBuffer(), &r); ok {
		w.buf.Write(line)
	} else {
		if w.enc == nil {
			w.enc = json.NewEncoder(&w.buf)
			w.enc.SetEscapeHTML(false)
		}
		if err := w.enc.Encode(r); err != nil { // Encode ends the line
			return fmt.Errorf("tape: %w", err)
		}
	}
	if _, err := w.zw.Write(w.buf.Bytes()); err != nil {
		w.err = fmt.Errorf("tape: %w", err)
	}
	w.pending = true
	w.since += int64(w.buf.Len())
	return w.err
}

// Append writes complete zstd frames of another tape (as its Writer
// flushed them) as they are: a tape that goes on from another's. It must
// come before the first Write, or right after a Flush.
func (w *Writer) Append(frames []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.pending {
		return errors.New("tape: Append after a Write that was not flushed")
	}
	if _, err := w.out.Write(frames); err != nil {
		w.err = fmt.Errorf("tape: %w", err)
		return w.err
	}
	w.complete = w.out.n
	return nil
}

// FlushDelay is how long FlushSoon lets records wait for the end of
// their frame, at most.
const FlushDelay = 250 * time.Millisecond

// flushBytes is how much FlushSoon lets wait, at most.
const flushBytes = 64 << 10

// FlushSoon ends the zstd frame within FlushDelay (at once past 64 KiB
// waiting): a recorder calls it after each request, so that a tape cut
// short by a crash holds every request that finished that long before,
// without the cost of a frame at every request (most of what recording a
// small request costs).
func (w *Writer) FlushSoon() error {
	w.mu.Lock()
	if w.err != nil || !w.pending {
		defer w.mu.Unlock()
		return w.err
	}
	if w.since >= flushBytes {
		defer w.mu.Unlock()
		return w.flushLocked()
	}
	switch {
	case w.armed:
	case w.soon == nil:
		w.soon = time.AfterFunc(FlushDelay, w.flushUnheld)
	default:
		w.soon.Reset(FlushDelay)
	}
	w.armed = true
	w.mu.Unlock()
	return nil
}

// Hold keeps FlushSoon from ending a frame until Release: a recorder
// holds the tape from a request's record to its result, so that a frame
// FlushSoon ends never ends inside a request, and the tape up to Complete
// is whole requests.
func (w *Writer) Hold() {
	w.mu.Lock()
	w.holds++
	w.mu.Unlock()
}

// Release ends a Hold; the frame FlushSoon meant to end meanwhile is
// ended now.
func (w *Writer) Release() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.holds > 0 {
		w.holds--
	}
	if w.holds == 0 && w.due {
		w.due = false
		return w.flushLocked()
	}
	return w.err
}

// flushUnheld is FlushSoon's timer: it ends the frame, or has Release
// end it.
func (w *Writer) flushUnheld() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.holds > 0 {
		w.due = true
		return
	}
	w.flushLocked()
}

// Flush ends the zstd frame of what was written so far and starts the
// next: the tape up to here is then complete, readable whole (zstd frames
// concatenate) while the Writer goes on.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	if w.err != nil || w.closed {
		return w.err
	}
	if !w.pending && w.complete > 0 {
		return nil // nothing since the last frame
	}
	if err := w.zw.Close(); err != nil {
		w.err = fmt.Errorf("tape: %w", err)
		return w.err
	}
	w.complete = w.out.n
	w.pending, w.since, w.armed = false, 0, false
	w.zw.Reset(w.out)
	return nil
}

// Close ends the zstd frame. It does not close the underlying writer.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.soon != nil {
		w.soon.Stop()
	}
	w.closed = true
	if w.err != nil {
		w.zw.Close()
		return w.err
	}
	if err := w.zw.Close(); err != nil {
		w.err = fmt.Errorf("tape: %w", err)
		return w.err
	}
	w.complete = w.out.n
	w.err = errors.New("tape: writer closed")
	return nil
}

// Reader reads a tape's records in order.
type Reader struct {
	zr   *zstd.Decoder
	br   *bufio.Reader
	line int
	err  error
}

// NewReader returns a Reader of the tape r. The first record must be a
// header of FormatVersion; Next returns it first.
func NewReader(r io.Reader) (*Reader, error) {
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, fmt.Errorf("tape: %w", err)
	}
	return &Reader{zr: zr, br: bufio.NewReaderSize(zr, 64<<10)}, nil
}

// Next returns the next record, or io.EOF after the last. An error names
// the line of the bad record; after it Next keeps returning it.
func (r *Reader) Next() (Record, error) {
	if r.err != nil {
		return Record{}, r.err
	}
	rec, err := r.next()
	if err != nil {
		r.err = err
		if !errors.Is(err, io.EOF) {
			r.zr.Close()
		}
	}
	return rec, err
}

func (r *Reader) next() (Record, error) {
	var line []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxRecordBytes {
			return Record{}, fmt.Errorf("tape: line %d is longer than %d MiB", r.line+1, MaxRecordBytes>>20)
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return Record{}, fmt.Errorf("tape: line %d: %w (is this a wasmeval tape, zstd-compressed?)", r.line+1, err)
		}
		if errors.Is(err, io.EOF) {
			if len(line) == 0 {
				if r.line == 0 {
					return Record{}, errors.New("tape: empty: a tape starts with a header record")
				}
				return Record{}, io.EOF
			}
			return Record{}, fmt.Errorf("tape: line %d is cut short (no newline at the end): the tape is truncated", r.line+1)
		}
		break
	}
	r.line++
	var rec Record
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return Record{}, fmt.Errorf("tape: line %d: not a record: %v", r.line, err)
	}
	if dec.More() {
		return Record{}, fmt.Errorf("tape: line %d: more than one JSON value on the line", r.line)
	}
	if err := rec.Check(); err != nil {
		return Record{}, fmt.Errorf("tape: line %d: %w", r.line, err)
	}
	if (r.line == 1) != (rec.Type == TypeHeader) {
		if r.line == 1 {
			return Record{}, fmt.Errorf("tape: line 1 is a %s record; a tape starts with its header", rec.Type)
		}
		return Record{}, fmt.Errorf("tape: line %d: a second header", r.line)
	}
	return rec, nil
}

// Line is the line number of the record Next returned last.
func (r *Reader) Line() int { return r.line }

// Close frees the decoder.
func (r *Reader) Close() { r.zr.Close() }

// Tape is a whole tape in memory.
type Tape struct {
	Header Header
	// Root holds the root's initial entries (dir, file, symlink records).
	Root []Record
	// Events holds the rest, in order.
	Events []Record
}

// Read reads a whole tape. Root entries must come before the first event.
func Read(r io.Reader) (*Tape, error) {
	tr, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	t := &Tape{}
	for {
		rec, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, err
		}
		switch rec.Type {
		case TypeHeader:
			t.Header = *rec.Header
		case TypeDir, TypeFile, TypeSymlink:
			if len(t.Events) > 0 {
				return nil, fmt.Errorf("tape: line %d: a root entry after the session's events; the root comes first", tr.Line())
			}
			t.Root = append(t.Root, rec)
		default:
			t.Events = append(t.Events, rec)
		}
	}
}

// appendQuick appends the line of a request, result, clock or random
// record, the ones a session writes most, without encoding/json's
// reflection: what it writes is what Encode would, but for the order of
// the fields. ok is false for other records, and for JSON that is not
// valid or not on one line, which Encode then takes (and refuses).
func appendQuick(b []byte, r *Record) (_ []byte, ok bool) {
	raw := func(key string, v json.RawMessage) bool {
		if bytes.ContainsAny(v, "\n\r") || !json.Valid(v) {
			return false
		}
		b = append(append(append(b, `,"`...), key...), `":`...)
		b = append(b, v...)
		return true
	}
	b = append(append(append(b, `{"t":"`...), r.Type...), '"')
	switch r.Type {
	case TypeRequest, TypeResult:
		if r.Error != "" {
			return nil, false
		}
		b = strconv.AppendInt(append(b, `,"n":`...), int64(r.N), 10)
		if r.Nested {
			b = append(b, `,"nested":true`...)
		}
		if r.Type == TypeRequest && !raw("request", r.Request) || r.Type == TypeResult && !raw("result", r.Result) {
			return nil, false
		}
	case TypeClock:
		b = strconv.AppendInt(append(append(append(b, `,"clock":"`...), r.Clock...), `","ns":`...), *r.NS, 10)
	case TypeRand:
		b = append(base64.StdEncoding.AppendEncode(append(b, `,"data":"`...), r.Data), '"')
	default:
		return nil, false
	}
	return append(b, "}\n"...), true
}
