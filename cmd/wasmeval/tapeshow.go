package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

const tapeCmdUsage = `Usage: wasmeval tape show TAPE

Prints a recorded session (a tape from 'wasmeval eval --record') as a
transcript a person can read: the header (who recorded it, the environment,
the root's files), then each request's cells, the host calls they made with
the answers, how many clock reads and random bytes they took, and each
cell's status and output. An eval run inside a cell that waited in agent()
or tool() (a sub-agent's) is shown as a nested request, with the wait of
that cell it ran in, or began beside on an instance of its own, where the
tape says (formats 5 and 9). What woke a JavaScript
cell's event loop at each of its waits (a timer, or a call's answer) is
shown where the tape records it (format 6, without --deterministic).

Exit status: 0, or 2 for a wrong command line or a file that is not a tape.
`

func runTape(args []string, stdout, stderr io.Writer) int {
	stdout, stderr = visibleWriter{stdout}, visibleWriter{stderr} // the transcript quotes the tape
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(stdout, tapeCmdUsage)
		return exitOK
	}
	if len(args) != 2 || args[0] != "show" {
		fmt.Fprintf(stderr, "wasmeval tape: give 'show TAPE'\nrun 'wasmeval tape -h'\n")
		return exitInvalid
	}
	f, err := os.Open(args[1])
	if err != nil {
		fmt.Fprintf(stderr, "wasmeval tape: %v\n", err)
		return exitInvalid
	}
	defer f.Close()
	t, err := tape.Read(f)
	if err != nil {
		fmt.Fprintf(stderr, "wasmeval tape: %s: %v\n", args[1], err)
		return exitInvalid
	}
	if err := showTape(stdout, t); err != nil {
		fmt.Fprintf(stderr, "wasmeval tape: writing: %v\n", err)
		return exitHost
	}
	return exitOK
}

