package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/wasmeval/wasmeval/sandbox"
)

// languagesFlag is --languages on eval, serve and mcp: the cell languages
// the command runs (sandbox.Options.Languages). Unset means all.
type languagesFlag struct{ list []string }

const languagesUsage = `  --languages LIST
        the cell languages to run, comma-separated, of py, js and ts
        (default: all); a cell in another language fails with an error that
        names the enabled ones. ts (TypeScript) runs on the JavaScript
        runtime and is enabled with js unless listed itself: "py,ts" runs
        TypeScript cells but not plain JavaScript ones
`

func (l *languagesFlag) register(fs *flag.FlagSet) { fs.Var(l, "languages", "") }

func (l *languagesFlag) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(l.list, ",")
}

// Set parses a list like "py,js"; the flag package puts the flag's name
// before its error.
func (l *languagesFlag) Set(s string) error {
	valid := strings.Join(sandbox.Languages(), ", ")
	var list []string
	for _, part := range strings.Split(s, ",") {
		lang := strings.ToLower(strings.TrimSpace(part))
		switch {
		case lang == "":
			continue // "py,js," or "py,,js"
		case !slices.Contains(sandbox.Languages(), lang):
			return fmt.Errorf("unknown language %q; give a comma-separated list of %s, like py,js", strings.TrimSpace(part), valid)
		case !slices.Contains(list, lang):
			list = append(list, lang)
		}
	}
	if len(list) == 0 {
		return fmt.Errorf("no languages given; give a comma-separated list of %s, like py,js", valid)
	}
	l.list = list
	return nil
}
