package sandbox_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
)

// userCache points os.UserCacheDir at a fresh folder for the test and
// returns the home that holds it: the key lives under it whatever
// Options.CacheDir says.
func userCache(t *testing.T) (home, cacheDir string) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	return home, filepath.Join(home, ".cache", "wasmeval")
}

// A session root that is, contains or lies inside the cache directory (or
// the key's folder) would let a guest rewrite the compiled code that the
// next wasmeval process runs: it is refused, by real path, both ways.
func TestRootOverlappingCacheIsRefused(t *testing.T) {
	ctx := context.Background()
	home, defCache := userCache(t)
	other := t.TempDir()
	custom := filepath.Join(other, "cache")
	os.MkdirAll(filepath.Join(defCache, "inside"), 0o755)
	os.MkdirAll(filepath.Join(custom, "inside"), 0o755)
	linkToHome := filepath.Join(t.TempDir(), "home-link")
	os.Symlink(home, linkToHome)
	linkToInside := filepath.Join(t.TempDir(), "inside-link")
	os.Symlink(filepath.Join(defCache, "inside"), linkToInside)
	// A cache dir given through a symlink that leads into a root.
	viaLink := filepath.Join(t.TempDir(), "cache-link")
	os.Symlink(filepath.Join(other, "elsewhere"), viaLink)
	os.MkdirAll(filepath.Join(other, "elsewhere"), 0o755)
	fine := t.TempDir()

	for _, tc := range []struct {
		name     string
		cacheDir string // Options.CacheDir; "" is the default
		root     string
		refused  string // the path the error names; "" when accepted
		relation string
	}{
		{"eval from $HOME (default cache)", "", home, defCache, "contains"},
		{"the cache itself", "", defCache, defCache, "is"},
		{"inside the cache", "", filepath.Join(defCache, "inside"), defCache, "lies inside"},
		{"symlink to home", "", linkToHome, defCache, "contains"},
		{"symlink into the cache", "", linkToInside, defCache, "lies inside"},
		{"/ contains everything", "", "/", defCache, "contains"},
		{"custom cache: contains it", custom, other, custom, "contains"},
		{"custom cache: inside it", custom, filepath.Join(custom, "inside"), custom, "lies inside"},
		{"custom cache: the key's folder is still guarded", custom, home, defCache, "contains"},
		{"custom cache given by a symlink", viaLink, other, viaLink, "contains"},
		{"unrelated root", "", fine, "", ""},
		{"unrelated root, custom cache", custom, fine, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, err := sandbox.New(ctx, sandbox.Options{CacheDir: tc.cacheDir})
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close(ctx)
			s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: tc.root})
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				s.Close(ctx)
				return
			}
			if err == nil {
				s.Close(ctx)
				t.Fatalf("root %s was accepted", tc.root)
			}
			if !errors.Is(err, sandbox.ErrRootOverlap) {
				t.Fatalf("error does not wrap ErrRootOverlap: %v", err)
			}
			msg := err.Error()
			for _, want := range []string{tc.refused, tc.relation, "--cwd"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error does not say %q: %s", want, msg)
				}
			}
		})
	}
}

// A bind mount makes the cache reachable under a name no path comparison
// sees; the folders themselves are compared too.
func TestRootBindMountOfCacheIsRefused(t *testing.T) {
	ctx := context.Background()
	_, defCache := userCache(t)
	os.MkdirAll(defCache, 0o755)
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "--bind", filepath.Dir(defCache), mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot bind-mount here (%v: %s); symlinks and paths are tested above", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	if s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: mnt}); !errors.Is(err, sandbox.ErrRootOverlap) {
		if s != nil {
			s.Close(ctx)
		}
		t.Fatalf("a bind mount of the cache's parent was accepted as a root: %v", err)
	}
}

// Servers get it through the manager: a workspace that is or lies inside
// the cache is refused up front (every session root would lie inside it),
// and so is each session root, should the manager let one through.
func TestManagerWorkspaceInsideCacheIsRefused(t *testing.T) {
	ctx := context.Background()
	home, defCache := userCache(t)
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	for _, ws := range []string{defCache, filepath.Join(defCache, "ws")} {
		m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{Workspace: ws})
		if err == nil {
			m.Close(ctx)
			t.Fatalf("workspace %s was accepted", ws)
		}
		if !errors.Is(err, sandbox.ErrRootOverlap) || !strings.Contains(err.Error(), "--workspace") {
			t.Fatalf("workspace %s: %v", ws, err)
		}
	}
	if _, err := os.Stat(filepath.Join(defCache, "ws")); err == nil {
		t.Fatal("the refused workspace was made")
	}
	// A workspace that contains the cache is fine: the roots are folders
	// of their own, none of which holds the cache.
	m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{Workspace: home})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	if _, err := m.Create(ctx, "owner"); err != nil {
		t.Fatal(err)
	}
}

// Fork checks its target the same way, before copying anything into it.
func TestForkIntoCacheIsRefused(t *testing.T) {
	ctx := context.Background()
	_, defCache := userCache(t)
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "planted.txt"), []byte("x"), 0o644)
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	target := filepath.Join(defCache, "fork")
	os.MkdirAll(target, 0o755)
	if cp, err := s.Fork(ctx, sandbox.SessionOptions{Root: target}); !errors.Is(err, sandbox.ErrRootOverlap) {
		if cp != nil {
			cp.Close(ctx)
		}
		t.Fatalf("fork into the cache: %v", err)
	}
	if _, err := os.Stat(filepath.Join(target, "planted.txt")); err == nil {
		t.Fatal("fork copied files into the cache before refusing")
	}
}
