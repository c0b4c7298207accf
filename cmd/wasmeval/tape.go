package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// tapeUsage is the part of eval's usage about determinism and recording.
const tapeUsage = `  --deterministic
              a virtual clock (from 2025-01-01T00:00:00Z, 1 ms further at
              each read), seeded randomness: two runs of the same requests
              give the same bytes
  --record FILE
              record the session to FILE (a tape, zstd-compressed NDJSON):
              the root's files, then every request, clock read, random byte,
              host call and result; 'wasmeval replay FILE' replays it
  --record-limit SIZE
              the most a session's tape may hold, like 256MiB: the record
              that would pass it is not written, the tape ends whole before
              it and the session goes on unrecorded, with a status event
              saying so (default 1GiB; "none" for no limit)
`

// tapeFlags are eval's --deterministic and --record.
type tapeFlags struct {
	deterministic bool
	record        string
	limit         byteSize // SessionOptions.RecordLimitBytes
}

func (tf *tapeFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&tf.deterministic, "deterministic", false, "a virtual clock and seeded randomness")
	fs.StringVar(&tf.record, "record", "", "record the session to this tape file")
	fs.Var(&tf.limit, "record-limit", "the most the tape may hold")
}

// apply sets opts from the flags; the returned function closes the tape
// file, after the session is closed (which finishes the tape).
func (tf *tapeFlags) apply(opts *sandbox.SessionOptions) (func() error, error) {
	opts.Deterministic = tf.deterministic
	opts.RecordLimitBytes = tf.limit.n
	if tf.record == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(tf.record)
	if err != nil {
		return nil, fmt.Errorf("--record: %w; give a file path in a folder that exists", err)
	}
	opts.Record = f
	return f.Close, nil
}

const replayUsage = `Usage: wasmeval replay [--cwd DIR] [--blobs DIR] [--packages DIR] [--memory-limit SIZE] [--json] [--update] TAPE

Replays a session recorded with 'wasmeval eval --record TAPE' (or
sandbox.SessionOptions.Record): rebuilds the session root from the tape in a
temporary folder (or DIR), runs the recorded requests again with the clocks,
the randomness and the answers of tool(), llm() and agent() taken from the
tape (no network, tool server or model is needed), runs the file helpers
again on the rebuilt root, and compares every result with the recorded one
byte for byte. The recorded root's path is replaced by the replay's in what
is compared.

Exit status:
  0  every result is identical, and the guest read and called exactly what
     the tape holds
  1  the replay diverged: the first divergence is printed (the request, the
     cell, what differed and a unified diff of recorded vs replayed)
  2  the command line was wrong, or the tape is not a valid tape
  3  the host failed: a runtime did not start, the root could not be rebuilt

Flags:
  --cwd DIR    rebuild the root in DIR (created when missing; it must be
               empty) and keep it afterwards; a fork's root is rebuilt
               in DIR.forkN (N: the request after the fork), which must
               not exist
  --blobs DIR  a folder holding the root's files larger than the tape's
               embedding cap (1 MiB), named by SHA-256 or at their path
  --packages DIR, --preload NAMES
               the Python package layer the session was recorded with: a
               tape names it by a digest of its files' contents (not the
               files themselves) and the preload list, and replay refuses
               another layer, or none, saying which it needs
  --memory-limit SIZE, --disk-quota SIZE, --disk-quota-files N
               the most a tape may ask its session's guest memory cap and
               disk quota to be (default 256MiB, 1GiB, 100000: the
               defaults): a tape recorded with larger ones, or with
               "none", is refused, saying what it asks; give as much to
               replay a tape you trust ("none" for no ceiling, but for
               the memory cap)
  --update     rewrite the tape's results with the replayed ones (its
               clocks, randomness and host-call answers stay as recorded)
               and exit 0: after a change meant to alter the outputs
  --json       print the report as JSON: {"requests", "identical",
               "divergences": [{"request", "cell", "what", "message",
               "expected", "got", "diff"}], "notExact": [...], "header"}

A Python cell stopped by its timeout, an interrupt or a cancellation is
interrupted at the fuel check recorded (the same point of its work), so its
traceback replays too; a JavaScript cell stopped so (JavaScript meters no
fuel) is stopped once it has written the output it had when stopped, and
named in a "not replayed exactly" line. A fork's tape holds the tape of
the session it was forked from, up to the fork: replay replays that
session, forks it and goes on in the fork.
`

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	stdout, stderr = visibleWriter{stdout}, visibleWriter{stderr} // the report quotes the tape
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	var flagOut bytes.Buffer
	fs.SetOutput(&flagOut)
	fs.Usage = func() { fmt.Fprint(&flagOut, replayUsage) }
	cwd := fs.String("cwd", "", "rebuild the root in this folder")
	blobs := fs.String("blobs", "", "a folder of the root's large files")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	update := fs.Bool("update", false, "rewrite the tape's results with the replayed ones")
	var pf packageFlags
	pf.register(fs)
	var lf limitFlags // ceilings of what the tape may ask
	lf.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, replayUsage)
			return exitOK
		}
		flagError(stderr, "replay", flagOut.String())
		return exitInvalid
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "wasmeval replay: give exactly one tape file (got %d arguments)\nrun 'wasmeval replay -h'\n", fs.NArg())
		return exitInvalid
	}
	path := fs.Arg(0)
	if err := pf.check(); err != nil {
		fmt.Fprintf(stderr, "wasmeval replay: %v\n", err)
		return exitInvalid
	}
	if err := lf.check(); err != nil {
		fmt.Fprintf(stderr, "wasmeval replay: %v\n", err)
		return exitInvalid
	}
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "wasmeval replay: %v\n", err)
		return exitInvalid
	}
	t, err := tape.Read(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(stderr, "wasmeval replay: %s: %v\n", path, err)
		return exitInvalid
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sbo := sandbox.Options{Logger: logger}
	pf.apply(&sbo)
	ro := replay.Options{Dir: *cwd, Blobs: *blobs, Sandbox: sbo,
		MaxMemoryLimitBytes: lf.memory.n, MaxDiskQuotaBytes: lf.disk.n, MaxDiskQuotaFiles: lf.diskFiles}
	rep, err := replayTape(ctx, t, ro, *update, path)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "wasmeval replay: interrupted")
			return exitInterrupted
		}
		fmt.Fprintf(stderr, "wasmeval replay: %v\n", err)
		return exitHost
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if rep.Divergences == nil {
			rep.Divergences = []replay.Divergence{}
		}
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "wasmeval replay: writing the report: %v\n", err)
			return exitHost
		}
	} else if rep.Identical {
		fmt.Fprintf(stdout, "replayed %d %s: identical\n", rep.Requests, plural(rep.Requests, "request"))
	} else if *update {
		fmt.Fprintf(stdout, "replayed %d %s: %d %s; updated the results in %s\n", rep.Requests, plural(rep.Requests, "request"),
			len(rep.Divergences), plural(len(rep.Divergences), "divergence"), path)
	} else {
		fmt.Fprintf(stdout, "replayed %d %s: diverged (%d %s); the first:\n%s", rep.Requests, plural(rep.Requests, "request"),
			len(rep.Divergences), plural(len(rep.Divergences), "divergence"), rep.Divergences[0])
	}
	if !*asJSON {
		for _, n := range rep.NotExact {
			fmt.Fprintf(stdout, "not replayed exactly: %s\n", n)
		}
	}
	if !rep.Identical && !*update {
		return exitCellFailed
	}
	return exitOK
}

