package main

import (
	"flag"
	"strings"

	"github.com/wasmeval/wasmeval/profiles"
)

const toolsUsage = `  --tools LIST
        the tool profiles served, comma-separated (default: all):
          eval              the eval tool: cells with a language
          evaluate_python   the asteval tool's shape: {code, globals, reads,
                            writes} in a fresh namespace of the session
          code_interpreter  run_code, create_code_context,
                            run_in_code_context, delete_code_context
        (python, the Jupyter-backed tool's shape, is not available yet)
`

// toolsFlag is --tools of mcp and serve: the profiles served.
type toolsFlag struct {
	set profiles.Set
}

func (f *toolsFlag) register(fs *flag.FlagSet) { fs.Var(f, "tools", "") }

func (f *toolsFlag) String() string { return f.set.String() }

func (f *toolsFlag) Set(v string) error {
	s, err := profiles.ParseTools(v)
	if err != nil {
		// The flag package says "invalid value ... for flag -tools: ".
		return errorString(strings.TrimPrefix(err.Error(), "--tools: "))
	}
	f.set = s
	return nil
}

type errorString string

func (e errorString) Error() string { return string(e) }
