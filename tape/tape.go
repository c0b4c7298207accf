package tape

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
)

// FormatVersion is the version of the tape format this package writes.
// It reads every version from MinFormatVersion on and refuses others.
//
// Version 2 added the root entries' and the root's modification times
// (mtime, root_mtime), the session's start time (start), the package layer
// (packages), stops by interrupt, cancellation and close, the output a
// stopped JavaScript cell had written (bytes) and forks that carry their
// source's history (a fork record with the fork's header). A version 1
// tape replays as it was recorded: without those, its guest saw the
// rebuilt root's times and its forks are refused.
//
// Version 3 added a stop's before_start (the cell was stopped before any
// of its code ran, while its runtime was still starting) and waits (it
// was stopped while waiting for a host call's answer, in its waits-th
// wait), and a call's made (a JavaScript call's number among the calls
// its cell made: its calls are recorded in the order the guest took
// their answers, and replay hands them over in that order). A version 2
// tape replays as recorded: a JavaScript cell stopped before it started
// is replayed as one stopped before it wrote anything, and a Python cell
// stopped in a host call's wait is named in the report as not exact.
//
// Version 4 added a Python call's made and wait (its number among its
// cell's calls, and the cell's wait for host calls, call_wait, in which
// the guest took its answer: Python calls too are recorded in the order
// the guest took their answers, and replay hands them over in that order,
// each in its recorded wait) and a stop's n (the nested request whose
// cell was stopped, for a cell of an eval run inside a waiting cell). A
// version 3 tape replays as recorded: its Python calls are handed over in
// the order they were recorded, without checking the wait, and the stops
// of its nested cells are taken for those of the enclosing request's
// cells of the same index.
//
// Version 5 added a nested result's wait: the number of the waiting
// Python cell's wait for host calls (call_wait) in which the first of
// the eval's cells run inside that cell's runtime began; replay runs it
// in that wait, and one run in another is a divergence. A version 4
// tape replays as recorded: a nested eval runs once the guest has taken
// the answers the tape holds before its request.
//
// Version 6 added wake records: a session recorded without
// deterministic runs its JavaScript timers on the wall clock, as node
// does (a timer fires while a host call is in flight), and records what
// woke each JavaScript cell's event loop at each of its waits (a timer,
// or the answer of one of its calls); replay takes the same wakes in the
// same order, without waiting, and a loop that cannot is a divergence. A
// version 5 tape, or a deterministic one of any version, replays with the
// timers on the session's clock, where they wait for the calls in flight.
//
// Version 7 gave a JavaScript call a wait too (the number of its cell's
// event loop's wait, counted from 1 at each wait for a timer, a call's
// answer or a nested cell, in which the guest took its answer) and a
// nested result run inside a waiting JavaScript cell its wait (that of
// the loop's waits in which its first cell run inside that cell began):
// replay runs the eval in that wait, as for a Python waiting cell. A
// version 6 tape replays as recorded: its JavaScript calls' waits are
// not checked, and an eval nested in a JavaScript cell is placed as in
// version 4.
//
// Version 8 added reader records: each runtime instance of a session (its
// Python and its JavaScript) reads its own clocks and random bytes, and a
// reader record names the instance ("py", "js") whose reads follow, written
// where the reading instance changes (the reads before the first are the
// Python instance's). The two instances can read at once (an eval nested
// in a waiting cell of the other language), so their reads interleave on
// the tape by timing; replay serves each instance its own reads, in its
// own order. A version 7 tape replays as recorded: its reads are one
// stream, served in the order the replay reads them. A wasmeval that reads
// version 7 refuses version 8, whose tapes it would feed the mixed stream.
//
// Version 9 added a nested result's beside: for an eval none of whose
// cells ran inside its waiting cell's runtime (a JavaScript eval nested in
// a waiting Python cell runs on its own instance, beside that cell), the
// number of the waiting cell's wait in which the eval's first cell began:
// the wait it was in, or, between two waits, the one it went on to.
// Replay begins that cell once the waiting cell is in that wait, and one
// begun in another is a divergence. A version 8 tape replays as recorded:
// such an eval begins whenever the call that runs it does.
const FormatVersion = 9

