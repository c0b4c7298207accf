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
	"unsafe"

	"github.com/klauspost/compress/zstd"
)

// Writer writes a tape's records. It is safe for concurrent use: records
// are written in the order the calls of Write take its lock.
type Writer struct {
	mu       sync.Mutex
	zw       *zstd.Encoder
	out      *countWriter
	fg, bg   lineEncoder // for Write, and for a drain's goroutine
	complete int64       // bytes written up to the end of the last frame
	pending  bool        // records written since the last frame ended
	since    int64       // bytes of records written since then
	soon     *time.Timer // ends the frame for FlushSoon
	armed    bool        // soon is set to fire
	armedNow bool        // at once (flushBytes wait), not after FlushDelay
	holds    int         // Hold calls not yet Released
	due      bool        // soon fired while held
	closed   bool
	err      error // the first error, after which every call fails
	limit    int64 // SetLimit's; 0: none

	// Deferred records (Deferred) wait in later, to be encoded when the
	// frame ends or, past maxLater, by a drain on a goroutine of its own;
	// the records written after the first of them, or during a drain,
	// wait in lines, encoded, each later record going at its offset in
	// lines. drained is signalled when a drain ends.
	later    []deferred
	lines    []byte
	draining bool
	ending   bool  // the drain under way ends the frame after its records
	inDrain  int64 // bytes of encoded records the drain under way took
	drainOut int64 // bytes of records the last drain wrote
	drained  sync.Cond
	// spareLater and spareLines are a finished drain's, kept for reuse.
	spareLater []deferred
	spareLines []byte
}

// deferred is a record waiting for its encoding (Deferred), to be
// written at offset at of Writer.lines: just what such a record holds,
// smaller to queue than a Record.
type deferred struct {
	at     int
	n      int
	result bool // else a request
	nested bool
	value  any // what json.Marshal encodes as the request or result
}

// record is the deferred record, without its JSON.
func (d *deferred) record() Record {
	r := Record{Type: TypeRequest, N: d.n, Nested: d.nested, value: d.value}
	if d.result {
		r.Type = TypeResult
	}
	return r
}

// maxLater is how many deferred records (or drainLines bytes of records
// encoded at once) wait before a drain encodes and compresses them off
// the writers' path; each drain is a goroutine's start and, on an idle
// machine, a wake of a thread (a futex call, on the path), so they wait
// in batches, but not larger: with 1024 the trivial recorded JavaScript
// cell's path cost 1-1.5 points more (the frozen results the drain
// recycles come back from further away). Past hardLater (or maxLines
// bytes), a Write waits for the encoding, so that a recorder that
// outpaces it does not queue without bound.
const (
	maxLater   = 256
	hardLater  = 4096
	drainLines = 64 << 10
	maxLines   = 4 << 20
)

// lineEncoder encodes records as lines.
type lineEncoder struct {
	buf  bytes.Buffer
	enc  *json.Encoder // to buf
	out  []byte        // kept for reuse by drains
	rec  Record        // the deferred record being encoded
	json []byte        // a JSONAppender's JSON, kept for reuse
}

// JSONAppender is a deferred value (Deferred) that writes its own JSON,
// faster than json.Marshal: AppendJSON appends exactly what json.Marshal
// would write for the value, or returns false to have json.Marshal write
// it.
type JSONAppender interface {
	AppendJSON(b []byte) ([]byte, bool)
}

// Recycler is a deferred value that may be reused once the Writer has its
// JSON: the Writer calls Recycle then, and uses nothing of it afterwards.
type Recycler interface {
	Recycle()
}

// encode encodes r as a line, in e.buf; trusted skips checking the JSON
// of a request or result (json.Marshal's, from Deferred).
func (e *lineEncoder) encode(r *Record, trusted bool) ([]byte, error) {
	e.buf.Reset()
	if line, ok := appendQuick(e.buf.AvailableBuffer(), r, trusted); ok {
		e.buf.Write(line)
		return e.buf.Bytes(), nil
	}
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.buf)
		e.enc.SetEscapeHTML(false)
	}
	if err := e.enc.Encode(r); err != nil { // Encode ends the line
		return nil, fmt.Errorf("tape: %w", err)
	}
	return e.buf.Bytes(), nil
}

