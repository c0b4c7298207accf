package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wasmeval/wasmeval/wasm"
)

// ErrRootOverlap is wrapped by the error of NewSession and Fork for a
// session root that is, contains or lies inside a folder wasmeval itself
// writes and later processes trust: the cache directory (compiled code and
// snapshots that later processes load) and the folder of the key that
// authenticates it. A guest can write anything under its root, so such a
// root would let it plant code that the next wasmeval process runs.
var ErrRootOverlap = errors.New("sandbox: session root overlaps a folder of wasmeval's own")

// protectedDir is a folder no session root may overlap.
type protectedDir struct {
	path string
	what string // what it is, for the error
	fix  string // how else to resolve the overlap, for the error
}

// protectedDirs are o's cache directory and the folder of the per-user
// cache key (the same folder unless CacheDir was set). The key's folder is
// protected whatever CacheDir is, because every process of the user trusts
// that key: a root over it in one configuration would let a guest forge
// the cache of every other.
func protectedDirs(o Options) []protectedDir {
	var dirs []protectedDir
	keyFile := wasm.DefaultKeyFile(o.CacheDir)
	keyDir := ""
	if keyFile != "" {
		keyDir = absClean(filepath.Dir(keyFile))
	}
	if o.CacheDir != "" {
		cache := absClean(o.CacheDir)
		if cache == keyDir {
			return []protectedDir{{
				path: cache,
				what: "wasmeval's cache directory, with the key that authenticates it",
				fix:  "or move the cache: set XDG_CACHE_HOME to a folder outside the root",
			}}
		}
		dirs = append(dirs, protectedDir{
			path: cache,
			what: "wasmeval's cache directory",
			fix:  "or set the cache directory elsewhere (--cache-dir of serve and mcp, sandbox.Options.CacheDir)",
		})
	}
	if keyDir != "" {
		dirs = append(dirs, protectedDir{
			path: keyDir,
			what: "the folder of wasmeval's cache key",
			fix:  "or move the key: set XDG_CACHE_HOME to a folder outside the root",
		})
	}
	return dirs
}

// checkRoot returns an error wrapping ErrRootOverlap when root is, contains
// or lies inside one of dirs. It compares the paths as given and as the
// host resolves them (symlinks), both ways, and the folders themselves
// (so a bind mount of one into the other is caught too).
func checkRoot(root string, dirs []protectedDir) error {
	for _, d := range dirs {
		if rel := overlap(root, d.path); rel != "" {
			return fmt.Errorf("%w: %s %s %s, %s; a guest could rewrite what later wasmeval processes load and run. "+
				"Give a session root (the --cwd of eval) that neither is, contains nor lies inside %s, %s",
				ErrRootOverlap, root, rel, d.path, d.what, d.path, d.fix)
		}
	}
	return nil
}

// overlap says how root relates to dir: "is", "contains", "lies inside",
// or "" for neither.
func overlap(root, dir string) string {
	roots := []string{absClean(root), realPath(root)}
	dirs := []string{absClean(dir), realPath(dir)}
	for _, r := range roots {
		for _, d := range dirs {
			switch {
			case r == d:
				return "is"
			case within(d, r):
				return "contains"
			case within(r, d):
				return "lies inside"
			}
		}
	}
	// The same folder under another name (a bind mount): compare the
	// folders themselves along each one's ancestors.
	if rs, err := os.Stat(root); err == nil {
		if a := ancestorSameAs(realPath(dir), rs); a != "" {
			if a == realPath(dir) {
				return "is"
			}
			return "contains"
		}
	}
	if ds, err := os.Stat(dir); err == nil {
		if a := ancestorSameAs(realPath(root), ds); a != "" {
			if a == realPath(root) {
				return "is"
			}
			return "lies inside"
		}
	}
	return ""
}

// ancestorSameAs returns the first of p and its ancestors that is the same
// file as fi, or "".
func ancestorSameAs(p string, fi os.FileInfo) string {
	for {
		if st, err := os.Stat(p); err == nil && os.SameFile(st, fi) {
			return p
		}
		parent := filepath.Dir(p)
		if parent == p {
			return ""
		}
		p = parent
	}
}

// within reports whether p lies strictly inside dir (both clean and
// absolute).
func within(p, dir string) bool {
	if dir == string(filepath.Separator) {
		return p != dir
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

func absClean(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// realPath resolves the symlinks of p, as far as p exists: a folder not
// made yet (the cache before the first run) is its existing ancestor,
// resolved, and the rest of the path.
func realPath(p string) string {
	p = absClean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// checkWorkspace refuses a Manager workspace that is or lies inside one of
// dirs, where every session root would lie too. A workspace that contains
// one is fine: the roots are folders of their own under it.
func checkWorkspace(ws string, dirs []protectedDir) error {
	for _, d := range dirs {
		if rel := overlap(ws, d.path); rel == "is" || rel == "lies inside" {
			return fmt.Errorf("%w: the workspace %s %s %s, %s, and so would every session root. "+
				"Give a workspace (--workspace of serve and mcp) outside %s, %s",
				ErrRootOverlap, ws, rel, d.path, d.what, d.path, d.fix)
		}
	}
	return nil
}
