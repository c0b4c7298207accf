package main

import (
	"context"
	"flag"
	"path/filepath"
	"strings"

	"github.com/wasmeval/wasmeval/sandbox"
)

// packageFlags are --packages and --preload, which eval, serve and mcp
// share: the Python package layer (sandbox.Options.Packages, .Preload).
type packageFlags struct {
	dir     string
	preload preloadList
	engine  engineFlag // --engine (engineflag.go)
}

const packageUsage = `  --packages DIR
        a folder of installed pure-Python packages (what pip install
        --target DIR leaves, or Debian's /usr/lib/python3/dist-packages)
        that every Python session imports from, read-only, after its own
        root. A package that needs a C extension (numpy, pandas, ...) fails
        at import with an error naming the extension
  --preload NAME,...
        packages of --packages imported into the snapshot every Python
        session starts from, so a new session has them imported at no cost
        (repeatable; the snapshot is made again when the folder changes)
` + engineUsage

// preloadList is --preload: names separated by commas, over one or more
// flags.
type preloadList []string

func (p *preloadList) String() string { return strings.Join(*p, ",") }

func (p *preloadList) Set(v string) error {
	for name := range strings.SplitSeq(v, ",") {
		if name = strings.TrimSpace(name); name != "" {
			*p = append(*p, name)
		}
	}
	return nil
}

func (p *packageFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.dir, "packages", "", "")
	fs.Var(&p.preload, "preload", "")
	p.engine.register(fs)
}

// check says what is wrong with the flags, if anything, and makes the
// folder absolute.
func (p *packageFlags) check() error {
	if p.dir != "" {
		if abs, err := filepath.Abs(p.dir); err == nil {
			p.dir = abs
		}
	}
	return sandbox.CheckPackages(p.dir, p.preload, "--packages", "--preload")
}

// apply sets the package layer on o.
func (p *packageFlags) apply(o *sandbox.Options) {
	o.Packages = p.dir
	o.Preload = append([]string(nil), p.preload...)
	o.Engine = p.engine.name
}

// start makes the Python runtime now when there is something to preload:
// the first start imports the packages into the template (seconds), which
// would otherwise count against the first Python cell, and a package that
// does not import is an error at start-up.
func (p *packageFlags) start(ctx context.Context, sb *sandbox.Sandbox) error {
	if len(p.preload) == 0 {
		return nil
	}
	return sb.StartRuntime(ctx, "py")
}