// replayTape replays t; with update, a tape whose replay diverged is
// rewritten at path with the replayed results.
func replayTape(ctx context.Context, t *tape.Tape, opts replay.Options, update bool, path string) (*replay.Report, error) {
	p, err := replay.Start(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	for p.More() {
		if _, err := p.Step(ctx); err != nil {
			return nil, err
		}
	}
	rep := p.Report()
	if !update || rep.Identical {
		return rep, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".wtape-*")
	if err != nil {
		return nil, fmt.Errorf("--update: %w", err)
	}
	defer os.Remove(tmp.Name())
	w, err := tape.NewWriter(tmp)
	if err == nil {
		err = p.WriteUpdated(w)
	}
	if err == nil {
		err = w.Close()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return nil, fmt.Errorf("--update: %w", err)
	}
	return rep, nil
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// managerTapeUsage is the part of serve's and mcp's usage about
// determinism and recording.
const managerTapeUsage = `  --deterministic
              every session gets a virtual clock and seeded randomness
              (see 'wasmeval eval -h')
  --record-dir DIR
              record each session to DIR/ID.wtape (an existing folder);
              'wasmeval replay DIR/ID.wtape' replays it
  --record-limit SIZE
              the most a session's tape may hold, like 256MiB: the record
              that would pass it is not written, the tape ends whole before
              it and the session goes on unrecorded, with a status event
              saying so (default 1GiB; "none" for no limit)
`

// managerTapeFlags are serve's and mcp's --deterministic and --record-dir.
type managerTapeFlags struct {
	deterministic bool
	dir           string
	limit         byteSize // SessionOptions.RecordLimitBytes
}

func (f *managerTapeFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.deterministic, "deterministic", false, "")
	fs.StringVar(&f.dir, "record-dir", "", "")
	fs.Var(&f.limit, "record-limit", "")
}

// apply sets the sessions' template and the manager's record folder.
func (f *managerTapeFlags) apply(so *sandbox.SessionOptions, mo *sandbox.ManagerOptions) {
	so.Deterministic = f.deterministic
	so.RecordLimitBytes = f.limit.n
	mo.RecordDir = f.dir
}
