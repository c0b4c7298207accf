package sandbox

import (
	"context"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/js"
	"github.com/wasmeval/wasmeval/runtimes/python"
)

// newRuntime makes a language's runtime, keyed by the request's language
// tag. Tests substitute fakes.
var newRuntime = map[string]func(ctx context.Context, o Options) (runtimes.Runtime, error){
	"py": func(ctx context.Context, o Options) (runtimes.Runtime, error) {
		rt, err := python.New(ctx, python.Config{CacheDir: o.CacheDir, Packages: o.Packages, Preload: o.Preload})
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return rt, nil
	},
	"js": func(ctx context.Context, o Options) (runtimes.Runtime, error) {
		return js.New(), nil
	},
}
