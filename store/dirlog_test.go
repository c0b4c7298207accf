package store_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/store"
)

// crashState is the k-th state of the crash tests' session: a frame kept
// from the first save, a frame and a file of its own, and one of three
// large files changed (so the log is compacted now and then).
func crashState(k int) *store.State {
	gen := func(seed, n int) []byte {
		var key [32]byte
		binary.LittleEndian.PutUint64(key[:], uint64(seed))
		b := make([]byte, n)
		rand.NewChaCha8(key).Read(b)
		return b
	}
	frame := func(b []byte) store.Frame { return store.Frame{Sum: sha256.Sum256(b), Data: b} }
	return &store.State{
		ID: "crash", Owner: "o", Artifact: "a", FuelUsed: uint64(k),
		Python:       []byte(fmt.Sprintf("index %d", k)),
		PythonFrames: []store.Frame{frame(gen(-1, 100<<10)), frame(gen(k, 50<<10))},
		Outputs:      []byte(fmt.Sprintf(`{"next":%d}`, k)),
		Files: []store.File{
			{Path: "count.txt", Mode: 0o644, Data: []byte(strconv.Itoa(k))},
			{Path: fmt.Sprintf("big-%d.bin", k%3), Mode: 0o644, Data: gen(1000+k, 1<<20)},
		},
	}
}

// checkCrashState reports whether st is crashState(k) with the big files
// of the saves before it, k being its FuelUsed.
func checkCrashState(st *store.State) error {
	k := int(st.FuelUsed)
	want := crashState(k)
	if string(st.Python) != string(want.Python) || string(st.Outputs) != string(want.Outputs) || len(st.PythonFrames) != 2 {
		return fmt.Errorf("state %d: index %q, outputs %q, %d frames", k, st.Python, st.Outputs, len(st.PythonFrames))
	}
	for i, f := range st.PythonFrames {
		if !bytes.Equal(f.Data, want.PythonFrames[i].Data) {
			return fmt.Errorf("state %d: frame %d is not its own", k, i)
		}
	}
	files := map[string][]byte{}
	for _, f := range st.Files {
		files[f.Path] = f.Data
	}
	if string(files["count.txt"]) != strconv.Itoa(k) {
		return fmt.Errorf("state %d: count.txt holds %q", k, files["count.txt"])
	}
	for j := k; j > k-3 && j >= 1; j-- {
		if w := crashState(j).Files[1]; !bytes.Equal(files[w.Path], w.Data) {
			return fmt.Errorf("state %d: %s is not as save %d left it", k, w.Path, j)
		}
	}
	return nil
}

// TestDirCrashChild is the process TestDirKilledMidSave kills: it saves
// the crash states one after another into the store its environment
// names, printing each number once its Save returned.
func TestDirCrashChild(t *testing.T) {
	root := os.Getenv("WASMEVAL_DIRCRASH_ROOT")
	if root == "" {
		t.Skip("the child of TestDirKilledMidSave; it runs only as that")
	}
	defer store.SetCompactSlackForTest(crashSlack)()
	s, err := store.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("WASMEVAL_DIRCRASH_NOSYNC") == "1" {
		s.NoSync() // a save is all writes: a kill lands in one more often
	}
	ctx := context.Background()
	k := 0
	if st, err := s.Load(ctx, "crash", "a"); err == nil {
		k = int(st.FuelUsed)
	} else if !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	full := k == 0
	for {
		k++
		st := crashState(k)
		st.FullFiles = full
		if full {
			for j := k - 1; j > k-3 && j >= 1; j-- {
				st.Files = append(st.Files, crashState(j).Files[1])
			}
		}
		if err := s.Save(ctx, st, 1); err != nil {
			t.Fatal(err)
		}
		full = false
		fmt.Fprintf(os.Stdout, "saved %d\n", k)
	}
}

// crashSlack makes the crash tests' log compacted every few saves.
const crashSlack = 256 << 10

