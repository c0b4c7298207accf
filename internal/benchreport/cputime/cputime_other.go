//go:build !linux

package cputime

import "time"

func self() time.Duration { return 0 }

func process(pid int) (time.Duration, bool) { return 0, false }
