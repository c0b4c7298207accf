package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/store"
)

// storeFlags is serve's --store URL: where sessions are persisted, so
// that they outlive the process (sandbox.ManagerOptions.Store).
type storeFlags struct {
	url     string
	journal journalSize // --js-journal: ManagerOptions.JSJournalBytes
}

// journalSize is --js-journal: a byteSize that knows whether it was given,
// since its 0 (none) is not the option's 0 (the default).
type journalSize struct {
	byteSize
	set bool
}

func (j *journalSize) Set(s string) error {
	j.set = true
	return j.byteSize.Set(s)
}

const storeUsage = `  --store URL
        persist every session (its Python state, files, outputs) after each
        eval, before the answer, so sessions survive a restart: dir:///path
        keeps them in a folder (this process only), each save synced to
        disk; dir:///path?sync=none skips the syncs (faster; a killed
        process loses nothing, a machine crash may lose recent saves). With
        --workspace the default is dir://WORKSPACE/.store; without one, no
        store. "none" keeps none. JavaScript state is rebuilt at a
        session's next JavaScript cell by replaying a journal of its
        JavaScript cells and their inputs; when it cannot be (the journal
        passed its cap, a cell was stopped, the replay diverged), that
        cell says its JavaScript state was reset, and why
  --js-journal SIZE
        the cap of each stored session's JavaScript journal (its cells,
        their inputs, the files they found; compressed), like 64MiB;
        default 16MiB. 0 or none keeps no journal: a load or a move then
        resets JavaScript state, saying so
`

func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "store", "", "")
	fs.Var(&f.journal, "js-journal", "")
}

// apply sets the journal's cap in mo.
func (f *storeFlags) apply(mo *sandbox.ManagerOptions) {
	mo.JSJournalBytes = f.journal.n
	if f.journal.set && f.journal.n == 0 {
		mo.JSJournalBytes = -1 // 0 says none; the option's zero is the default
	}
}

// storeURL is the store to open for workspace: --store, or the default
// next to the workspace's session folders; "" for none.
func (f *storeFlags) storeURL(workspace string) (string, error) {
	switch {
	case f.url == "none":
		return "", nil
	case f.url != "":
		return f.url, nil
	case workspace == "":
		return "", nil
	}
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return "", fmt.Errorf("--workspace %q: %w", workspace, err)
	}
	return "dir://" + filepath.ToSlash(filepath.Join(abs, ".store")), nil
}

// open opens the store for cmd (nil for none), writing a failure to
// stderr.
func (f *storeFlags) open(cmd, workspace string, stderr io.Writer) (store.Store, int) {
	u, err := f.storeURL(workspace)
	if err == nil && u != "" {
		var st store.Store
		if st, err = store.Open(u); err == nil {
			return st, exitOK
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "wasmeval %s: --store: %v\n", cmd, err)
		return nil, exitInvalid
	}
	return nil, exitOK
}
