package sandbox

import (
	"context"
	"fmt"
	"strings"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/js"
	"github.com/wasmeval/wasmeval/runtimes/python"
)

// newRuntime makes a language's runtime, keyed by the request's language
// tag. Tests substitute fakes.
var newRuntime = map[string]func(ctx context.Context, o Options) (runtimes.Runtime, error){
	"py": func(ctx context.Context, o Options) (runtimes.Runtime, error) {
		rt, err := python.New(ctx, python.Config{CacheDir: o.CacheDir, Packages: o.Packages, Preload: o.Preload, Engine: o.Engine})
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return rt, nil
	},
	"js": func(ctx context.Context, o Options) (runtimes.Runtime, error) {
		return js.New(), nil
	},
}

// runtimeLanguage is the runtime, and the session instance, that cells of
// a request language run on: TypeScript cells run in the JavaScript
// instance, sharing its state.
func runtimeLanguage(lang string) string {
	if lang == "ts" {
		return "js"
	}
	return lang
}

// asRuntimeCell returns the cell as its runtime takes it, with the
// context to run it under: a TypeScript cell becomes a JavaScript cell
// whose context says TypeScript (js.WithTypeScript). A JavaScript cell's
// context says JavaScript, whatever the context it came with (a cell
// nested in a TypeScript cell's agent() call, say).
func asRuntimeCell(ctx context.Context, c Cell) (context.Context, Cell) {
	switch c.Language {
	case "ts":
		c.Language = "js"
		return js.WithTypeScript(ctx, true), c
	case "js":
		return js.WithTypeScript(ctx, false), c
	}
	return ctx, c
}

// languageEnabled reports whether cells of lang may run under list, an
// Options.Languages or SessionOptions.Languages (nil enables all). "ts"
// follows "js" unless the list names it: TypeScript cells run on the
// JavaScript runtime, so enabling JavaScript enables them too, and a list
// may enable TypeScript cells alone.
func languageEnabled(list []string, lang string) bool {
	if list == nil || contains(list, lang) {
		return true
	}
	return lang == "ts" && contains(list, "js")
}

// checkLanguages validates an Options.Languages or
// SessionOptions.Languages named field.
func checkLanguages(field string, list []string) error {
	if list == nil {
		return nil
	}
	if len(list) == 0 {
		return fmt.Errorf("sandbox: %s is empty; list at least one of %s, or leave it nil for all", field, strings.Join(languages, ", "))
	}
	for _, l := range list {
		if !contains(languages, l) {
			return fmt.Errorf("sandbox: %s: unknown language %s; use %s", field, quote(l), strings.Join(languages, ", "))
		}
	}
	return nil
}

// disabledNote is the text of a cell whose language the sandbox or the
// session disables, or "" when it may run.
func (s *Session) disabledNote(lang string) string {
	if languageEnabled(s.sb.opts.Languages, lang) && languageEnabled(s.opts.Languages, lang) {
		return ""
	}
	var on []string
	for _, l := range languages {
		if languageEnabled(s.sb.opts.Languages, l) && languageEnabled(s.opts.Languages, l) {
			on = append(on, l)
		}
	}
	if len(on) == 0 {
		return fmt.Sprintf("%s cells are disabled here, and so is every other language", quote(lang))
	}
	return fmt.Sprintf("%s cells are disabled here; the enabled languages are %s", quote(lang), strings.Join(on, ", "))
}

// Languages returns the cell languages a request may name: "py" (Python),
// "js" (JavaScript) and "ts" (TypeScript), the values Options.Languages
// and SessionOptions.Languages take.
func Languages() []string { return append([]string(nil), languages...) }
