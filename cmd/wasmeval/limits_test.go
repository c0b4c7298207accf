package main

import (
	"context"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "4096", want: 4096},
		{in: "512MiB", want: 512 << 20},
		{in: "512mib", want: 512 << 20},
		{in: "2 GiB", want: 2 << 30},
		{in: "1G", want: 1 << 30},
		{in: "1GB", want: 1e9},
		{in: "10kb", want: 10e3},
		{in: "none", want: -1},
		{in: "", bad: true},
		{in: "-1", bad: true},
		{in: "1.5GiB", bad: true},
		{in: "lots", bad: true},
		{in: "9999999999TiB", bad: true},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if tt.bad {
			if err == nil || !strings.Contains(err.Error(), "512MiB") {
				t.Errorf("parseSize(%q) = %d, %v; want an error showing a valid size", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

// TestLimitFlagsBadValues: every face answers a bad limit with status 2
// and a message naming the flag.
func TestLimitFlagsBadValues(t *testing.T) {
	for _, cmd := range []string{"eval", "serve", "mcp"} {
		for _, args := range [][]string{
			{"--disk-quota", "lots"},
			{"--memory-limit", "none"},
			{"--memory-limit", "1MiB"},
			{"--disk-quota-files", "-5"},
		} {
			base := []string{cmd}
			if cmd == "eval" {
				base = append(base, "--cwd", t.TempDir())
			}
			code, _, stderr := run(t, context.Background(), "", append(base, args...)...)
			if code != exitInvalid || !strings.Contains(stderr, strings.TrimLeft(args[0], "-")) {
				t.Errorf("%s %v: status %d, stderr %q; want %d and a message naming %s", cmd, args, code, firstLine(stderr), exitInvalid, args[0])
			}
		}
	}
}

// TestEvalLimitFlags: --disk-quota and --memory-limit reach the session.
func TestEvalLimitFlags(t *testing.T) {
	testenv.RequirePython(t)
	dir := t.TempDir()
	stdin := req("open('big.bin', 'wb').write(b'x' * (3 << 20))") + "\n" +
		req("open('small.bin', 'wb').write(b'x' * 1000)") + "\n" +
		req("b = bytearray(100 << 20)") + "\n" +
		req("print(len(b'y' * (20 << 20)))") + "\n"
	code, stdout, stderr := run(t, context.Background(), stdin, "eval", "--cwd", dir, "--disk-quota", "2MiB", "--memory-limit", "64MiB")
	res := results(t, stdout)
	if len(res) != 4 {
		t.Fatalf("got %d results, want 4 (status %d, stderr %s)", len(res), code, stderr)
	}
	for i, want := range []string{"No space left on device", "1000", "MemoryError", "20971520"} {
		if got := summary(res[i]); !strings.Contains(got, want) {
			t.Errorf("request %d: %s; want it to contain %q", i+1, got, want)
		}
	}
	if code != exitCellFailed {
		t.Errorf("status %d, want %d (cells failed)", code, exitCellFailed)
	}
}
