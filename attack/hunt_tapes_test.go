package attack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
)

// A tape is input from outside: `wasmeval replay`, `tape show` and
// replaytest read tapes that someone else recorded, or wrote by hand. The
// hunt below hands them crafted ones.

// tapeHeader is the header line of a crafted tape, with options.
func tapeHeader(options string) string {
	return `{"t":"header","header":{"format":4,"wasmeval":"attack","root":"/tmp/recorded-root","env":{},"options":{` + options + `}}}`
}

// jsRequest is a request line of one JavaScript cell.
const jsRequest = `{"t":"request","n":1,"request":{"cells":[{"language":"js","code":"1+1"}]}}`

// zstdLines compresses NDJSON lines into a tape.
func zstdLines(t *testing.T, lines ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		zw.Write([]byte(l + "\n"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// replayBytes writes the tape into a file and replays it with its root
// rebuilt in dir, as `wasmeval replay --cwd dir` does.
func replayBytes(t *testing.T, b []byte, dir string) (*replay.Report, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "crafted.wtape")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Stretch(60*time.Second))
	defer cancel()
	return replay.File(ctx, p, replay.Options{Dir: dir})
}

// TestHuntTapeRoots: crafted root entries, which replay rebuilds on the
// host before any guest runs: paths that leave the root, links that lead
// out followed by entries through them, duplicates, modes with more than
// permission bits. Each is refused with an error that names the problem,
// and nothing is written outside the folder the root is rebuilt in.
func TestHuntTapeRoots(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  string // in the error; empty: the replay may run
	}{
		{"a path with ..", []string{`{"t":"file","path":"../escaped.txt","data":"eA=="}`}, "not a clean relative path"},
		{"an absolute path", []string{`{"t":"file","path":"/tmp/escaped.txt","data":"eA=="}`}, "not a clean relative path"},
		{"a path that climbs after a folder", []string{`{"t":"file","path":"a/../../escaped.txt","data":"eA=="}`}, "not a clean relative path"},
		{"a path with a NUL", []string{`{"t":"file","path":"a\u0000/../../escaped.txt","data":"eA=="}`}, "NUL"},
		{"a backslashed ..", []string{`{"t":"file","path":"..\\escaped.txt","data":"eA=="}`}, "backslash"},
		{"a folder path with ..", []string{`{"t":"dir","path":"../escaped"}`}, "not a clean relative path"},
		{"a link path with ..", []string{`{"t":"symlink","path":"../escaped","target":"x"}`}, "not a clean relative path"},
		{"a file through an absolute link", []string{`{"t":"symlink","path":"out","target":"{{OUT}}"}`, `{"t":"file","path":"out/escaped.txt","data":"eA=="}`}, "out is a symbolic link"},
		{"a file through a climbing link", []string{`{"t":"symlink","path":"up","target":"../out"}`, `{"t":"file","path":"up/escaped.txt","data":"eA=="}`}, "up is a symbolic link"},
		{"a folder through a link", []string{`{"t":"symlink","path":"out","target":"{{OUT}}"}`, `{"t":"dir","path":"out/escaped"}`}, "out is a symbolic link"},
		{"a link chain", []string{`{"t":"dir","path":"d"}`, `{"t":"symlink","path":"d/l","target":".."}`, `{"t":"symlink","path":"l2","target":"d/l/../out"}`, `{"t":"file","path":"l2/escaped.txt","data":"eA=="}`}, "d/l is a symbolic link"},
		{"a link over a file's place", []string{`{"t":"file","path":"x","data":"eA=="}`, `{"t":"symlink","path":"x","target":"y"}`}, "exists"},
		// Links alone, with nothing made through them: the guest could not
		// follow them, but the host's tools in a kept --cwd would.
		{"an absolute link", []string{`{"t":"symlink","path":"abs","target":"{{OUT}}"}`}, "a root's links must be relative"},
		{"a link to /etc/passwd", []string{`{"t":"symlink","path":"passwd","target":"/etc/passwd"}`}, "a root's links must be relative"},
		{"a climbing link", []string{`{"t":"dir","path":"d"}`, `{"t":"symlink","path":"d/up","target":"../../out"}`}, "a root's links must be relative"},
		{"a link that climbs again after a name", []string{`{"t":"dir","path":"d"}`, `{"t":"symlink","path":"g","target":"d"}`, `{"t":"dir","path":"e"}`, `{"t":"symlink","path":"e/l","target":"../g/../../out"}`}, "climbs after a name"},
		{"a link up to a folder that holds it", []string{`{"t":"dir","path":"d"}`, `{"t":"symlink","path":"d/l","target":"../d"}`}, "leads to a folder that holds it"},
		{"a link up through another link", []string{`{"t":"dir","path":"g4"}`, `{"t":"symlink","path":"g_up","target":"g4/.."}`}, "a root's links must be relative"},
		{"a link with a dot", []string{`{"t":"symlink","path":"dot","target":"./x"}`}, "a root's links must be relative"},
		{"a link with an empty part", []string{`{"t":"symlink","path":"e","target":"a//b"}`}, "a root's links must be relative"},
		{"a file then a folder of the same name", []string{`{"t":"file","path":"x","data":"eA=="}`, `{"t":"dir","path":"x"}`, `{"t":"file","path":"x/y","data":"eA=="}`}, "not a directory"},
		{"a setuid file", []string{`{"t":"file","path":"suid","mode":` + itoa(uint32(fs.ModeSetuid|0o755)) + `,"data":"eA=="}`}, "mode"},
		{"a setgid folder", []string{`{"t":"dir","path":"sgid","mode":` + itoa(uint32(fs.ModeSetgid|0o755)) + `}`}, "mode"},
		{"a sticky folder", []string{`{"t":"dir","path":"sticky","mode":` + itoa(uint32(fs.ModeSticky|0o777)) + `}`}, "mode"},
		{"a file whose mode names a device", []string{`{"t":"file","path":"dev","mode":` + itoa(uint32(fs.ModeDevice|0o644)) + `,"data":"eA=="}`}, "mode"},
		{"a setuid mode in Unix bits", []string{`{"t":"file","path":"suid2","mode":` + itoa(0o4755) + `,"data":"eA=="}`}, "mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			out := filepath.Join(base, "out")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(base, "cwd")
			lines := []string{tapeHeader("")}
			for _, l := range tc.lines {
				lines = append(lines, strings.ReplaceAll(l, "{{OUT}}", out))
			}
			lines = append(lines, jsRequest)
			_, err := replayBytes(t, zstdLines(t, lines...), dir)
			t.Logf("%v", err)
			switch {
			case err == nil:
				t.Errorf("the replay ran; want an error naming %q", tc.want)
			case !strings.Contains(err.Error(), tc.want):
				t.Errorf("the error %q does not name %q", err, tc.want)
			}
			for _, p := range []string{filepath.Join(base, "escaped.txt"), filepath.Join(out, "escaped.txt"), filepath.Join(out, "escaped"), filepath.Join(base, "escaped"), "/tmp/escaped.txt"} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("the replay wrote %s, outside the folder it rebuilds the root in", p)
				}
			}
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				if info, err := d.Info(); err == nil && info.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky|fs.ModeDevice) != 0 {
					t.Errorf("the replay made %s with mode %v", p, info.Mode())
				}
				return nil
			})
		})
	}
}

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