// TestDirKilledMidSave: issue 16's crash rule on the dir store's log. A
// process saving a session over and over (appending records of about
// a MiB, the log compacted every few saves) is killed with
// SIGKILL at a random point, again and again (every other process does
// not sync, so that more kills land inside a write); each time a fresh Dir over
// the folder loads the state of the last Save that returned, or of the
// one in flight, whole (its frames, files and metadata all of one save),
// and the next process goes on from it.
func TestDirKilledMidSave(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	last, torn := 0, 0
	for round := range 24 {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestDirCrashChild$", "-test.count", "1")
		cmd.Env = append(os.Environ(), "WASMEVAL_DIRCRASH_ROOT="+root, fmt.Sprintf("WASMEVAL_DIRCRASH_NOSYNC=%d", round%2))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan int, 1024)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if n, ok := strings.CutPrefix(sc.Text(), "saved "); ok {
					k, _ := strconv.Atoi(n)
					lines <- k
				}
			}
			close(lines)
		}()
		// Killed after some saves, at a random moment of one.
		want := last + 3 + r.IntN(25)
		deadline := time.After(testenv.Stretch(20 * time.Second))
	wait:
		for {
			select {
			case k, ok := <-lines:
				if !ok {
					t.Fatalf("round %d: the child ended by itself: %s", round, stderr.String())
				}
				if k != last+1 {
					t.Fatalf("round %d: the child saved %d after %d", round, k, last)
				}
				last = k
				if k >= want {
					time.Sleep(time.Duration(r.IntN(5000)) * time.Microsecond)
					break wait
				}
			case <-deadline:
				t.Fatalf("round %d: no save for 20 s: %s", round, stderr.String())
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		for k := range lines {
			last = k // printed between the sleep and the kill
		}
		before, _ := os.Stat(filepath.Join(root, "crash", "log"))
		s, err := store.OpenDir(root)
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.Load(context.Background(), "crash", "a")
		if after, _ := os.Stat(filepath.Join(root, "crash", "log")); before != nil && after != nil && after.Size() < before.Size() {
			torn++ // killed mid-write: the load dropped the torn record
		}
		if err != nil {
			t.Fatalf("round %d: a load after the kill: %v", round, err)
		}
		if k := int(st.FuelUsed); k != last && k != last+1 {
			t.Fatalf("round %d: the store holds save %d; the last save that returned was %d", round, k, last)
		}
		if err := checkCrashState(st); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		last = int(st.FuelUsed)
		s.Close()
	}
	t.Logf("%d saves in 24 processes, %d killed mid-write", last, torn)
}

// TestDirTornTail: a log whose last record was cut short or half written
// (as a crash leaves it) loads the record before it, and the next save
// takes the torn record's place; bytes past the last record that look
// like nothing are ignored the same way.
func TestDirTornTail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(b []byte, lastRecord int) []byte
	}{
		{"cut short", func(b []byte, at int) []byte { return b[:at+(len(b)-at)/2] }},
		{"head only", func(b []byte, at int) []byte { return b[:at+10] }},
		{"last bytes never written", func(b []byte, at int) []byte {
			clear(b[len(b)-100:])
			return b
		}},
		{"garbage after", func(b []byte, at int) []byte { return append(b, "partial record"...) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, root := openDir(t)
			ctx := context.Background()
			s1, _ := store.OpenDir(root)
			st1 := crashState(1)
			st1.FullFiles = true
			if err := s1.Save(ctx, st1, 1); err != nil {
				t.Fatal(err)
			}
			fi, _ := os.Stat(logOf(root, "crash"))
			if err := s1.Save(ctx, crashState(2), 1); err != nil {
				t.Fatal(err)
			}
			s1.Close()
			b, _ := os.ReadFile(logOf(root, "crash"))
			if err := os.WriteFile(logOf(root, "crash"), tc.damage(b, int(fi.Size())), 0o600); err != nil {
				t.Fatal(err)
			}
			s2, _ := store.OpenDir(root)
			st, err := s2.Load(ctx, "crash", "a")
			want := 1
			if tc.name == "garbage after" {
				want = 2
			}
			if err != nil || int(st.FuelUsed) != want {
				t.Fatalf("a load: %v, %v; want save %d", st, err, want)
			}
			if err := checkCrashState(st); err != nil {
				t.Fatal(err)
			}
			next := crashState(want + 1)
			next.Files = append(next.Files, crashState(want).Files[1]) // the delta from what loaded
			if err := s2.Save(ctx, next, 1); err != nil {
				t.Fatal(err)
			}
			s3, _ := store.OpenDir(root)
			if st, err := s3.Load(ctx, "crash", "a"); err != nil || int(st.FuelUsed) != want+1 {
				t.Fatalf("after the next save: %v, %v", st, err)
			} else if err := checkCrashState(st); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDirCompacts: a session whose saves drop what earlier ones wrote
// (changed files, dropped frames) keeps a log of bounded size: once it
// holds much more than the state needs, it is written anew; what loads is
// the last state either way.
func TestDirCompacts(t *testing.T) {
	s, root := openDir(t)
	ctx := context.Background()
	first := crashState(1)
	first.FullFiles = true
	if err := s.Save(ctx, first, 1); err != nil {
		t.Fatal(err)
	}
	var most int64
	for k := 2; k <= 60; k++ {
		if err := s.Save(ctx, crashState(k), 1); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(logOf(root, "crash"))
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, fi.Size())
	}
	// The state needs about 3.2 MiB; 60 saves wrote some 60 MiB.
	if most > 12<<20 {
		t.Fatalf("the log reached %d bytes", most)
	}
	s2, _ := store.OpenDir(root)
	st, err := s2.Load(ctx, "crash", "a")
	if err != nil || st.FuelUsed != 60 {
		t.Fatalf("after compactions: %v, %v", st, err)
	}
	if err := checkCrashState(st); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "crash")); len(entries) != 1 {
		t.Fatalf("the session's folder holds %v, want its log alone", entries)
	}
}
