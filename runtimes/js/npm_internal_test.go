package js

import (
	"bytes"
	"encoding/json"
	"sort"
	"testing"
)

func parseExports(t testing.TB, text string) any {
	v, err := orderedJSON(json.NewDecoder(bytes.NewReader([]byte(text))))
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return v
}

func TestExportsTarget(t *testing.T) {
	tests := []struct {
		name, exports, sub string
		conds              []string
		want               string
		found              bool
	}{
		{"string", `"./main.js"`, ".", requireConditions, "./main.js", true},
		{"string, subpath", `"./main.js"`, "./x", requireConditions, "", false},
		{"conditions in order", `{"import": "./m.mjs", "default": "./d.js", "require": "./r.js"}`, ".", requireConditions, "./d.js", true},
		{"require", `{"import": "./m.mjs", "require": "./r.js"}`, ".", requireConditions, "./r.js", true},
		{"import", `{"import": "./m.mjs", "require": "./r.js"}`, ".", importConditions, "./m.mjs", true},
		{"nested", `{".": {"node": {"import": "./n.mjs"}, "default": "./d.js"}}`, ".", importConditions, "./n.mjs", true},
		{"nested falls through", `{".": {"node": {"import": "./n.mjs"}, "default": "./d.js"}}`, ".", requireConditions, "./d.js", true},
		{"no match", `{"browser": "./b.js"}`, ".", requireConditions, "", false},
		{"subpath", `{".": "./i.js", "./sub": "./s.js"}`, "./sub", requireConditions, "./s.js", true},
		{"pattern", `{"./f/*": "./lib/*.js"}`, "./f/a/b", requireConditions, "./lib/a/b.js", true},
		{"longest pattern", `{"./*": "./x/*", "./f/*": "./lib/*.js"}`, "./f/a", requireConditions, "./lib/a.js", true},
		{"null blocks", `{"./f/*": "./lib/*.js", "./f/private": null}`, "./f/private", requireConditions, "", false},
		{"array fallbacks", `{".": [{"worker": "./w.js"}, "./d.js"]}`, ".", requireConditions, "./d.js", true},
		{"unlisted", `{".": "./i.js"}`, "./other", requireConditions, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := exportsTarget(parseExports(t, tt.exports), tt.sub, tt.conds)
			if got != tt.want || found != tt.found {
				t.Errorf("exportsTarget(%s, %q) = %q, %v; want %q, %v", tt.exports, tt.sub, got, found, tt.want, tt.found)
			}
		})
	}
}

func TestSplitPackage(t *testing.T) {
	tests := []struct{ spec, name, sub string }{
		{"lodash", "lodash", "."},
		{"lodash/fp", "lodash", "./fp"},
		{"@scope/pkg", "@scope/pkg", "."},
		{"@scope/pkg/a/b.js", "@scope/pkg", "./a/b.js"},
		{"@scope", "", ""},
		{".hidden", "", ""},
	}
	for _, tt := range tests {
		name, sub, _ := splitPackage(tt.spec)
		if name != tt.name || sub != tt.sub {
			t.Errorf("splitPackage(%q) = %q, %q; want %q, %q", tt.spec, name, sub, tt.name, tt.sub)
		}
	}
}

func TestOrderedJSONDepth(t *testing.T) {
	deep := bytes.Repeat([]byte("["), 1<<20)
	if _, err := orderedJSON(json.NewDecoder(bytes.NewReader(deep))); err != errJSONDepth {
		t.Errorf("a deep package.json: err = %v, want %v", err, errJSONDepth)
	}
}

// FuzzPackageExports: a package.json in the root is the guest's to write;
// no exports or imports field, however odd, may panic the host.
func FuzzPackageExports(f *testing.F) {
	for _, s := range []string{`"./a.js"`, `{".": {"import": "./a", "require": ["./b", null]}}`, `{"./*": "./*.js", "./x/*/y": "./z/*"}`, `[[[{}]]]`, `{"#a": 1}`, `{`} {
		f.Add(s, "./x/y")
	}
	f.Fuzz(func(t *testing.T, text, sub string) {
		v, err := orderedJSON(json.NewDecoder(bytes.NewReader([]byte(text))))
		if err != nil {
			return
		}
		exportsTarget(v, sub, importConditions)
		subpathTarget(v, "#"+sub, requireConditions)
	})
}

// builtinModules is searched with sort.SearchStrings.
func TestBuiltinModulesSorted(t *testing.T) {
	if !sort.StringsAreSorted(builtinModules) {
		t.Errorf("builtinModules is not sorted: %v", builtinModules)
	}
	for _, name := range builtinModules {
		if !isBuiltin(name) {
			t.Errorf("isBuiltin(%q) = false", name)
		}
	}
}