// showTape writes t as a transcript.
func showTape(w io.Writer, t *tape.Tape) error {
	var b strings.Builder
	h := t.Header
	fmt.Fprintf(&b, "tape format %d, recorded by wasmeval %s", h.Format, h.Wasmeval)
	if h.PythonArtifact != "" {
		fmt.Fprintf(&b, " (python artifact %s)", h.PythonArtifact)
	}
	b.WriteString("\n")
	showHeader(&b, h)
	for _, r := range t.Root {
		switch {
		case r.Type == tape.TypeDir:
			fmt.Fprintf(&b, "dir  %s/\n", r.Path)
		case r.Type == tape.TypeSymlink:
			fmt.Fprintf(&b, "link %s -> %s\n", r.Path, r.Target)
		case r.SHA256 != "":
			fmt.Fprintf(&b, "file %s (%d bytes, by hash %s)\n", r.Path, r.Size, r.SHA256)
		default:
			fmt.Fprintf(&b, "file %s (%d bytes)\n", r.Path, len(r.Data))
		}
	}
	clocks, rnd := 0, 0
	reader := "" // the instance that reads, once a reader record named one (format 8)
	flushReads := func() {
		if clocks > 0 || rnd > 0 {
			by := ""
			switch reader {
			case tape.ReaderPython:
				by = " by the Python instance"
			case tape.ReaderJavaScript:
				by = " by the JavaScript instance"
			}
			fmt.Fprintf(&b, "  (%d clock %s, %d random bytes%s)\n", clocks, plural(clocks, "read"), rnd, by)
		}
		clocks, rnd = 0, 0
	}
	top := 0 // the request being recorded, of those not nested
	for _, r := range t.Events {
		switch r.Type {
		case tape.TypeRequest:
			if r.Nested {
				flushReads()
				fmt.Fprintf(&b, "\n=== request %d: nested eval, run inside a cell of request %d while it waited in agent() or tool()\n", r.N, top)
			} else {
				top = r.N
				fmt.Fprintf(&b, "\n=== request %d\n", r.N)
			}
			var req sandbox.Request
			if err := json.Unmarshal(r.Request, &req); err != nil {
				fmt.Fprintf(&b, "  %s\n", r.Request)
				continue
			}
			for i, c := range req.Cells {
				fmt.Fprintf(&b, "--- cell %d (%s)\n%s\n", i, c.Language, indent(c.Code, "  > "))
			}
		case tape.TypeFork:
			flushReads()
			if reader != "" {
				reader = tape.DefaultReader // the fork's recorder starts afresh
			}
			if r.Header == nil {
				b.WriteString("\n=== fork: the session was forked from another, whose state this tape does not hold\n")
				continue
			}
			b.WriteString("\n=== fork: the session so far was forked, and the fork goes on from here\n")
			showHeader(&b, *r.Header)
		case tape.TypeStop:
			flushReads()
			if r.N > 0 {
				fmt.Fprintf(&b, "  cell %d of nested request %d stopped by %s", r.Cell, r.N, r.Cause)
			} else {
				fmt.Fprintf(&b, "  cell %d stopped by %s", r.Cell, r.Cause)
			}
			switch {
			case r.BeforeStart:
				b.WriteString(" before it started (none of its code ran)")
			case r.Waits > 0:
				fmt.Fprintf(&b, " in host-call wait %d (%d units of fuel)", r.Waits, r.Fuel)
			case r.Fuel > 0:
				fmt.Fprintf(&b, " at fuel check %d, sleep %d (%d units of fuel)", r.Checks, r.Sleeps, r.Fuel)
			default:
				fmt.Fprintf(&b, " after %d bytes of output", r.Bytes)
			}
			b.WriteString("\n")
		case tape.TypeWake: // format 6
			flushReads()
			cell := fmt.Sprintf("cell %d", r.Cell)
			if r.N > 0 {
				cell = fmt.Sprintf("cell %d of nested request %d", r.Cell, r.N)
			}
			if r.Timer != 0 {
				fmt.Fprintf(&b, "  %s woke: timer %d fired (due at %s on its clock)\n", cell, r.Timer, time.Duration(*r.NS))
			} else {
				fmt.Fprintf(&b, "  %s woke: the answer of its call %d\n", cell, r.Made)
			}
		case tape.TypeReader: // format 8
			if r.Lang != reader {
				if reader == "" {
					reader = tape.DefaultReader // the reads so far were its
				}
				flushReads()
				reader = r.Lang
			}
		case tape.TypeClock:
			clocks++
		case tape.TypeRand:
			rnd += len(r.Data)
		case tape.TypeCall:
			flushReads()
			var op struct {
				Op string `json:"op"`
			}
			json.Unmarshal(r.Call, &op)
			made := ""
			switch { // recorded in the order the guest took the answers
			case r.Made > 0 && r.Wait > 0: // Python, format 4 on
				made = fmt.Sprintf(" (the cell's call %d, answer taken in its host-call wait %d)", r.Made, r.Wait)
			case r.Made > 0:
				made = fmt.Sprintf(" (the cell's call %d)", r.Made)
			}
			fmt.Fprintf(&b, "  call %s%s %s\n    -> %s\n", op.Op, made, clipText(string(r.Call), 300), clipText(string(r.Answer), 300))
		case tape.TypeResult:
			flushReads()
			switch {
			case r.Nested && r.Wait > 0: // format 5
				fmt.Fprintf(&b, "=== result %d: nested eval, run while its waiting cell (of request %d) was in its host-call wait %d\n", r.N, top, r.Wait)
			case r.Nested && r.Beside > 0: // format 9
				fmt.Fprintf(&b, "=== result %d: nested eval, begun beside its waiting cell (of request %d), on an instance of its own, in that cell's host-call wait %d\n", r.N, top, r.Beside)
			case r.Nested:
				fmt.Fprintf(&b, "=== result %d: nested eval, in request %d\n", r.N, top)
			default:
				fmt.Fprintf(&b, "=== result %d\n", r.N)
			}
			if r.Error != "" {
				fmt.Fprintf(&b, "  host error: %s\n", r.Error)
				continue
			}
			var res sandbox.Result
			if err := json.Unmarshal(r.Result, &res); err != nil {
				fmt.Fprintf(&b, "  %s\n", clipText(string(r.Result), 2000))
				continue
			}
			for _, c := range res.Details.Cells {
				fmt.Fprintf(&b, "--- cell %d: %s\n", c.Index, c.Status)
				if c.Output != "" {
					fmt.Fprintf(&b, "%s\n", indent(strings.TrimSuffix(c.Output, "\n"), "  | "))
				}
			}
		}
	}
	flushReads()
	_, err := io.WriteString(w, b.String())
	return err
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// showHeader writes what a header (a tape's, or a fork's) says of the
// session.
func showHeader(b *strings.Builder, h tape.Header) {
	fmt.Fprintf(b, "root %s\n", h.Root)
	opts, _ := json.Marshal(h.Options)
	fmt.Fprintf(b, "options %s\n", opts)
	if h.Start != 0 {
		fmt.Fprintf(b, "started %s\n", time.Unix(0, h.Start).UTC().Format(time.RFC3339Nano))
	}
	if h.Packages != nil {
		fmt.Fprintf(b, "packages %s\n", h.Packages.Describe())
	}
	keys := make([]string, 0, len(h.Env))
	for k := range h.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "env %s=%s\n", k, h.Env[k])
	}
}