// encodeDeferred gives the deferred record d its JSON and encodes it,
// appending the line to out; a request whose JSON cannot be had is an
// error.
func (e *lineEncoder) encodeDeferred(out []byte, d *deferred) ([]byte, error) {
	if a, ok := d.value.(JSONAppender); ok {
		// The usual request and result: its line straight into out, as
		// appendQuick writes it, without copying its JSON twice more.
		start := len(out)
		line := append(out, `{"t":"`...)
		if d.result {
			line = append(line, TypeResult...)
		} else {
			line = append(line, TypeRequest...)
		}
		line = strconv.AppendInt(append(line, `","n":`...), int64(d.n), 10)
		if d.nested {
			line = append(line, `,"nested":true`...)
		}
		if d.result {
			line = append(line, `,"result":`...)
		} else {
			line = append(line, `,"request":`...)
		}
		if line, ok = a.AppendJSON(line); ok {
			if rc, ok := d.value.(Recycler); ok {
				rc.Recycle()
			}
			return append(line, "}\n"...), nil
		}
		out = line[:start] // json.Marshal's, below
	}
	e.rec = d.record() // reused: a Record per line would escape
	r := &e.rec
	var data []byte
	var err error
	if a, ok := r.value.(JSONAppender); ok {
		e.json, ok = a.AppendJSON(e.json[:0])
		if ok {
			data = e.json
		}
	}
	if data == nil {
		data, err = json.Marshal(r.value)
	}
	if rc, ok := r.value.(Recycler); ok {
		defer rc.Recycle() // once its JSON is in the line
	}
	r.value = nil
	switch {
	case err != nil && r.Type == TypeResult:
		r.Error = fmt.Sprintf("the result could not be encoded: %v", err)
	case err != nil:
		return out, fmt.Errorf("tape: encoding a %s record: %w", r.Type, err)
	case r.Type == TypeRequest:
		r.Request = data
	default:
		r.Result = data
	}
	line, err := e.encode(r, err == nil)
	e.rec = Record{}
	if err != nil {
		return out, err
	}
	return append(out, line...), nil
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
	zw, err := zstd.NewWriter(out, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		return nil, fmt.Errorf("tape: %w", err)
	}
	tw := &Writer{zw: zw, out: out}
	tw.drained.L = &tw.mu
	return tw, nil
}

// ErrLimit is the error of a Writer's calls once the tape has reached its
// limit (SetLimit).
var ErrLimit = errors.New("tape: the tape reached its size limit")

// SetLimit bounds the tape at about n bytes (n > 0; 0 means no limit, the
// default): a record that would take it past n is not written. The frame
// under way is ended with the records before it, so the tape stays
// readable up to there (a request cut short reads as a recording cut
// short), and from then on every call returns an error wrapping ErrLimit.
// The bound counts what reached the underlying writer and, for the
// frame under way, its records before compression; so the tape never
// holds more than n bytes and a zstd frame's end (a few bytes).
// A recorder sets it so that a guest whose reads of clocks and random
// bytes are recorded as read cannot fill the disk with its tape.
func (w *Writer) SetLimit(n int64) {
	w.mu.Lock()
	w.limit = max(n, 0)
	w.mu.Unlock()
}

// overLimit reports whether writing b more bytes of records would take
// the tape past its limit; w.mu is held.
func (w *Writer) overLimit(b int) bool {
	return w.limit > 0 && w.out.n+w.since+int64(b) > w.limit
}

// stopAtLimit ends the frame under way with what it holds and fails every
// later call with ErrLimit; w.mu is held, and no drain writes.
func (w *Writer) stopAtLimit() {
	if err := w.zw.Close(); err == nil {
		w.complete = w.out.n
	}
	w.zw.Reset(io.Discard) // Close writes nothing more to the tape
	w.pending, w.since = false, 0
	w.err = fmt.Errorf("%w of %d bytes", ErrLimit, w.limit)
}

// Complete is how many bytes of the tape are complete zstd frames: the
// tape up to the last Flush, which a Reader reads whole even while the
// Writer goes on.
func (w *Writer) Complete() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.ending { // the frame Release or FlushSoon ended, not yet written
		w.drained.Wait()
	}
	return w.complete
}

