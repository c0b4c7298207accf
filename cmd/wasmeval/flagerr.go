package main

import (
	"fmt"
	"io"
	"strings"
)

// flagError reports a command line the flag package refused, in one line
// and a pointer to the help, rather than the whole usage: the usage of
// serve runs to sixty lines, and the one wrong flag is lost in it.
// out is what the flag package wrote (its message, then any usage).
func flagError(stderr io.Writer, cmd, out string) {
	msg, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	if msg == "" {
		msg = "bad command line"
	}
	fmt.Fprintf(stderr, "wasmeval %s: %s\nrun 'wasmeval %s -h' for the flags\n", cmd, msg, cmd)
}
