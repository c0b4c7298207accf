package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSaveDoesNotFollowSwappedFolders: code that runs beside a save (a
// native Jupyter kernel may) swaps a folder of the root for a link to a
// host folder and back, over and over, while the root is saved again and
// again. The save never follows the link: no host file is read into the
// store, whatever the timing. A walk by host path followed it whenever the
// swap fell between the listing of the root and that of the folder (the
// two hundred files before it widen that window); the save may fail then,
// never copy. Every run is bounded by its count of saves, not by time.
func TestSaveDoesNotFollowSwappedFolders(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "sw"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const secret = "host secret"
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte(secret), 0o644)
	os.WriteFile(filepath.Join(root, "sw", "inside.txt"), []byte("inside"), 0o644)
	for i := range 200 {
		os.WriteFile(filepath.Join(root, fmt.Sprintf("a%03d", i)), []byte("x"), 0o644)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the swapper
		defer wg.Done()
		sw, held := filepath.Join(root, "sw"), filepath.Join(root, "sw.held")
		hold := func() { // each state lasts a while, for the walk to meet it
			for range 50 {
				os.Lstat(sw)
			}
		}
		for !stop.Load() {
			os.Rename(sw, held)
			os.Symlink(outside, sw)
			hold()
			os.Remove(sw)
			os.Rename(held, sw)
			hold()
		}
	}()
	failed, saves := 0, 1000
	for range saves {
		_, files, err := diffRoot(root, nil, time.Now(), false)
		if err != nil {
			failed++
			continue
		}
		for _, f := range files {
			if strings.HasSuffix(f.Path, "secret.txt") || string(f.Data) == secret {
				stop.Store(true)
				wg.Wait()
				t.Fatalf("the save read the host file %s through the swapped link", f.Path)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if failed == saves {
		t.Fatalf("all %d saves failed: the test saw no save to check", saves)
	}
	t.Logf("%d of %d saves failed while the folder was swapped", failed, saves)
}