// Write checks r and writes it as one line.
func (w *Writer) Write(r Record) error {
	if r.value == nil {
		return w.writeNow(r)
	}
	// Deferred: a request's path, kept short (r does not escape).
	if err := r.Check(); err != nil {
		return fmt.Errorf("tape: writing a %s record: %w", r.Type, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.deferLocked(&r, false)
}

// HoldWrite is Hold and Write under one lock: a recorder's request
// record, held until its result (WriteRelease). The hold is taken even
// when the write fails.
func (w *Writer) HoldWrite(r Record) error {
	if r.value == nil {
		w.Hold()
		return w.writeNow(r)
	}
	err := r.Check()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.holds++
	if err != nil {
		return fmt.Errorf("tape: writing a %s record: %w", r.Type, err)
	}
	return w.deferLocked(&r, false)
}

// WriteRelease is Write, Release and, with soon, FlushSoon, under one
// lock: a recorder's result record, which ends the Hold of its request.
// It returns the first error of the three.
func (w *Writer) WriteRelease(r Record, soon bool) error {
	var err error
	if r.value == nil {
		err = w.writeNow(r) // rare: a result with an error or a wait
	} else if err = r.Check(); err != nil {
		err = fmt.Errorf("tape: writing a %s record: %w", r.Type, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.holds > 0 {
		w.holds--
	}
	if err == nil && r.value != nil {
		// Released first: a drain this record starts may then end the
		// frame, between requests, instead of a drain of its own later.
		err = w.deferLocked(&r, w.holds == 0)
	}
	if w.holds == 0 && w.due {
		w.due = false
		w.endSoon()
	}
	if soon && err == nil {
		err = w.flushSoonLocked()
	}
	if err == nil {
		err = w.err
	}
	return err
}

// deferLocked queues the deferred record r (checked); with end, a drain
// it starts may also end the frame (no request is held). w.mu is held.
func (w *Writer) deferLocked(r *Record, end bool) error {
	if w.err != nil {
		return w.err
	}
	w.pending = true
	w.later = append(w.later, deferred{at: len(w.lines), n: r.N, result: r.Type == TypeResult, nested: r.Nested, value: r.value})
	w.queued(end)
	return w.err
}

// WriteClock writes a clock record (Write of a TypeClock record), without
// a Record: a recorded guest's clock read, on its path.
func (w *Writer) WriteClock(clock string, ns int64) error {
	if clock != ClockWall && clock != ClockMono {
		return fmt.Errorf("tape: writing a %s record: clock %q; give %q or %q", TypeClock, clock, ClockWall, ClockMono)
	}
	r := Record{Type: TypeClock, Clock: clock, NS: &ns}
	return w.writeQuick(&r)
}

// WriteRand writes a rand record of data (Write of a TypeRand record),
// without a Record or a copy of data: a recorded guest's random read.
func (w *Writer) WriteRand(data []byte) error {
	if len(data) == 0 {
		return fmt.Errorf("tape: writing a %s record: a rand record needs data", TypeRand)
	}
	r := Record{Type: TypeRand, Data: data}
	return w.writeQuick(&r)
}

// writeQuick queues the line of a clock or rand record (checked), which
// appendQuick writes: compressed by a drain (drainLines), off the path of
// the guest that reads, unlike writeNow's records (rare, and some large:
// a root's files).
func (w *Writer) writeQuick(r *Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.pending = true
	w.lines, _ = appendQuick(w.lines, r, true)
	w.queued(false)
	return w.err
}

// writeNow writes a record that is not deferred: encoded now, and
// written now or after the records that wait.
func (w *Writer) writeNow(r Record) error {
	if err := r.Check(); err != nil {
		return fmt.Errorf("tape: writing a %s record: %w", r.Type, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.pending = true
	line, err := w.fg.encode(&r, false)
	if err != nil {
		return err
	}
	if len(w.later) > 0 || len(w.lines) > 0 || w.draining {
		// Records wait before it: it waits with them, in order.
		w.lines = append(w.lines, line...)
		w.queued(false)
		return w.err
	}
	w.writeLocked(line)
	return w.err
}

// queued starts a drain when enough records wait, or drains them here
// when too many do; with end (no request is held), the drain may also
// end the frame.
func (w *Writer) queued(end bool) {
	switch {
	case len(w.later) >= hardLater || len(w.lines) >= maxLines:
		w.drainLocked()
	case (len(w.later) >= maxLater || len(w.lines) >= drainLines) && !w.draining:
		// It ends the frame when the frame would reach flushBytes with
		// a batch like the last: frames as FlushSoon makes them, each
		// frame's end costs bytes and compression.
		end = end && w.since+w.drainOut >= flushBytes
		if end {
			w.due = false // this drain ends the frame FlushSoon's timer meant to
		}
		w.startDrain(end)
	}
}

// writeLocked passes encoded lines to the compressor.
func (w *Writer) writeLocked(lines []byte) {
	if w.err != nil || len(lines) == 0 {
		return
	}
	if w.overLimit(len(lines)) {
		w.stopAtLimit()
		return
	}
	if _, err := w.zw.Write(lines); err != nil {
		w.err = fmt.Errorf("tape: %w", err)
	}
	w.since += int64(len(lines))
}

// startDrain encodes the waiting records on a goroutine of its own, the
// lock released, and writes them; the records written meanwhile wait.
// With end, it then ends the frame (endSoon).
func (w *Writer) startDrain(end bool) {
	later, lines := w.later, w.lines
	w.later, w.lines = w.spareLater[:0], w.spareLines[:0]
	w.spareLater, w.spareLines = nil, nil
	w.draining, w.ending, w.inDrain = true, end, int64(len(lines))
	if end {
		// The records from here on are the next frame's.
		w.pending, w.armed = false, false
	}
	go func() {
		out := w.bg.out[:0]
		var err error
		prev := 0
		for i := range later {
			d := &later[i]
			out = append(out, lines[prev:d.at]...)
			prev = d.at
			if out, err = w.bg.encodeDeferred(out, d); err != nil {
				break
			}
		}
		out = append(out, lines[prev:]...)
		clear(later) // the values hold results
		// Compressed without the lock, so that the records written
		// meanwhile (a cell's request, on its path) need not wait for
		// it: while draining, nothing else writes to the compressor
		// (writeNow queues, the rest wait for the drain to end).
		w.mu.Lock()
		failed := w.err != nil || err != nil
		if !failed && w.overLimit(len(out)) {
			w.stopAtLimit() // nothing else writes to the compressor meanwhile
			failed = true
		}
		w.mu.Unlock()
		var zerr error
		if !failed && len(out) > 0 {
			_, zerr = w.zw.Write(out)
		}
		if end && !failed && zerr == nil {
			// The frame's end, compressing what it holds: the costly
			// part of recording, off the writers' path too.
			if zerr = w.zw.Close(); zerr == nil {
				w.zw.Reset(w.out)
			}
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		switch {
		case err != nil && w.err == nil:
			w.err = err
		case zerr != nil && w.err == nil:
			w.err = fmt.Errorf("tape: %w", zerr)
		case !failed && zerr == nil && end:
			w.complete, w.since = w.out.n, 0
		case !failed && zerr == nil:
			w.since += int64(len(out))
		}
		w.bg.out = out
		w.drainOut = int64(len(out))
		if len(w.later) == 0 {
			w.writeLocked(w.lines) // what waited only for the drain
			w.lines = w.lines[:0]
		}
		w.spareLater, w.spareLines = later, lines
		w.draining, w.ending, w.inDrain = false, false, 0
		w.drained.Broadcast()
		if w.due && w.holds == 0 {
			w.due = false
			w.endSoon() // the end Release or the timer asked for meanwhile
		}
	}()
}

// endSoon ends the frame on a goroutine of its own, the lock released,
// so that the writer that asked (Release, on a request's path) does not
// wait for zstd; the records written meanwhile go to the next frame.
// A drain under way ends it when it is done. w.mu is held, and no
// request is held (the frame ends between requests).
func (w *Writer) endSoon() {
	switch {
	case w.err != nil || w.closed || !w.pending:
	case w.draining:
		w.due = true
	default:
		w.startDrain(true)
	}
}

// drainLocked waits for a drain under way, then encodes the deferred
// records and writes them, and the records that wait with them, in order.
func (w *Writer) drainLocked() {
	for w.draining {
		w.drained.Wait()
	}
	prev := 0
	for i := range w.later {
		d := &w.later[i]
		w.writeLocked(w.lines[prev:d.at])
		prev = d.at
		if w.err != nil {
			break
		}
		var line []byte
		if line, w.err = w.fg.encodeDeferred(w.fg.out[:0], d); w.err != nil {
			break
		}
		w.writeLocked(line)
		w.fg.out = line
	}
	w.writeLocked(w.lines[prev:])
	clear(w.later)
	w.later, w.lines = w.later[:0], w.lines[:0]
}

// Append writes complete zstd frames of another tape (as its Writer
// flushed them) as they are: a tape that goes on from another's. It must
// come before the first Write, or right after a Flush.
func (w *Writer) Append(frames []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.draining { // the drain's are the tape's bytes meanwhile
		w.drained.Wait()
	}
	if w.err != nil {
		return w.err
	}
	if w.pending {
		return errors.New("tape: Append after a Write that was not flushed")
	}
	if w.overLimit(len(frames)) {
		w.err = fmt.Errorf("%w of %d bytes: the tape it goes on from is longer", ErrLimit, w.limit)
		return w.err
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

// FlushSoon ends the zstd frame within FlushDelay (without delay past
// 64 KiB waiting), on a goroutine of its own: a recorder calls it after
// each request, so that a tape cut
// short by a crash holds every request that finished that long before,
// without the cost of a frame at every request (most of what recording a
// small request costs).
func (w *Writer) FlushSoon() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushSoonLocked()
}

func (w *Writer) flushSoonLocked() error {
	if w.err != nil || !w.pending {
		return w.err
	}
	delay := FlushDelay
	waiting := int64(len(w.lines))
	if !w.ending {
		// While a drain ends the last frame, since is that frame's; the
		// records that wait are the next one's. Otherwise the records a
		// drain is compressing are this frame's too.
		waiting += w.since + w.inDrain
	}
	if waiting >= flushBytes {
		delay = 0 // now, but on the timer's goroutine: not the caller's
	}
	switch {
	case w.armed && (delay > 0 || w.armedNow):
		// Set already: a Reset at every request costs the timer's
		// lock and, for an earlier time, a wake of the timer's thread.
	case w.soon == nil:
		w.soon, w.armedNow = time.AfterFunc(delay, w.flushUnheld), delay == 0
	default:
		w.soon.Reset(delay)
		w.armedNow = delay == 0
	}
	w.armed = true
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
// ended now, on a goroutine of its own (the caller does not wait for
// zstd; Complete and Flush wait for it).
func (w *Writer) Release() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.holds > 0 {
		w.holds--
	}
	if w.holds == 0 && w.due {
		w.due = false
		w.endSoon()
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
	w.endSoon()
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
	for w.draining { // it may be ending a frame
		w.drained.Wait()
	}
	if w.err != nil || w.closed {
		return w.err
	}
	if !w.pending && w.complete > 0 {
		return nil // nothing since the last frame
	}
	if w.drainLocked(); w.err != nil {
		return w.err
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
	for w.draining { // its compressor is the drain's meanwhile
		w.drained.Wait()
	}
	if w.err == nil {
		w.drainLocked()
	}
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
	zr    *zstd.Decoder
	br    *bufio.Reader
	line  int
	bytes int64 // of the lines read so far, decompressed
	err   error
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
	r.bytes += int64(len(line))
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

// readLimit is MaxTapeBytes; tests lower it.
var readLimit int64 = MaxTapeBytes

// recordBytes is what a record takes in a Tape, beside its line's bytes.
const recordBytes = int64(unsafe.Sizeof(Record{}))

// Read reads a whole tape. Root entries must come before the first event.
// A tape that would take more than MaxTapeBytes in memory is refused.
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
		if tr.bytes+int64(tr.line)*recordBytes > readLimit {
			return nil, fmt.Errorf("tape: line %d: the tape takes more than %d MiB in memory (%d MiB of lines decompressed, %d records); a whole tape is read into memory, and one this large is refused (a few KiB of zstd can expand to GiBs)",
				tr.line, readLimit>>20, tr.bytes>>20, tr.line)
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
// valid or not on one line, which Encode then takes (and refuses);
// trusted JSON (json.Marshal's) is not checked.
func appendQuick(b []byte, r *Record, trusted bool) (_ []byte, ok bool) {
	raw := func(key string, v json.RawMessage) bool {
		if !trusted && (bytes.ContainsAny(v, "\n\r") || !json.Valid(v)) {
			return false
		}
		b = append(append(append(b, `,"`...), key...), `":`...)
		b = append(b, v...)
		return true
	}
	b = append(append(append(b, `{"t":"`...), r.Type...), '"')
	switch r.Type {
	case TypeRequest, TypeResult:
		if r.Error != "" || r.Wait != 0 || r.Beside != 0 {
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
