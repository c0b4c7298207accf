//go:build !linux

package main

import (
	"io"
	"os"
)

// pollStdin is Linux-only: elsewhere eval reads stdin in a goroutine.
func pollStdin(io.Reader) (*os.File, func()) { return nil, nil }
