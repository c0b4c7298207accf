// Package rootlink holds the one rule for the symbolic links in a session
// root: which links the guest may make (Down), and which links found in a
// root the host may keep, copy, record and rebuild (Safe). The guest's
// filesystem (wasm.GuestFS), fork, persistence and the tape all ask it,
// so the rule cannot drift between them. It is not part of wasmeval's
// public API.
//
// # Why the host can follow these links
//
// A link's target is read by the kernel from the folder the link lies in,
// and a ".." after a name is taken from wherever that name leads at that
// moment, not from where it led when the link was judged: the guest can
// turn a folder into a link later. So Safe judges a link by its text and
// its own place only, never by what the rest of the tree holds: every '..'
// comes first, taken from the link's own folder, and no more of them than
// that folder is deep; then come plain names, which lead down whatever
// they are when followed. A link the guest makes (Down) only goes down
// from its folder; one the host keeps (Safe) goes up at most to the root
// and then down. Either way, followed from where it lies, it lands inside
// the root, and a chain of such links does too, one link at a time.
//
// That holds while a Safe link stays where it was judged: the guest may
// not rename or hard-link a link that Down refuses, nor rename a folder
// that holds one (wasm.GuestFS); fork makes each link at the path it was
// judged by, folder by folder through descriptors it opened itself, and
// persistence and the tape refuse an entry below a link (Through), which
// would be made elsewhere than its path says.
package rootlink

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// Rule says in one sentence what a link in a root may be; the errors of
// Down and Safe end with it.
const Rule = "a root's links must be relative and made of plain names, which lead down from the link's folder, after at most as many '..' parts as that folder is deep (as npm's node_modules/.bin links: ../pkg/cli.js), and must not lead to a folder that holds them"

// Down reports whether a link with this target leads down from its own
// folder: relative, one or more plain names, none empty, "." or "..", no
// NUL. It is the rule the guest makes links by. The error says why not,
// without a package prefix, for the caller to wrap.
func Down(target string) error {
	if err := relative(target); err != nil {
		return err
	}
	for part := range strings.SplitSeq(target, "/") {
		switch part {
		case "", ".":
			return errDot
		case "..":
			return fmt.Errorf("it has a '..' part, and a link the guest makes must lead down from its folder (plain names only): %s", Rule)
		}
	}
	return nil
}

// Safe reports whether a link at rel (slash-separated, relative to the
// root, at the path a walk that follows no link finds it) with this target
// is one the host may keep and follow: Down, or '..' parts first, no more
// than rel's folder is deep, then one or more plain names, not ending at
// rel itself or at a folder that holds it. Absolute targets, empty and "."
// parts, and a '..' after a name are refused. It looks at no file, so what
// it says cannot change while a walk goes on. The error says why not,
// without a package prefix, for the caller to wrap.
//
// A loop that passes through several links (a guest's link to a folder
// that a host link's target climbed out of) is not what Safe prevents: it
// keeps every link inside the root, and a host tool that follows links
// needs a loop guard anyway.
func Safe(rel, target string) error {
	if Down(target) == nil {
		return nil
	}
	if err := relative(target); err != nil {
		return err
	}
	var at []string // where the target leads, from the root
	if d := path.Dir(rel); d != "." {
		at = strings.Split(d, "/")
	}
	named := false
	for part := range strings.SplitSeq(target, "/") {
		switch {
		case part == "" || part == ".":
			return errDot
		case part == ".." && named:
			return fmt.Errorf("it climbs after a name (a '..' after a name is taken from wherever that name leads when the link is followed, which the guest can change): %s", Rule)
		case part == "..":
			if len(at) == 0 {
				return fmt.Errorf("it leads out of the root: %s", Rule)
			}
			at = at[:len(at)-1]
		default:
			at = append(at, part)
			named = true
		}
	}
	if !named {
		return fmt.Errorf("it leads to a folder that holds it: %s", Rule)
	}
	if to := strings.Join(at, "/"); rel == to || strings.HasPrefix(rel, to+"/") {
		return fmt.Errorf("it leads to a folder that holds it: %s", Rule)
	}
	return nil
}

// Through returns the first folder on rel's way (rel's parent, its
// parent's, up to the root; slash-separated, relative to the root) that
// isLink says is a link, and whether there is one. An entry made through a
// link lies elsewhere than its path says, so a link made there would be
// judged by the wrong folder: what fork, persistence and the tape rebuild
// must never be made through one.
func Through(rel string, isLink func(rel string) bool) (string, bool) {
	for i := range len(rel) {
		if rel[i] == '/' && isLink(rel[:i]) {
			return rel[:i], true
		}
	}
	return "", false
}

var errDot = fmt.Errorf("it has an empty or '.' part: %s", Rule)

// relative refuses an empty or absolute target, and a NUL.
func relative(target string) error {
	if target == "" || strings.HasPrefix(target, "/") || strings.ContainsRune(target, 0) {
		return errors.New("it is empty or absolute, and " + Rule)
	}
	return nil
}
