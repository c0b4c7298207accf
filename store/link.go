package store

import (
	"fmt"
	"strings"
)

// CheckLinkTarget reports whether a symbolic link with this target is
// safe for the host to follow, not only for the guest: relative, and
// every part a plain name (no empty, "." or ".." part), so it leads down
// from its own folder. When every link in a root follows this rule, no
// chain of them leads out of it, whoever follows them (fork, the files
// API, tar, an operator's tools). It is the rule the guest's filesystem
// stores links by and that fork, persistence and replay hold every link
// to.
func CheckLinkTarget(target string) error {
	ok := target != "" && !strings.HasPrefix(target, "/") && !strings.ContainsRune(target, 0)
	for part := range strings.SplitSeq(target, "/") {
		if part == "" || part == "." || part == ".." {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("store: link target %q does not lead down from the link's folder: a link must be relative, made of plain names (no '..', '.', empty or absolute parts)", target)
	}
	return nil
}
