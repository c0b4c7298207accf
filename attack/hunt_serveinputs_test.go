package attack_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

// TestHuntServePathEncodings: file paths in serve's URLs in the encodings
// TestHuntServeFiles does not try: overlong UTF-8 for '.' and '/', double
// percent-encoding, full-width dots and slashes, a Windows drive, a
// Unicode division slash. Each is refused or names a file inside the root
// (a file of that odd name at most); nothing outside is read or written.
func TestHuntServePathEncodings(t *testing.T) {
	h := startHuntServer(t)
	id := h.create(aliceToken)
	files := "/v1/sessions/" + id + "/files/"
	outside := filepath.Join(h.ws, "..", "enc-outside-"+id)
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte(canaryFile), 0o644); err != nil {
		t.Fatal(err)
	}
	rel := "../" + filepath.Base(outside) + "/secret.txt"
	enc := func(dot, slash string) string {
		return strings.ReplaceAll(strings.ReplaceAll(rel, ".", dot), "/", slash)
	}
	for _, tc := range []struct{ name, path string }{
		{"overlong UTF-8 dots", enc("%c0%ae", "/")},
		{"overlong UTF-8 slashes", enc(".", "%c0%af")},
		{"three-byte overlong dots", enc("%e0%80%ae", "%e0%80%af")},
		{"double-encoded dots", enc("%252e", "/")},
		{"double-encoded slashes", enc(".", "%252f")},
		{"full-width dots and slashes", enc("%ef%bc%8e", "%ef%bc%8f")},
		{"a division slash", enc(".", "%e2%88%95")},
		{"a Windows drive", "C:%5cWindows%5cwin.ini"},
		{"backslashes, doubled", strings.ReplaceAll(rel, "/", "%5c%5c")},
		{"a dot segment with a trailing space", strings.Replace(rel, "..", "..%20", 1)},
		{"a dot segment with a trailing dot", strings.Replace(rel, "..", "...", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, method := range []string{"GET", "PUT"} {
				code, body := h.do(aliceToken, method, files+tc.path, "planted")
				if code/100 == 5 {
					t.Errorf("%s: %d %.300s", method, code, body)
				}
				noLeak(t, tc.name, body)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(outside, "secret.txt")); err != nil || string(b) != canaryFile {
		t.Errorf("the secret outside the root changed: %q %v", b, err)
	}
	filepath.WalkDir(filepath.Dir(outside), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(p, filepath.Dir(outside)) && !strings.HasPrefix(p, h.ws) {
			if b, _ := os.ReadFile(p); string(b) == "planted" {
				t.Errorf("a PUT wrote %s, outside the workspace", p)
			}
		}
		return nil
	})
	h.alive(aliceToken, id)
}

// TestHuntServeContentLengthLies: a PUT whose Content-Length claims more
// than the body sends (then the client stops), one that claims more than
// the disk quota, and one that claims less than it sends: each gets a 4xx
// (or the short body is refused) in bounded time, no file is left with
// the missing bytes, and the server goes on.
func TestHuntServeContentLengthLies(t *testing.T) {
	h := startHuntServer(t)
	id := h.create(aliceToken)
	host := strings.TrimPrefix(h.url, "http://")
	raw := func(req string, closeWrite bool) string {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(testenv.Stretch(30 * time.Second)))
		io.WriteString(c, req)
		if closeWrite {
			c.(*net.TCPConn).CloseWrite()
		}
		line, _ := bufio.NewReader(c).ReadString('\n')
		return line
	}
	put := func(path string, length int, body string) string {
		return fmt.Sprintf("PUT /v1/sessions/%s/files/%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s", id, path, aliceToken, length, body)
	}
	for _, tc := range []struct {
		name, req  string
		closeWrite bool
		want       []string // acceptable status lines' codes
	}{
		{"more claimed than sent", put("short.txt", 100, "only ten!!"), true, []string{"400", "408"}},
		{"more than the disk quota claimed", put("huge.txt", diskCap+1, "x"), true, []string{"400", "413"}},
		{"a terabyte claimed", put("tera.txt", 1<<40, "x"), true, []string{"400", "413"}},
		{"less claimed than sent", put("less.txt", 3, "abcdefgh"), false, []string{"200", "201", "204"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := raw(tc.req, tc.closeWrite)
			ok := false
			for _, w := range tc.want {
				ok = ok || strings.Contains(line, " "+w+" ")
			}
			if !ok {
				t.Errorf("status line %q, want one of %v", strings.TrimSpace(line), tc.want)
			}
		})
	}
	root := filepath.Join(h.ws, id)
	for _, name := range []string{"short.txt", "huge.txt", "tera.txt"} {
		if fi, err := os.Stat(filepath.Join(root, name)); err == nil {
			t.Errorf("%s was left in the root (%d bytes)", name, fi.Size())
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "less.txt")); err != nil || string(b) != "abc" {
		t.Errorf("less.txt holds %q (%v), want the 3 bytes claimed", b, err)
	}
	h.alive(aliceToken, id)
}
