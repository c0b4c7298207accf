package js

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"
)

// Packages: a bare specifier (`lodash`, `lodash/fp`, `@scope/pkg/sub`) is
// looked up as Node looks it up, in node_modules folders, from the requiring
// file's directory up to the session root and never above it:
//
//   - package.json "exports" decides when present: a string, a subpath map
//     ("./sub", with one `*` pattern allowed), conditions (in their order,
//     the first one that matches: "node", then "require" or "import", then
//     "default"), and arrays of fallbacks; a subpath it does not list fails
//     with ERR_PACKAGE_PATH_NOT_EXPORTED.
//   - otherwise the subpath is a file or directory of the package, and the
//     package itself is its "main" file or index.js.
//   - `#name` specifiers use the "imports" field of the nearest package.json.
//
// Every file is read through the session's os.Root, so a package cannot
// reach outside the root any more than a cell can.

var (
	requireConditions = []string{"node", "require", "default"}
	importConditions  = []string{"node", "import", "default"}
)

// maxPackageJSON caps the package.json files resolution reads.
const maxPackageJSON = 4 << 20

// jsonMember is a member of a JSON object, in the order of the text: export
// conditions are tried in that order.
type jsonMember struct {
	key   string
	value any
}

// maxJSONDepth bounds the nesting orderedJSON follows: a package.json is
// the guest's to write, and the decoder recurses in Go.
const maxJSONDepth = 200

var errJSONDepth = errors.New("nested too deeply")

// orderedJSON decodes a JSON value with objects as []jsonMember.
func orderedJSON(dec *json.Decoder) (any, error) {
	return orderedJSONDepth(dec, 0)
}

func orderedJSONDepth(dec *json.Decoder, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, errJSONDepth
	}
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch d := t.(type) {
	case json.Delim:
		switch d {
		case '{':
			var obj []jsonMember
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := k.(string)
				v, err := orderedJSONDepth(dec, depth+1)
				if err != nil {
					return nil, err
				}
				obj = append(obj, jsonMember{key, v})
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			if obj == nil {
				obj = []jsonMember{}
			}
			return obj, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := orderedJSONDepth(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		}
	}
	return t, nil
}

func member(obj []jsonMember, key string) (any, bool) {
	for _, m := range obj {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// packageFile is a parsed package.json and the stat it was read with.
type packageFile struct {
	obj     []jsonMember
	modTime time.Time
	size    int64
}

// packageJSON reads dir/package.json (root-relative); nil when there is
// none or it is not a JSON object. It is parsed again only when its size
// or modification time changed.
func (in *instance) packageJSON(dir string) []jsonMember {
	p := path.Join(dir, "package.json")
	st, err := in.root.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	if c, ok := in.node.packages[p]; ok && c.modTime.Equal(st.ModTime()) && c.size == st.Size() {
		return c.obj
	}
	f, err := in.root.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPackageJSON))
	if err != nil {
		return nil
	}
	v, _ := orderedJSON(json.NewDecoder(bytes.NewReader(data)))
	obj, _ := v.([]jsonMember)
	if in.node.packages == nil {
		in.node.packages = map[string]packageFile{}
	}
	in.node.packages[p] = packageFile{obj: obj, modTime: st.ModTime(), size: st.Size()}
	return obj
}

// packageMain returns the "main" of dir/package.json, or "".
func (in *instance) packageMain(dir string) string {
	pkg := in.packageJSON(dir)
	if pkg == nil {
		return ""
	}
	m, _ := member(pkg, "main")
	s, _ := m.(string)
	return s
}

// splitPackage splits a bare specifier into the package's name and the
// subpath after it ("." for none).
func splitPackage(spec string) (name, sub string, ok bool) {
	parts := strings.SplitN(spec, "/", 3)
	n := 1
	if strings.HasPrefix(spec, "@") {
		if len(parts) < 2 || parts[1] == "" {
			return "", "", false
		}
		n = 2
	}
	name = strings.Join(parts[:min(n, len(parts))], "/")
	if name == "" || strings.HasPrefix(name, ".") || strings.ContainsAny(name, "\\%") {
		return "", "", false
	}
	sub = "."
	if rest := strings.TrimPrefix(spec, name); rest != "" {
		sub = "." + rest
	}
	return name, sub, true
}

// resolvePackage resolves a bare or `#` specifier from dir (absolute).
func (in *instance) resolvePackage(dir, spec string, conds []string) (abs, rel string) {
	from, ok := in.relToRoot(path.Clean(dir))
	if !ok {
		in.requireError("MODULE_NOT_FOUND", "Cannot find module '%s': %s is outside the session root", spec, dir)
	}
	if strings.HasPrefix(spec, "#") {
		return in.resolveImports(from, spec, conds)
	}
	name, sub, ok := splitPackage(spec)
	if !ok {
		in.requireError("MODULE_NOT_FOUND", "Cannot find module '%s': not a valid package name", spec)
	}
	for d := from; ; d = path.Dir(d) {
		if path.Base(d) != "node_modules" {
			pkgDir := path.Join(d, "node_modules", name)
			if st, err := in.root.Stat(pkgDir); err == nil && st.IsDir() {
				return in.resolveInPackage(spec, pkgDir, sub, conds)
			}
		}
		if d == "." {
			break
		}
	}
	in.requireError("MODULE_NOT_FOUND",
		"Cannot find module '%s': no built-in module has that name, and no node_modules/%s was found from %s up to the session root %s "+
			"(install pure-JavaScript npm packages into the root first, e.g. `npm install %s` in %s)",
		spec, name, dir, in.rootPath, name, in.rootPath)
	return "", ""
}

