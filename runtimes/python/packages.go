package python

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/wasm"
)

// PackagesPath is the guest path of the package layer (Config.Packages):
// read-only, on sys.path after the session root and the standard library.
const PackagesPath = "/usr/local/lib/wasmeval/site-packages"

// maxLayerEntries bounds the files and folders of a package layer that
// New walks for the template's cache key: the test layer (sympy, mpmath,
// networkx, attrs, PyYAML, with byte-code) has about 4,000; a folder far
// larger is probably not one of installed packages (a home directory,
// "/"). The walk takes a few milliseconds per thousand entries.
const maxLayerEntries = 200_000

// packageLayer is a Runtime's package layer: the folder every instance
// mounts read-only at PackagesPath, and what the template imported from it.
type packageLayer struct {
	dir     string
	preload []string
	fs      *wasm.ReadOnlyFS
	key     []byte // the layer's identity, for the template's cache key
}

// moduleName is a dotted Python module name.
var moduleName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// CheckPackages says what is wrong with a package layer and its preload
// list, if anything: dir must be an existing folder (given by absolute
// path), and each preload name a module name whose top-level package or
// module is in dir (a folder, or a .py file). flag names the setting in
// the error ("--packages", "Options.Packages").
func CheckPackages(dir string, preload []string, flag, preloadFlag string) error {
	if dir == "" {
		if len(preload) > 0 {
			return fmt.Errorf("%s %s: there is no package layer to preload from; give %s DIR too", preloadFlag, strings.Join(preload, ","), flag)
		}
		return nil
	}
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%s %s: give an absolute path", flag, dir)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s %s: %v; give a folder of installed pure-Python packages (what pip install --target DIR leaves, or /usr/lib/python3/dist-packages)", flag, dir, unwrapPath(err))
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s %s: not a folder; give a folder of installed pure-Python packages (what pip install --target DIR leaves, or /usr/lib/python3/dist-packages)", flag, dir)
	}
	for _, name := range preload {
		if !moduleName.MatchString(name) {
			return fmt.Errorf("%s %q: not a module name; give names such as sympy or networkx.algorithms, separated by commas", preloadFlag, name)
		}
		top, _, _ := strings.Cut(name, ".")
		if !inLayer(dir, top) {
			return fmt.Errorf("%s %s: the package layer %s has no %s/ folder or %s.py; give packages installed there", preloadFlag, name, dir, top, top)
		}
	}
	return nil
}

// inLayer reports whether dir holds the top-level package or module top.
func inLayer(dir, top string) bool {
	if fi, err := os.Stat(filepath.Join(dir, top)); err == nil && fi.IsDir() {
		return true
	}
	fi, err := os.Stat(filepath.Join(dir, top+".py"))
	return err == nil && fi.Mode().IsRegular()
}

