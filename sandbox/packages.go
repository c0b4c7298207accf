package sandbox

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/wasmeval/wasmeval/runtimes/python"
)

// ErrPackages is wrapped by New's error for an Options.Packages or
// Options.Preload that cannot be used: a folder that does not exist, is
// not a folder, or overlaps wasmeval's cache; a preload name that is not
// a module of the layer.
var ErrPackages = errors.New("sandbox: bad package layer")

// resolvePackages checks o's package layer and preload list, makes the
// layer's path absolute, and returns the protected folder a session root
// may not overlap (none without a layer): a guest that could write into
// the layer would change what every session imports.
func resolvePackages(o *Options, protected []protectedDir) ([]protectedDir, error) {
	o.Preload = slices.Clone(o.Preload)
	if o.Packages == "" {
		if err := python.CheckPackages("", o.Preload, "Options.Packages (--packages)", "Options.Preload (--preload)"); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrPackages, err)
		}
		return nil, nil
	}
	dir, err := filepath.Abs(o.Packages)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPackages, o.Packages, err)
	}
	if err := python.CheckPackages(dir, o.Preload, "Options.Packages (--packages)", "Options.Preload (--preload)"); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPackages, err)
	}
	for _, d := range protected {
		if rel := overlap(dir, d.path); rel != "" {
			return nil, fmt.Errorf("%w: the package layer (Options.Packages, --packages) %s %s %s, %s; every session could read it. "+
				"Give a folder of installed packages outside %s", ErrPackages, dir, rel, d.path, d.what, d.path)
		}
	}
	o.Packages = dir
	return []protectedDir{{
		path: dir,
		what: "the package layer every session imports from (--packages, Options.Packages)",
		fix:  "or give a package layer outside the root",
	}}, nil
}

// CheckPackages says what is wrong with a package layer and preload list
// as Options.Packages and Options.Preload would take them, naming them
// flag and preloadFlag in the error (the commands' --packages and
// --preload): a folder that does not exist or is not one, a preload name
// that is not a module name or not a package of the layer. New checks the
// same, and also that the layer does not overlap the cache.
func CheckPackages(dir string, preload []string, flag, preloadFlag string) error {
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fmt.Errorf("%s %s: %w", flag, dir, err)
		}
		dir = abs
	}
	return python.CheckPackages(dir, preload, flag, preloadFlag)
}

// StartRuntime makes the runtime of lang ("py", "js") now rather than at
// its first cell, so that a failure is an error at start-up and the first
// cell does not wait for it. With Options.Preload the Python runtime's
// first start in a cache imports the preloaded packages into its template
// (seconds for sympy); a package that does not import makes an error
// wrapping ErrPackages.
func (sb *Sandbox) StartRuntime(ctx context.Context, lang string) error {
	_, err := sb.runtime(ctx, lang)
	if pe, ok := errors.AsType[*python.PreloadError](err); ok {
		return fmt.Errorf("%w: %w", ErrPackages, pe)
	}
	return err
}