// TestHuntTapeHeaders: a tape's header sets the options its session is
// replayed with. One that claims no disk quota, a memory cap far past the
// defaults, an agent depth past the cap, an unknown language or a root
// path longer than any path is refused with an error that names it.
func TestHuntTapeHeaders(t *testing.T) {
	for _, tc := range []struct {
		name, options, root, want string
	}{
		{"no disk quota", `"disk_quota_bytes":-1`, "", "disk"},
		{"a disk quota of an exabyte", `"disk_quota_bytes":1152921504606846976`, "", "disk"},
		{"no entry quota", `"disk_quota_files":-1`, "", "disk"},
		{"a petabyte memory cap", `"memory_limit_bytes":1125899906842624`, "", "memory"},
		{"an agent depth past the cap", `"agent_depth":99`, "", "AgentDepth"},
		{"a negative memory cap", `"memory_limit_bytes":-5`, "", "MemoryLimitBytes"},
		{"an unknown language", `"languages":["cobol"]`, "", "cobol"},
		{"a root path of 100 KB", "", "/" + strings.Repeat("r", 100000), "root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tapeHeader(tc.options)
			if tc.root != "" {
				h = strings.Replace(h, `"root":"/tmp/recorded-root"`, `"root":"`+tc.root+`"`, 1)
			}
			dir := filepath.Join(t.TempDir(), "cwd")
			rep, err := replayBytes(t, zstdLines(t, h, jsRequest, `{"t":"result","n":1,"error":"x"}`), dir)
			switch {
			case err == nil:
				t.Errorf("the replay ran (%d requests); want an error naming %q", rep.Requests, tc.want)
			case !strings.Contains(err.Error(), tc.want):
				t.Errorf("the error %q does not name %q", err, tc.want)
			}
		})
	}
	// The operator who trusts a tape lifts the ceilings.
	t.Run("no disk quota, allowed", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "trusted.wtape")
		if err := os.WriteFile(p, zstdLines(t, tapeHeader(`"disk_quota_bytes":-1,"memory_limit_bytes":536870912`), jsRequest, `{"t":"result","n":1,"error":"x"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := replay.File(context.Background(), p, replay.Options{MaxDiskQuotaBytes: -1, MaxMemoryLimitBytes: 1 << 30})
		if err != nil || rep.Requests != 1 {
			t.Errorf("a tape within the replay's ceilings did not replay: %v %+v", err, rep)
		}
	})
}

// rleBomb is a zstd frame, made by hand, whose lines are records padded
// with n bytes of spaces each, repeated lines times: each 128 KiB of
// spaces is a 4-byte RLE block, so the frame is about n/32768*lines bytes
// and expands to n*lines.
func rleBomb(header string, lines, n int) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x50} // magic, no content size, a 1 MiB window
	block := func(typ, size int, last bool) {
		h := size<<3 | typ<<1
		if last {
			h |= 1
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16))
	}
	raw := func(s string) { block(0, len(s), false); b = append(b, s...) }
	raw(header + "\n")
	for range lines {
		raw(`{"t":"clock","clock":"mono","ns":1`)
		for left := n; left > 0; left -= 128 << 10 {
			block(1, min(left, 128<<10), false)
			b = append(b, ' ')
		}
		raw("}\n")
	}
	block(0, 0, true)
	return b
}

// TestHuntTapeBombs: tapes made to cost their reader: a few KiB of zstd
// that expand to 64 GiB, a frame that claims an exabyte of content, a
// line past the line cap, JSON nested past the decoder's depth, a tape cut
// short, bytes that are not zstd. Each is refused with an error that
// names the problem, in bounded time and memory (the heap grows by less
// than 512 MiB).
func TestHuntTapeBombs(t *testing.T) {
	for _, tc := range []struct {
		name string
		tape func(t *testing.T) []byte
		want string
	}{
		{"64 GiB of spaces in 2 MiB", func(*testing.T) []byte { return rleBomb(tapeHeader(""), 2048, 32<<20) }, "more than 1024 MiB in memory"},
		{"a line past the line cap", func(*testing.T) []byte { return rleBomb(tapeHeader(""), 1, 80<<20) }, "longer than 64 MiB"},
		{"a frame that claims an exabyte", func(*testing.T) []byte {
			// Single segment, an 8-byte content size of 2^60, then a
			// header line in a raw block that ends the frame.
			h := tapeHeader("") + "\n"
			b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 0, 0, 0, 0x10}
			size := len(h)<<3 | 1
			return append(append(b, byte(size), byte(size>>8), byte(size>>16)), h...)
		}, "tape"},
		{"a window of 2 GiB", func(*testing.T) []byte {
			b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa8} // window exponent 21: 2 GiB
			size := 1<<3 | 1
			return append(append(b, byte(size), byte(size>>8), byte(size>>16)), '\n')
		}, "window"},
		{"deep JSON in a record", func(t *testing.T) []byte {
			return zstdLines(t, tapeHeader(""), `{"t":"request","n":1,"request":`+strings.Repeat("[", 100000)+strings.Repeat("]", 100000)+`}`)
		}, "line 2"},
		{"deep JSON in a request", func(t *testing.T) []byte {
			return zstdLines(t, tapeHeader(""), `{"t":"request","n":1,"request":{"cells":`+strings.Repeat("[", 9000)+strings.Repeat("]", 9000)+`}}`, `{"t":"result","n":1,"error":"x"}`)
		}, "request 1"},
		{"a tape cut short", func(t *testing.T) []byte {
			b := zstdLines(t, tapeHeader(""), jsRequest)
			return b[:len(b)-7]
		}, "tape"},
		{"not zstd", func(*testing.T) []byte { return []byte(tapeHeader("") + "\n") }, "tape"},
		{"a header past the first line", func(t *testing.T) []byte { return zstdLines(t, tapeHeader(""), tapeHeader("")) }, "a second header"},
		{"no header", func(t *testing.T) []byte { return zstdLines(t, jsRequest) }, "starts with its header"},
		{"a root entry after a request", func(t *testing.T) []byte {
			return zstdLines(t, tapeHeader(""), jsRequest, `{"t":"file","path":"late","data":"eA=="}`)
		}, "root comes first"},
		{"a result before its request", func(t *testing.T) []byte {
			return zstdLines(t, tapeHeader(""), `{"t":"result","n":1,"error":"x"}`, jsRequest)
		}, "before the request"},
		{"requests out of order", func(t *testing.T) []byte {
			return zstdLines(t, tapeHeader(""), strings.Replace(jsRequest, `"n":1`, `"n":7`, 1))
		}, "requests are numbered"},
		{"a file by hash of an exabyte", func(t *testing.T) []byte {
			return zstdLines(t, tapeHeader(""), `{"t":"file","path":"big","size":1152921504606846976,"sha256":"`+strings.Repeat("a", 64)+`"}`, jsRequest)
		}, "not provided"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.tape(t)
			peak := heapPeak()
			start := time.Now()
			type outcome struct {
				rep *replay.Report
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				rep, err := replayBytes(t, b, filepath.Join(t.TempDir(), "cwd"))
				done <- outcome{rep, err}
			}()
			var o outcome
			select {
			case o = <-done:
			case <-time.After(testenv.Stretch(90 * time.Second)):
				t.Fatalf("the replay of a %d-byte tape has not ended after %v", len(b), time.Since(start).Round(time.Second))
			}
			grew := peak()
			t.Logf("%d-byte tape: %v in %v, the heap grew by %d MiB", len(b), o.err, time.Since(start).Round(time.Millisecond), grew>>20)
			switch {
			case o.err == nil:
				t.Errorf("the replay ran (%d requests); want an error naming %q", o.rep.Requests, tc.want)
			case !strings.Contains(o.err.Error(), tc.want):
				t.Errorf("the error %q does not name %q", o.err, tc.want)
			case len(o.err.Error()) > 4096:
				t.Errorf("a %d-byte error", len(o.err.Error()))
			}
			if grew > 512<<20 {
				t.Errorf("the heap grew by %d MiB reading a %d-byte tape", grew>>20, len(b))
			}
		})
	}
}

// TestHuntTapeShowTerminal: what `wasmeval tape show` and `wasmeval
// replay` print comes from the tape, whose code, outputs, file names,
// link targets and environment a guest (or whoever wrote the tape) chose:
// none of it reaches the operator's terminal as control characters
// (escape sequences that set the title, write the clipboard, move the
// cursor or clear the screen, 8-bit CSI); each is shown escaped.
func TestHuntTapeShowTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := wasmevalBinary(t)
	const esc = `\u001b]52;c;cHduZWQ=\u0007\u001b[2J\u001b]0;title\u0007\r\b\u009b31m`
	hdr := strings.Replace(tapeHeader(""), `"env":{}`, `"env":{"E":"`+esc+`"}`, 1)
	tp := zstdLines(t, hdr,
		`{"t":"file","path":"name`+esc+`","data":"eA=="}`,
		`{"t":"symlink","path":"link","target":"`+esc+`"}`,
		`{"t":"request","n":1,"request":{"cells":[{"language":"js","code":"print('`+strings.ReplaceAll(esc, `\`, `\\`)+`') // `+esc+`"}]}}`,
		`{"t":"result","n":1,"result":{"content":[{"type":"text","text":"`+esc+`"}],"details":{"cells":[{"index":0,"status":"complete","output":"`+esc+`recorded\n"}]}}}`,
	)
	p := filepath.Join(t.TempDir(), "escapes.wtape")
	if err := os.WriteFile(p, tp, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"tape", "show", p}, {"replay", p}, {"replay", "--json", p}} {
		t.Run(strings.Join(args[:len(args)-1], " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			t.Logf("exit %v; stdout %d bytes, stderr %d bytes", err, stdout.Len(), stderr.Len())
			if stdout.Len() == 0 {
				t.Fatalf("nothing on stdout; stderr: %s", stderr.String())
			}
			for name, out := range map[string][]byte{"stdout": stdout.Bytes(), "stderr": stderr.Bytes()} {
				for _, c := range []string{"\x1b", "\x07", "\r", "\b", "\u009b", "\x9b"} {
					if i := bytes.Index(out, []byte(c)); i >= 0 {
						t.Errorf("%s holds the control character %q: %q", name, c, out[max(0, i-40):min(len(out), i+40)])
					}
				}
			}
		})
	}
}

// TestHuntTapeBlobs: the files a tape names by hash are read from the
// operator's --blobs folder, at the path the tape gives: a named pipe
// there, or a file of another size (a sparse TiB), is passed over without
// being read (the pipe blocked the replay for good), and the replay says
// which file is not provided.
func TestHuntTapeBlobs(t *testing.T) {
	blobs := t.TempDir()
	sum := strings.Repeat("b", 64)
	if err := syscall.Mkfifo(filepath.Join(blobs, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(blobs, sum), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(blobs, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	f.Close()
	p := filepath.Join(t.TempDir(), "blobs.wtape")
	if err := os.WriteFile(p, zstdLines(t, tapeHeader(""),
		`{"t":"file","path":"pipe","size":10,"sha256":"`+sum+`"}`,
		`{"t":"file","path":"sparse","size":10,"sha256":"`+strings.Repeat("c", 64)+`"}`,
		jsRequest), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := replay.File(context.Background(), p, replay.Options{Blobs: blobs})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "pipe (10 bytes") || !strings.Contains(err.Error(), "sparse (10 bytes") {
			t.Errorf("want an error naming both files as not provided: %v", err)
		}
	case <-time.After(testenv.Stretch(60 * time.Second)):
		t.Fatal("the replay has not ended: it is reading a named pipe or a TiB")
	}
}

// TestHuntTapeLinksLeadNowhere: a tape's root may name links whose
// targets leave the root (absolute, climbing). The replayed guest could not
// follow them, but replay --cwd DIR keeps the rebuilt root, where an
// operator's tools would: the tape is refused, naming the link, before
// anything is made in DIR.
func TestHuntTapeLinksLeadNowhere(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte(canaryFile), 0o644); err != nil {
		t.Fatal(err)
	}
	req, _ := json.Marshal(map[string]any{"cells": []map[string]any{{"language": "js", "code": "print(1)"}}})
	for _, l := range []struct{ path, target string }{
		{"abs", outside},
		{"up", "../outside"},
		{"file", filepath.Join(outside, "secret.txt")},
		{"passwd", "/etc/passwd"},
	} {
		t.Run(l.path, func(t *testing.T) {
			cwd := filepath.Join(t.TempDir(), "cwd")
			tp := zstdLines(t, tapeHeader(""),
				`{"t":"file","path":"first.txt","data":"eA=="}`,
				`{"t":"symlink","path":"`+l.path+`","target":"`+l.target+`"}`,
				`{"t":"request","n":1,"request":`+string(req)+`}`,
				`{"t":"result","n":1,"result":{"content":[],"details":{"cells":[{"index":0,"status":"complete","output":"1\n"}]}}}`)
			_, err := replayBytes(t, tp, cwd)
			switch {
			case err == nil:
				t.Fatalf("the replay ran with the link %s -> %s in its root", l.path, l.target)
			case !strings.Contains(err.Error(), "root entry "+l.path+" is a symbolic link to") || !strings.Contains(err.Error(), "a root's links must be relative"):
				t.Errorf("the error %q does not name the link and what is allowed", err)
			}
			filepath.WalkDir(cwd, func(p string, d fs.DirEntry, err error) error {
				if err == nil && p != cwd {
					t.Errorf("the refused replay made %s", p)
				}
				return nil
			})
		})
	}
}

// TestHuntTapeForkFolders: a tape's fork records make replay rebuild each
// fork's root beside --cwd (DIR.forkN), with files the tape chooses. A
// link already at that path (in a shared /tmp, anyone's) or a folder
// there is refused, and nothing reaches where it leads; a fork's header
// that asks for no disk quota is refused like the tape's.
func TestHuntTapeForkFolders(t *testing.T) {
	fork := strings.Replace(tapeHeader(""), `{"t":"header"`, `{"t":"fork"`, 1)
	req2 := strings.Replace(jsRequest, `"n":1`, `"n":2`, 1)
	lines := func(fork string) []byte {
		return zstdLines(t, tapeHeader(""), `{"t":"file","path":"planted.txt","data":"eA=="}`, jsRequest, `{"t":"result","n":1,"error":"x"}`,
			fork, req2, `{"t":"result","n":2,"error":"x"}`)
	}
	for _, tc := range []struct {
		name  string
		setup func(dir, elsewhere string)
		fork  string
		want  string // in the error; empty: the replay runs
	}{
		{"a link at the fork's folder", func(dir, elsewhere string) { os.Symlink(elsewhere, dir+".fork2") }, fork, "must not exist"},
		{"a dangling link at the fork's folder", func(dir, elsewhere string) { os.Symlink(filepath.Join(elsewhere, "new"), dir+".fork2") }, fork, "must not exist"},
		{"an empty folder at the fork's folder", func(dir, elsewhere string) { os.Mkdir(dir+".fork2", 0o777) }, fork, "must not exist"},
		{"a fork's header without a disk quota", func(string, string) {}, strings.Replace(fork, `"options":{}`, `"options":{"disk_quota_bytes":-1}`, 1), "asks for no cap"},
		{"a fork's header with a terabyte memory cap", func(string, string) {}, strings.Replace(fork, `"options":{}`, `"options":{"memory_limit_bytes":1099511627776}`, 1), "more than this replay allows"},
		{"nothing there", func(string, string) {}, fork, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			dir, elsewhere := filepath.Join(base, "cwd"), filepath.Join(base, "elsewhere")
			if err := os.Mkdir(elsewhere, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.setup(dir, elsewhere)
			rep, err := replayBytes(t, lines(tc.fork), dir)
			switch {
			case tc.want == "" && (err != nil || rep.Requests != 2):
				t.Errorf("the replay of a fork did not run: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("the replay ran (%d requests); want an error naming %q", rep.Requests, tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("the error %q does not name %q", err, tc.want)
			}
			filepath.WalkDir(elsewhere, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					t.Errorf("the replay wrote %s, where a link beside --cwd led", p)
				}
				return nil
			})
		})
	}
}

// TestHuntTapeRootPathBomb: replay puts its own root's path in place of
// the recorded root's in what it compares; a tape that names "/" as its
// root and records a result of 8 MiB of slashes made each of them the
// replay's whole path (1.4 GiB of heap, 9 s). The heap now grows by less
// than 512 MiB, and the replay reports the result as different.
func TestHuntTapeRootPathBomb(t *testing.T) {
	h := strings.Replace(tapeHeader(""), `"root":"/tmp/recorded-root"`, `"root":"/"`, 1)
	res := `{"t":"result","n":1,"result":{"content":[],"details":{"cells":[{"index":0,"status":"complete","output":"` + strings.Repeat("/", 8<<20) + `"}]}}}`
	b := zstdLines(t, h, jsRequest, res)
	peak := heapPeak()
	rep, err := replayBytes(t, b, "")
	grew := peak()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Identical {
		t.Error("the replay of a result of 8 MiB of slashes was identical")
	}
	if grew > 512<<20 {
		t.Errorf("the heap grew by %d MiB replaying a %d-byte tape", grew>>20, len(b))
	}
}

// TestHuntTapeOutOfOrder: records that contradict each other or the
// replayed guest (nested evals before the call that runs them, never
// ended, with a result before the request or twice the same number; a
// call's made or wait far past any; stops of cells that do not exist or
// after 10^18 bytes) make a replay that diverges and ends, never one that
// waits for what will not come.
func TestHuntTapeOutOfOrder(t *testing.T) {
	toolReq := `{"t":"request","n":1,"request":{"cells":[{"language":"js","code":"print(await tool.x({}))","timeout":3}]}}`
	call := `{"t":"call","call":{"op":"tool","name":"x","args":{}},"answer":{"result":"A"},"made":1}`
	res := `{"t":"result","n":1,"error":"x"}`
	nested := func(code string) string {
		return `{"t":"request","n":2,"nested":true,"request":{"cells":[{"language":"js","code":"` + code + `","timeout":2}]}}`
	}
	for _, tc := range []struct {
		name  string
		lines []string
	}{
		{"a looping nested eval before its parent's call", []string{toolReq, nested("while (true) {}"), call, res}},
		{"a nested eval that never ended", []string{toolReq, call, nested("1"), res}},
		{"a nested result before its request", []string{toolReq, `{"t":"result","n":2,"nested":true,"error":"y"}`, nested("1"), call, res}},
		{"two nested evals of one number", []string{toolReq, nested("1"), nested("2"), call, `{"t":"result","n":2,"nested":true,"error":"y"}`, res}},
		{"a call made 99th", []string{toolReq, strings.Replace(call, `"made":1`, `"made":99`, 1), res}},
		{"a call taken in wait 10^9", []string{toolReq, strings.Replace(call, `"made":1`, `"made":1,"wait":1000000000`, 1), res}},
		{"a stop of cell 10^9", []string{toolReq, call, `{"t":"stop","cell":1000000000,"cause":"timeout","bytes":5}`, res}},
		{"a stop after 10^18 bytes", []string{toolReq, call, `{"t":"stop","cause":"timeout","bytes":1000000000000000000}`, res}},
		{"a nested stop before start", []string{toolReq, `{"t":"stop","n":2,"cause":"interrupt","before_start":true}`, call, res}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := zstdLines(t, append([]string{tapeHeader("")}, tc.lines...)...)
			type outcome struct {
				rep *replay.Report
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				rep, err := replayBytes(t, b, "")
				done <- outcome{rep, err}
			}()
			select {
			case o := <-done:
				if o.err == nil && o.rep.Identical {
					t.Error("the replay of contradicting records was identical")
				}
			case <-time.After(testenv.Stretch(90 * time.Second)):
				t.Fatal("the replay has not ended")
			}
		})
	}
}