func unwrapPath(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

// openLayer opens cfg's package layer, or returns nil when there is none.
func openLayer(cfg Config) (*packageLayer, error) {
	if err := CheckPackages(cfg.Packages, cfg.Preload, "Config.Packages", "Config.Preload"); err != nil {
		return nil, fmt.Errorf("python: %w", err)
	}
	if cfg.Packages == "" {
		return nil, nil
	}
	dir := filepath.Clean(cfg.Packages)
	key, err := layerKey(dir, cfg.Preload)
	if err != nil {
		return nil, err
	}
	rofs, err := wasm.NewReadOnlyFS(dir)
	if err != nil {
		return nil, fmt.Errorf("python: package layer: %w", err)
	}
	return &packageLayer{dir: dir, preload: append([]string(nil), cfg.Preload...), fs: rofs, key: key}, nil
}

// layerKey is the identity of a package layer for the template's cache
// key: its guest path, the preload list, and every entry's path, type,
// size, mode, modification time and (for a symlink) target. A layer whose
// files change (a package upgraded, a file edited) gets a new template;
// the content itself is not read, so a change that keeps size and time
// (rare outside of deliberate forgery, which needs write access to the
// layer) goes unnoticed.
func layerKey(dir string, preload []string) ([]byte, error) {
	h := sha256.New()
	fmt.Fprintf(h, "wasmeval package layer v1\x00%s\x00%s\x00", PackagesPath, strings.Join(preload, ","))
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n++; n > maxLayerEntries {
			return fmt.Errorf("more than %d files and folders; give a folder of installed packages only", maxLayerEntries)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		var b []byte
		b = binary.LittleEndian.AppendUint32(b, uint32(info.Mode()))
		b = binary.LittleEndian.AppendUint64(b, uint64(info.Size()))
		b = binary.LittleEndian.AppendUint64(b, uint64(info.ModTime().UnixNano()))
		h.Write(b)
		h.Write([]byte(rel + "\x00"))
		if info.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			h.Write([]byte(target + "\x00"))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("python: package layer %s: %w", dir, err)
	}
	return h.Sum(nil), nil
}

// install runs in the template, before its snapshot: the layer goes on
// sys.path, the finder that explains C extensions is set up, and the
// preload list is imported (see prelude/python/_wasmeval_packages.py).
func (l *packageLayer) install(ctx context.Context, inst *Instance, log *strings.Builder) error {
	msg, _ := json.Marshal(map[string]any{"op": "packages", "path": PackagesPath, "preload": l.preload})
	rc, err := inst.call(ctx, inst.fnControl, msg)
	switch {
	case err != nil:
		return fmt.Errorf("python: package layer %s: %s: %s", l.dir, trapText(err), log.String())
	case rc != 0:
		return &PreloadError{Dir: l.dir, Message: strings.TrimSpace(log.String())}
	}
	return nil
}

// PreloadError is New's error when a package of Config.Preload does not
// import in the template.
type PreloadError struct {
	Dir     string // the package layer
	Message string // what failed, as the guest reported it
}

func (e *PreloadError) Error() string {
	return fmt.Sprintf("python: package layer %s: %s", e.Dir, e.Message)
}

func (l *packageLayer) close() {
	if l != nil {
		l.fs.Close()
	}
}

// fitsLimit says why an instance with opts cannot start from snap: its
// memory limit is below the snapshot's size (a template that preloaded
// large packages is larger than the interpreter alone).
func (r *Runtime) fitsLimit(opts runtimes.InstanceOptions, snap *wasm.Snapshot) error {
	limit := int64(DefaultMemoryLimit)
	if opts.MemoryLimitBytes > 0 {
		limit = opts.MemoryLimitBytes
	}
	if int64(snap.Size()) <= limit {
		return nil
	}
	what := "the interpreter takes"
	if r.pkgs != nil && len(r.pkgs.preload) > 0 {
		what = "the interpreter and its preloaded packages (" + strings.Join(r.pkgs.preload, ", ") + ") take"
	}
	return fmt.Errorf("python: the session's memory limit, %d MiB, is below the %d MiB %s at start; "+
		"raise the limit (--memory-limit, SessionOptions.MemoryLimitBytes) or preload less",
		limit>>20, (int64(snap.Size())+(1<<20)-1)>>20, what)
}

// WithLayer returns a Runtime whose instances see the package layer dir
// (an absolute path; "" for none) with preload imported into its template,
// sharing r's compiled module: a session may name a layer of its own
// (sandbox.SessionOptions.Packages) without compiling CPython again. Its
// template is made once (seconds, with a large preload list) and cached
// under the same key New gives that layer, so a later process, or New
// with the same Config.Packages and Config.Preload, reuses it. A package
// of preload that does not import makes a *PreloadError.
//
// Close the returned Runtime before r: r's Close ends the module both
// use. The returned Runtime's Close leaves r as it is.
func (r *Runtime) WithLayer(ctx context.Context, dir string, preload []string) (*Runtime, error) {
	base := r
	if r.base != nil {
		base = r.base
	}
	pkgs, err := openLayer(Config{Packages: dir, Preload: preload})
	if err != nil {
		return nil, err
	}
	lr := &Runtime{
		rt:       base.rt,
		compiled: base.compiled,
		data:     base.data,
		files:    base.files,
		pkgs:     pkgs,
		cache:    base.cache,
		baseKey:  base.baseKey,
		base:     base,
	}
	key := base.baseKey
	if pkgs != nil {
		key = templateKey([]byte(key), pkgs.key)
	}
	if lr.loadTemplate(lr.cache, key) {
		return lr, nil
	}
	if err := lr.makeTemplate(ctx); err != nil {
		pkgs.close()
		return nil, err
	}
	lr.saveTemplate(lr.cache, key)
	return lr, nil
}
