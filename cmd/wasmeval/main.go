// Command wasmeval runs Python, JavaScript and TypeScript cells for LLM
// agents in a WebAssembly sandbox.
//
//	wasmeval eval [--cwd DIR]    requests on stdin, one JSON object a line; results on stdout
//	wasmeval version             print the version
//	wasmeval serve               serve sessions over HTTP (and MCP at /mcp)
//	wasmeval mcp                 be an MCP server on stdin and stdout
//	wasmeval replay TAPE         replay a recorded session, compare its results
//	wasmeval tape show TAPE      print a recorded session as a transcript
//
// Run `wasmeval -h` and `wasmeval <command> -h` for details.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"

	"github.com/wasmeval/wasmeval/wasm/python"
)

// Exit statuses. When several apply, the highest wins.
const (
	exitOK          = 0   // every request ran and every cell completed
	exitCellFailed  = 1   // a cell failed, timed out or was cancelled
	exitInvalid     = 2   // an invalid request line, or a wrong command line
	exitHost        = 3   // the host failed: a runtime did not start, output could not be written
	exitInterrupted = 130 // stopped by a signal, as shells report SIGINT
)

const usage = `wasmeval runs Python, JavaScript and TypeScript cells for LLM agents, in
persistent sessions, inside a WebAssembly sandbox.

Usage:
  wasmeval <command> [flags]

Commands:
  eval      run requests from stdin (one JSON object a line) in one session
  version   print the version
  serve     serve sessions to agents over HTTP (JSON API, SSE, bearer tokens)
  mcp       be an MCP server on stdin and stdout (tools eval, run_code, code contexts)
  replay    replay a tape (eval --record) and compare every result byte for byte
  tape      show a tape as a readable transcript (tape show TAPE)

Run 'wasmeval <command> -h' for a command's flags.
`

func main() {
	// A reader of stdout that goes away must not kill the process with
	// SIGPIPE (Go's default for fds 1 and 2): asking for the signal makes the
	// write fail with EPIPE instead, which eval reports as exit status 3.
	// Notify, not Ignore: an ignored signal stays ignored in the child
	// processes (--tools-mcp servers), a notified one is reset for them.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := doMain(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// doMain runs the command line args (without the program name) and returns
// the exit status.
func doMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitInvalid
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "-h", "-help", "--help", "help":
		if cmd == "help" && len(rest) > 0 && rest[0] != "help" {
			return doMain(ctx, []string{rest[0], "-h"}, stdin, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return exitOK
	case "eval":
		return runEval(ctx, rest, stdin, stdout, stderr)
	case "version", "-version", "--version":
		return runVersion(rest, stdout, stderr)
	case "serve":
		return runServe(ctx, rest, stdout, stderr)
	case "mcp":
		return runMCP(ctx, rest, stdin, stdout, stderr)
	case "replay":
		return runReplay(ctx, rest, stdout, stderr)
	case "tape":
		return runTape(rest, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "wasmeval: unknown command %q\n\n%s", cmd, usage)
		return exitInvalid
	}
}

func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help":
		return true
	}
	return false
}

const versionUsage = `Usage: wasmeval version   (or wasmeval --version)

Prints wasmeval's module version, the commit it was built from, the hash of
the inputs the Python artifact was built from and the SHA-256 of the
artifact it carries, and the Go version. make stamps the version and commit
with -ldflags; a plain go build or go install falls back to what Go recorded
("(devel)" or the module version, the VCS revision when stamping was on).
`

func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if isHelp(args[0]) {
			fmt.Fprint(stdout, versionUsage)
			return exitOK
		}
		fmt.Fprintf(stderr, "wasmeval version: unexpected argument %q\nrun 'wasmeval version -h'\n", args[0])
		return exitInvalid
	}
	art := python.Sum()
	if art == "" {
		art = "none (built without the Python artifact: run make)"
	}
	fmt.Fprintf(stdout, "wasmeval %s\ncommit %s\npython inputs %s\npython artifact %s\n%s\n",
		version(), buildCommit(), orUnknown(python.Inputs()), art, runtime.Version())
	return exitOK
}

// Set by make with -ldflags "-X main.stampVersion=... -X main.stampCommit=...":
// a build with VCS stamping off (-buildvcs=false, a source tree without .git)
// still says what it is. The Python artifact names its own inputs.
var stampVersion, stampCommit string

// version is the module version the binary was built from, or "(devel)".
func version() string {
	if stampVersion != "" {
		return stampVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// buildCommit is the commit the binary was built from, or "unknown".
func buildCommit() string {
	if stampCommit != "" {
		return stampCommit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "-dirty"
				}
			}
		}
		if rev != "" {
			return rev + dirty
		}
	}
	return "unknown"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