// MinFormatVersion is the oldest tape format this package reads.
const MinFormatVersion = 1

// DefaultEmbedLimit is the size up to which a file of the root is embedded
// in the tape; larger files are recorded by size and SHA-256.
const DefaultEmbedLimit = 1 << 20

// MaxRecordBytes is the longest record (one line) a Reader accepts.
const MaxRecordBytes = 64 << 20

// MaxTapeBytes is the most memory a whole tape may take in Read: its
// lines, decompressed, and the records they decode to. Read refuses a
// tape past it: a tape is input, and a zstd frame of a few KiB can
// expand to GiBs.
const MaxTapeBytes = 1 << 30

// Record types: the values of Record.Type.
const (
	TypeHeader  = "header"
	TypeDir     = "dir"
	TypeFile    = "file"
	TypeSymlink = "symlink"
	TypeRequest = "request"
	TypeClock   = "clock"
	TypeRand    = "rand"
	TypeCall    = "call"
	TypeResult  = "result"
	TypeStop    = "stop"
	TypeFork    = "fork"
	TypeWake    = "wake"
	TypeReader  = "reader"
)

// Readers: the values of Record.Lang, the runtime instances that read
// clocks and random bytes.
const (
	ReaderPython     = "py"
	ReaderJavaScript = "js"
	// DefaultReader is the instance whose reads come before a tape's
	// first reader record (and after each fork record).
	DefaultReader = ReaderPython
)

// Stop causes: the values of Record.Cause.
const (
	CauseTimeout   = "timeout"    // the cell's timeout
	CauseHardLimit = "hard limit" // the cell's hard time limit
	CauseInterrupt = "interrupt"  // Session.Interrupt (serve's POST .../interrupt)
	CauseCancel    = "cancel"     // the Eval's context was cancelled
	CauseClosed    = "closed"     // the session was closed while the cell ran
)

// causes are the stop causes, in the order an error lists them.
var causes = []string{CauseTimeout, CauseHardLimit, CauseInterrupt, CauseCancel, CauseClosed}

// Clock kinds: the values of Record.Clock.
const (
	ClockWall = "wall" // Unix time in nanoseconds
	ClockMono = "mono" // a monotonic clock in nanoseconds
)