// resolveInPackage resolves subpath sub ("." or "./x") of the package in
// pkgDir (root-relative).
func (in *instance) resolveInPackage(spec, pkgDir, sub string, conds []string) (abs, rel string) {
	pkg := in.packageJSON(pkgDir)
	if exports, ok := member(pkg, "exports"); ok && exports != nil {
		target, found := exportsTarget(exports, sub, conds)
		if !found {
			what := "subpath '" + sub + "' is"
			if sub == "." {
				what = "main entry point is"
			}
			in.requireError("ERR_PACKAGE_PATH_NOT_EXPORTED", "Cannot find module '%s': the package's %s not defined by \"exports\" in %s/package.json (conditions tried: %s)",
				spec, what, path.Join(in.rootPath, pkgDir), strings.Join(conds, ", "))
		}
		return in.packageFile(spec, pkgDir, target)
	}
	if r, found := in.resolveFile(spec, path.Join(pkgDir, sub)); found {
		return path.Join(in.rootPath, r), r
	}
	in.requireError("MODULE_NOT_FOUND", "Cannot find module '%s' (the package is %s, but it has no such file)", spec, path.Join(in.rootPath, pkgDir))
	return "", ""
}

// packageFile checks an exports or imports target ("./dist/x.js") and
// returns the file.
func (in *instance) packageFile(spec, pkgDir, target string) (abs, rel string) {
	r := path.Join(pkgDir, target)
	if !strings.HasPrefix(target, "./") || !(r == pkgDir || strings.HasPrefix(r, pkgDir+"/")) {
		in.requireError("ERR_INVALID_PACKAGE_TARGET", "Cannot find module '%s': the package's target %q does not stay inside %s",
			spec, target, path.Join(in.rootPath, pkgDir))
	}
	st, err := in.root.Stat(r)
	if err != nil || !st.Mode().IsRegular() {
		why := "it is not a file"
		if err != nil {
			why = "no such file"
			if !errors.Is(err, fs.ErrNotExist) {
				why = err.Error()
			}
		}
		in.requireError("MODULE_NOT_FOUND", "Cannot find module '%s': the package names %s: %s", spec, path.Join(in.rootPath, r), why)
	}
	return path.Join(in.rootPath, r), r
}

// resolveImports resolves a `#name` specifier with the "imports" field of
// the nearest package.json above from.
func (in *instance) resolveImports(from, spec string, conds []string) (abs, rel string) {
	for d := from; ; d = path.Dir(d) {
		if pkg := in.packageJSON(d); pkg != nil {
			imports, _ := member(pkg, "imports")
			if target, ok := subpathTarget(imports, spec, conds); ok {
				if !strings.HasPrefix(target, "./") {
					// A package name: resolved from the package's folder.
					return in.resolvePackage(path.Join(in.rootPath, d), target, conds)
				}
				return in.packageFile(spec, d, target)
			}
			in.requireError("ERR_PACKAGE_IMPORT_NOT_DEFINED", "Cannot find module '%s': it is not defined by \"imports\" in %s/package.json",
				spec, path.Join(in.rootPath, d))
		}
		if d == "." {
			break
		}
	}
	in.requireError("ERR_PACKAGE_IMPORT_NOT_DEFINED", "Cannot find module '%s': no package.json above it defines \"imports\"", spec)
	return "", ""
}

// exportsTarget returns the target of subpath sub in a package's "exports".
func exportsTarget(exports any, sub string, conds []string) (string, bool) {
	if obj, ok := exports.([]jsonMember); ok && len(obj) > 0 && strings.HasPrefix(obj[0].key, ".") {
		return subpathTarget(obj, sub, conds)
	}
	// Sugar: a string, array or conditions object is the "." export.
	if sub != "." {
		return "", false
	}
	return conditionTarget(exports, conds, "")
}

// subpathTarget looks key up in a subpath map ("./x", "./x/*", "#x"): an
// exact key first, then the pattern with the longest prefix.
func subpathTarget(m any, key string, conds []string) (string, bool) {
	obj, ok := m.([]jsonMember)
	if !ok {
		return "", false
	}
	if v, ok := member(obj, key); ok && !strings.Contains(key, "*") {
		return conditionTarget(v, conds, "")
	}
	best, bestLen := -1, -1
	var star string
	for i, mb := range obj {
		pre, post, ok := strings.Cut(mb.key, "*")
		if !ok || !strings.HasPrefix(key, pre) || !strings.HasSuffix(key, post) || len(key) < len(pre)+len(post) {
			continue
		}
		if len(pre) > bestLen {
			best, bestLen = i, len(pre)
			star = key[len(pre) : len(key)-len(post)]
		}
	}
	if best < 0 {
		return "", false
	}
	return conditionTarget(obj[best].value, conds, star)
}

// conditionTarget resolves a target value: a string (with `*` replaced by
// star), an array of fallbacks, or a conditions object.
func conditionTarget(v any, conds []string, star string) (string, bool) {
	switch t := v.(type) {
	case string:
		return strings.ReplaceAll(t, "*", star), true
	case []any:
		for _, x := range t {
			if s, ok := conditionTarget(x, conds, star); ok {
				return s, true
			}
		}
	case []jsonMember:
		for _, m := range t {
			for _, c := range conds {
				if m.key == c {
					if s, ok := conditionTarget(m.value, conds, star); ok {
						return s, true
					}
				}
			}
		}
	}
	return "", false
}
