package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/wasmeval/wasmeval/sandbox"
)

// limitFlags are the per-session limits that eval, serve and mcp share.
type limitFlags struct {
	memory    byteSize // SessionOptions.MemoryLimitBytes
	disk      byteSize // SessionOptions.DiskQuotaBytes
	diskFiles int64    // SessionOptions.DiskQuotaFiles
}

const limitUsage = `  --memory-limit SIZE
        each session's guest memory cap, like 512MiB or 1GiB; past it Python
        raises MemoryError and a JavaScript cell stops (default 256MiB)
  --disk-quota SIZE
        what a session's root may hold, files already there included, like
        10GiB; past it writes fail with "disk quota exceeded" (ENOSPC)
        (default 1GiB; "none" for no cap)
  --disk-quota-files N
        how many files, folders and links a session's root may hold
        (default 100000; 0 for the default, -1 for no cap)
`

func (l *limitFlags) register(fs *flag.FlagSet) {
	fs.Var(&l.memory, "memory-limit", "")
	fs.Var(&l.disk, "disk-quota", "")
	fs.Int64Var(&l.diskFiles, "disk-quota-files", 0, "")
}

// check says what is wrong with the flags, if anything.
func (l *limitFlags) check() error {
	switch {
	case l.memory.n < 0:
		return fmt.Errorf("--memory-limit: give a size like 512MiB (\"none\" is not allowed: the memory cap is what keeps a session from taking the host down)")
	case l.memory.n > 0 && l.memory.n < 32<<20:
		return fmt.Errorf("--memory-limit %s: give at least 32MiB (Python needs about 20 MiB to start)", &l.memory)
	case l.diskFiles < -1:
		return fmt.Errorf("--disk-quota-files %d: give a positive count, 0 for the default or -1 for no cap", l.diskFiles)
	}
	return nil
}

// apply sets the limits on o.
func (l *limitFlags) apply(o *sandbox.SessionOptions) {
	o.MemoryLimitBytes = l.memory.n
	o.DiskQuotaBytes = l.disk.n
	o.DiskQuotaFiles = l.diskFiles
}

// byteSize is a flag of a size in bytes with an optional binary or decimal
// unit ("512MiB", "1GB", "4096"), or "none" (stored as -1).
type byteSize struct{ n int64 }

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

func (b *byteSize) String() string {
	switch {
	case b == nil || b.n == 0:
		return "0"
	case b.n < 0:
		return "none"
	}
	for _, u := range []struct {
		s string
		m int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b.n%u.m == 0 {
			return strconv.FormatInt(b.n/u.m, 10) + u.s
		}
	}
	return strconv.FormatInt(b.n, 10)
}

func (b *byteSize) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	b.n = n
	return nil
}

func parseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "none" {
		return -1, nil
	}
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size: give bytes, or a number with a unit like 512MiB, 2GiB or 1GB, or none", s)
	}
	return n * mult, nil
}