// Record is one line of a tape. Type says which fields it uses:
//
//	header   Header
//	dir      Path, Mode, MTime
//	file     Path, Mode, MTime, and Data (embedded) or Size and SHA256 (not)
//	symlink  Path, Target
//	request  N (from 1), Request (the request's JSON), Nested (an eval run
//	         inside a cell waiting in agent() or tool(), recorded within
//	         that request; its result is Nested too)
//	clock    Clock ("wall" or "mono"), NS
//	rand     Data (the bytes the guest read)
//	call     Call (the host call's JSON request), Answer (its JSON answer),
//	         Made (the call's number among its cell's calls, from 1, in the
//	         order the cell made them; the calls are recorded in the order
//	         the guest took their answers), Wait (the number of its
//	         cell's wait for host calls, from 1, in which the guest took
//	         the answer: a Python cell's call_wait, a JavaScript cell's
//	         event loop's wait (format 7); 0 for one it never took)
//	result   N, and Result (the result's JSON) or Error (a host error);
//	         a Nested one may have Wait: the waiting cell's wait for host
//	         calls (Python) or its event loop's wait (JavaScript, format
//	         7) in which the eval's first cell that ran inside it began;
//	         or Beside, for an eval none of whose cells ran inside it (its
//	         cells ran on instances of their own, beside the waiting cell):
//	         the waiting cell's wait in which the eval's first cell began,
//	         or the one it went on to, when it began between two (format 9)
//	fork     Header: the session was made here by a fork of the session
//	         recorded so far, and the events after it are the fork's (whose
//	         options and root the header gives); the fork's requests go on
//	         numbering the source's. Without Header (version 1, or a source
//	         whose tape was too long to keep) the tape holds only the fork's
//	         events, and its starting state is not on it
//	reader   Lang: the runtime instance ("py" or "js") whose clock reads
//	         and random bytes follow, up to the next reader record
//	         (format 8); before the first, and after a fork record, they
//	         are the Python instance's (DefaultReader)
//	wake     what woke a JavaScript cell's event loop from one of its
//	         waits, in order: Timer and NS (the timer that fired, by its
//	         id, and its due time on the loop's clock, nanoseconds), or
//	         Made (the number among the cell's calls of the call whose
//	         answer the guest took; 0 for a call without one). Cell and N
//	         name the cell as a stop's do
//	stop     Cell (its index in the request), Cause (one of the Cause
//	         constants), Checks, Sleeps, Waits and Fuel: the cell was
//	         interrupted at its Checks-th fuel check, in its Sleeps-th
//	         sleep or in its Waits-th wait for a host call's answer, having
//	         used Fuel units; all 0 where the runtime meters no fuel, where
//	         Bytes is the output the cell had written when stopped.
//	         BeforeStart: the cell was stopped while its runtime was still
//	         starting, before any of its code ran (all the others 0).
//	         N: the cell is one of the nested request N (an eval run
//	         inside a waiting cell); left out for the request's own cells
type Record struct {
	Type   string  `json:"t"`
	Header *Header `json:"header,omitempty"`

	Path   string `json:"path,omitempty"`
	Mode   uint32 `json:"mode,omitempty"`
	Data   []byte `json:"data,omitempty"`
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Target string `json:"target,omitempty"`
	// MTime is a root entry's modification time, Unix nanoseconds.
	MTime *int64 `json:"mtime,omitempty"`

	N       int             `json:"n,omitempty"`
	Nested  bool            `json:"nested,omitempty"`
	Request json.RawMessage `json:"request,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   string          `json:"error,omitempty"`

	Clock string `json:"clock,omitempty"`
	NS    *int64 `json:"ns,omitempty"`

	Call   json.RawMessage `json:"call,omitempty"`
	Answer json.RawMessage `json:"answer,omitempty"`
	Made   int             `json:"made,omitempty"`
	Wait   int             `json:"wait,omitempty"`
	// Beside is a nested result's wait of its waiting cell in which the
	// eval's first cell began beside it (format 9).
	Beside int `json:"beside,omitempty"`

	// Timer is the id of the JavaScript timer a wake record says fired.
	Timer int64 `json:"timer,omitempty"`

	// Lang is the runtime instance a reader record names.
	Lang string `json:"lang,omitempty"`

	Cell   int    `json:"cell,omitempty"`
	Cause  string `json:"cause,omitempty"`
	Checks int64  `json:"checks,omitempty"`
	Sleeps int64  `json:"sleeps,omitempty"`
	Waits  int64  `json:"waits,omitempty"`
	Fuel   int64  `json:"fuel,omitempty"`
	Bytes  int64  `json:"bytes,omitempty"`
	// BeforeStart says the cell was stopped before any of its code ran.
	BeforeStart bool `json:"before_start,omitempty"`

	// value is what a deferred record's Request or Result encodes
	// (Deferred).
	value any
}

// Deferred returns the request or result record r, without its JSON, to
// be written with json.Marshal(v), or v's own AppendJSON where v is a
// JSONAppender: a Writer encodes v when it writes the
// record out (when its frame ends, or once enough records wait), on
// whichever goroutine does that, so a recorder's request does not wait
// for the encoding of its request and result. Nothing may change v
// afterwards. A result whose encoding fails is written with the error
// instead.
func Deferred(r Record, v any) Record {
	r.value = v
	return r
}

// Header says what a tape was recorded with.
type Header struct {
	// Format is FormatVersion.
	Format int `json:"format"`
	// Wasmeval is the recording binary's version ("(devel)" for a plain
	// go build); PythonArtifact is the SHA-256 of the CPython artifact it
	// carried and PythonInputs the hash of what that was built from. They
	// explain a divergence; replay does not require them to match.
	Wasmeval       string `json:"wasmeval"`
	PythonArtifact string `json:"python_artifact,omitempty"`
	PythonInputs   string `json:"python_inputs,omitempty"`
	// Root is the session root's absolute path when recorded. The guest
	// sees its root at its real path, so replay in another folder replaces
	// this path by its own in what it compares.
	Root string `json:"root"`
	// Env is the guest's environment, as the session resolved it.
	Env map[string]string `json:"env"`
	// Options are the session options that shape what the guest sees.
	Options Options `json:"options"`
	// Start is the session's time when it started (Unix nanoseconds):
	// what a file the guest changes is stamped with until it reads a
	// clock. RootMTime is the root folder's modification time.
	Start     int64 `json:"start,omitempty"`
	RootMTime int64 `json:"root_mtime,omitempty"`
	// Packages is the Python package layer the session ran with, if any.
	Packages *Layer `json:"packages,omitempty"`
}

// Layer identifies a package layer by its contents: replay refuses to run
// on another (a tape does not hold the layer, which is usually large).
type Layer struct {
	// SHA256 is LayerDigest's hash of the layer's files: their paths,
	// types, permissions and contents (not their times or folder).
	SHA256 string `json:"sha256"`
	// Files and Bytes are how many files the layer holds and their size.
	Files int64 `json:"files"`
	Bytes int64 `json:"bytes"`
	// Preload are the packages imported into the session's template.
	Preload []string `json:"preload,omitempty"`
}

// Options are the recorded session options (sandbox.SessionOptions'
// fields that change what a cell does).
type Options struct {
	Deterministic    bool     `json:"deterministic,omitempty"`
	MemoryLimitBytes int64    `json:"memory_limit_bytes,omitempty"`
	Checkpoints      bool     `json:"checkpoints,omitempty"`
	FuelBudget       int64    `json:"fuel_budget,omitempty"`
	AgentDepth       int      `json:"agent_depth,omitempty"`
	DiskQuotaBytes   int64    `json:"disk_quota_bytes,omitempty"`
	DiskQuotaFiles   int64    `json:"disk_quota_files,omitempty"`
	Languages        []string `json:"languages,omitempty"`
}

// Check says what is wrong with the record, if anything: a missing field
// of its type, a field of another type, a path that is not a clean
// relative path inside the root.
func (r *Record) Check() error {
	if r.value != nil {
		return r.checkDeferred()
	}
	var allowed string
	switch r.Type {
	case TypeHeader:
		allowed = "header"
		if r.Header == nil {
			return fmt.Errorf("a header record needs \"header\"")
		}
		if r.Header.Format < MinFormatVersion || r.Header.Format > FormatVersion {
			return fmt.Errorf("tape format %d; this wasmeval reads formats %d to %d (record the session again with this version, or replay it with the wasmeval that recorded it)", r.Header.Format, MinFormatVersion, FormatVersion)
		}
		if err := checkRoot(r.Header.Root); err != nil {
			return err
		}
	case TypeDir:
		allowed = "path mode mtime"
		if err := checkPath(r.Path); err != nil {
			return err
		}
	case TypeFile:
		allowed = "path mode mtime data size sha256"
		if err := checkPath(r.Path); err != nil {
			return err
		}
		if r.SHA256 != "" {
			if len(r.Data) > 0 {
				return fmt.Errorf("file %q has both data and sha256; give one", r.Path)
			}
			if !isHex(r.SHA256, 64) {
				return fmt.Errorf("file %q: sha256 %q is not 64 lowercase hex digits", r.Path, r.SHA256)
			}
			if r.Size <= 0 {
				return fmt.Errorf("file %q: a file by hash needs its size", r.Path)
			}
		} else if r.Size != 0 {
			return fmt.Errorf("file %q: size is only for a file by hash", r.Path)
		}
	case TypeSymlink:
		allowed = "path target"
		if err := checkPath(r.Path); err != nil {
			return err
		}
		if r.Target == "" {
			return fmt.Errorf("symlink %q needs a target", r.Path)
		}
	case TypeRequest:
		allowed = "n nested request"
		if r.N <= 0 || len(r.Request) == 0 && r.value == nil {
			return fmt.Errorf("a request record needs n (from 1) and request")
		}
	case TypeClock:
		allowed = "clock ns"
		if r.Clock != ClockWall && r.Clock != ClockMono {
			return fmt.Errorf("clock %q; give %q or %q", r.Clock, ClockWall, ClockMono)
		}
		if r.NS == nil {
			return fmt.Errorf("a clock record needs ns")
		}
	case TypeRand:
		allowed = "data"
		if len(r.Data) == 0 {
			return fmt.Errorf("a rand record needs data")
		}
	case TypeCall:
		allowed = "call answer made wait"
		if len(r.Call) == 0 || len(r.Answer) == 0 {
			return fmt.Errorf("a call record needs call and answer")
		}
		if r.Made < 0 {
			return fmt.Errorf("a call record's made is %d; give the call's number among its cell's calls, from 1 (or leave it out)", r.Made)
		}
		if r.Wait < 0 {
			return fmt.Errorf("a call record's wait is %d; give the number of the cell's wait that took its answer, from 1 (or leave it out)", r.Wait)
		}
	case TypeResult:
		allowed = "n nested result error wait beside"
		if r.N <= 0 || (len(r.Result) == 0 && r.value == nil) == (r.Error == "") {
			return fmt.Errorf("a result record needs n (from 1) and one of result or error")
		}
		if r.Wait < 0 || r.Wait > 0 && !r.Nested {
			return fmt.Errorf("a result record's wait is %d; only a nested result has one, the number of the waiting cell's wait its eval ran in, from 1 (or leave it out)", r.Wait)
		}
		if r.Beside < 0 || r.Beside > 0 && (!r.Nested || r.Wait > 0) {
			return fmt.Errorf("a result record's beside is %d; only a nested result without wait has one, the number of the waiting cell's wait in which its eval's first cell began beside it, from 1 (or leave it out)", r.Beside)
		}
	case TypeStop:
		allowed = "n cell cause checks sleeps waits fuel bytes before_start"
		if !slices.Contains(causes, r.Cause) {
			return fmt.Errorf("stop cause %q; give one of %q", r.Cause, causes)
		}
		if r.Cell < 0 || r.Fuel < 0 || r.Checks < 0 || r.Sleeps < 0 || r.Waits < 0 || r.Bytes < 0 || r.N < 0 {
			return fmt.Errorf("a stop record needs a cell index, checks, sleeps, waits, fuel, bytes and n of 0 or more")
		}
		if r.BeforeStart && (r.Checks != 0 || r.Sleeps != 0 || r.Waits != 0 || r.Fuel != 0 || r.Bytes != 0) {
			return fmt.Errorf("a stop record with before_start has no checks, sleeps, waits, fuel or bytes: the cell ran none of its code")
		}
	case TypeWake:
		allowed = "n cell timer ns made"
		switch {
		case r.Cell < 0 || r.N < 0 || r.Made < 0 || r.Timer < 0:
			return fmt.Errorf("a wake record needs a cell index, n, made and timer of 0 or more")
		case r.Timer > 0 && (r.NS == nil || r.Made != 0):
			return fmt.Errorf("a wake record of a timer (timer %d) needs its due time (ns) and no made", r.Timer)
		case r.Timer == 0 && r.NS != nil:
			return fmt.Errorf("a wake record of a call's answer has no ns; give timer with it for a timer's")
		}
	case TypeReader:
		allowed = "lang"
		if r.Lang != ReaderPython && r.Lang != ReaderJavaScript {
			return fmt.Errorf("a reader record's lang is %q; give %q or %q", r.Lang, ReaderPython, ReaderJavaScript)
		}
	case TypeFork:
		allowed = "header"
		// Forks carry their header from format 2 on.
		if h := r.Header; h != nil && h.Format != 0 && (h.Format < 2 || h.Format > FormatVersion) {
			return fmt.Errorf("a fork record's header has format %d; a fork is recorded with format 2 to %d", h.Format, FormatVersion)
		}
		if h := r.Header; h != nil {
			if err := checkRoot(h.Root); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unknown record type %q; a tape holds %s", r.Type,
			strings.Join([]string{TypeHeader, TypeDir, TypeFile, TypeSymlink, TypeRequest, TypeClock, TypeRand, TypeCall, TypeResult, TypeStop, TypeFork, TypeWake, TypeReader}, ", "))
	}
	var buf [32]string
	for _, f := range r.fields(buf[:0]) {
		if !hasWord(allowed, f) {
			return fmt.Errorf("a %s record has no field %q", r.Type, f)
		}
	}
	return nil
}

// checkDeferred is Check for a deferred record (Deferred): a request or
// result with n, and nested at most, checked with no more than a
// recorder's request can spare.
func (r *Record) checkDeferred() error {
	if r.Type != TypeRequest && r.Type != TypeResult || len(r.Request) > 0 || len(r.Result) > 0 {
		return fmt.Errorf("a deferred %s record: only a request or result record without its JSON can be deferred", r.Type)
	}
	if r.N <= 0 {
		return fmt.Errorf("a %s record needs n (from 1)", r.Type)
	}
	// The usual case, without fields' closure calls (TestDeferredFields
	// keeps this list whole).
	if r.Header == nil && r.Path == "" && r.Mode == 0 && len(r.Data) == 0 && r.Size == 0 && r.SHA256 == "" && r.Target == "" && r.MTime == nil &&
		r.Error == "" && r.Clock == "" && r.NS == nil && len(r.Call) == 0 && len(r.Answer) == 0 && r.Made == 0 && r.Wait == 0 && r.Beside == 0 && r.Timer == 0 && r.Lang == "" &&
		r.Cell == 0 && r.Cause == "" && r.Checks == 0 && r.Sleeps == 0 && r.Waits == 0 && r.Fuel == 0 && r.Bytes == 0 && !r.BeforeStart {
		return nil
	}
	var buf [32]string
	for _, f := range r.fields(buf[:0]) {
		if f != "n" && f != "nested" {
			return fmt.Errorf("a deferred %s record has field %q; it has only n and nested", r.Type, f)
		}
	}
	return nil
}

// hasWord says whether the space-separated list holds w.
func hasWord(list, w string) bool {
	for list != "" {
		var f string
		f, list, _ = strings.Cut(list, " ")
		if f == w {
			return true
		}
	}
	return false
}

// fields appends the names of the fields set in r, but for its type, to fs.
func (r *Record) fields(fs []string) []string {
	add := func(set bool, name string) {
		if set {
			fs = append(fs, name)
		}
	}
	add(r.Header != nil, "header")
	add(r.Path != "", "path")
	add(r.Mode != 0, "mode")
	add(len(r.Data) > 0, "data")
	add(r.Size != 0, "size")
	add(r.SHA256 != "", "sha256")
	add(r.Target != "", "target")
	add(r.MTime != nil, "mtime")
	add(r.N != 0, "n")
	add(r.Nested, "nested")
	add(len(r.Request) > 0, "request")
	add(len(r.Result) > 0, "result")
	add(r.Error != "", "error")
	add(r.Clock != "", "clock")
	add(r.NS != nil, "ns")
	add(len(r.Call) > 0, "call")
	add(len(r.Answer) > 0, "answer")
	add(r.Made != 0, "made")
	add(r.Wait != 0, "wait")
	add(r.Beside != 0, "beside")
	add(r.Timer != 0, "timer")
	add(r.Lang != "", "lang")
	add(r.Cell != 0, "cell")
	add(r.Cause != "", "cause")
	add(r.Checks != 0, "checks")
	add(r.Sleeps != 0, "sleeps")
	add(r.Waits != 0, "waits")
	add(r.Fuel != 0, "fuel")
	add(r.Bytes != 0, "bytes")
	add(r.BeforeStart, "before_start")
	return fs
}

// checkPath accepts a clean, slash-separated path relative to the root
// that stays inside it.
func checkPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("a root entry needs a path")
	case strings.HasPrefix(p, "/") || path.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, "../"):
		return fmt.Errorf("path %q is not a clean relative path inside the root (like \"data/a.csv\")", p)
	case strings.ContainsRune(p, 0) || strings.Contains(p, "\\"):
		return fmt.Errorf("path %q holds a NUL or a backslash", p)
	}
	return nil
}

// maxRootPath is the longest root path a header may name: Linux's
// PATH_MAX. Replay rebuilds the root in a folder whose path is as long.
const maxRootPath = 4096

// checkRoot accepts a header's root path: no longer than a path can be,
// without NUL.
func checkRoot(root string) error {
	switch {
	case len(root) > maxRootPath:
		return fmt.Errorf("the header's root path is %d bytes long; a path is at most %d", len(root), maxRootPath)
	case strings.ContainsRune(root, 0):
		return fmt.Errorf("the header's root path %q holds a NUL", root)
	}
	return nil
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
