package main

import (
	"flag"
	"strings"

	"github.com/wasmeval/wasmeval/profiles"
)

const toolsUsage = `  --tools LIST
        the tool profiles served, comma-separated (default: all):
          eval              the eval tool: cells with a language
          python            the Jupyter-backed python tool's shape: {cells:
                            [{code, title}], timeout, cwd, reset} in the
                            session's Python
          evaluate_python   the asteval tool's shape: {code, globals, reads,
                            writes} in a fresh namespace of the session
          code_interpreter  run_code, create_code_context,
                            run_in_code_context, delete_code_context (the
                            CodeInterpreter interface)
` + kernelModeUsage

const kernelModeUsage = `  --kernel-mode MODE
        the python profile's kernel mode for calls that name none (a call's
        "kernelMode" overrides it): session (default) runs every call in the
        session's interpreter, state kept; per-call runs each call in a
        fresh interpreter on the session's files, dropped after the call
`

// toolsFlag is --tools of mcp and serve (the profiles served) and
// --kernel-mode (the python profile's default kernel mode).
type toolsFlag struct {
	set        profiles.Set
	kernelMode kernelModeFlag
}

func (f *toolsFlag) register(fs *flag.FlagSet) {
	fs.Var(f, "tools", "")
	f.kernelMode.register(fs)
}

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

// kernelModeFlag is --kernel-mode.
type kernelModeFlag string

func (f *kernelModeFlag) register(fs *flag.FlagSet) { fs.Var(f, "kernel-mode", "") }

func (f *kernelModeFlag) String() string { return string(*f) }

func (f *kernelModeFlag) Set(v string) error {
	if err := profiles.CheckKernelMode(v); err != nil {
		return errorString(strings.TrimPrefix(err.Error(), "--kernel-mode: "))
	}
	*f = kernelModeFlag(v)
	return nil
}

type errorString string

func (e errorString) Error() string { return string(e) }
