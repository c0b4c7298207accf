package wasm

import (
	"context"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// WASI preview1 errno values (the "errno" enum of wasi_snapshot_preview1),
// as wazero's WASI functions return them.
const (
	wasiErrnoMfile   = 33
	wasiErrnoNospc   = 51
	wasiErrnoNotsock = 57
	wasiErrnoRange   = 68
)

// InstantiateWASI instantiates wazero's wasi_snapshot_preview1 in rt, for
// guests whose filesystem is a GuestFS. It differs from
// wasi_snapshot_preview1.Instantiate in one way: the file functions that
// can grow the session root answer ENOSPC where GuestFS refused a change
// for the disk quota (GuestFS says ENOTSOCK, as wazero has no ENOSPC), and
// path_open answers EMFILE where GuestFS refused an open for its cap on
// open files (GuestFS says ERANGE, as wazero has no EMFILE).
func InstantiateWASI(ctx context.Context, rt wazero.Runtime) error {
	ctx = experimental.WithFunctionListenerFactory(ctx, nospcListenerFactory{})
	_, err := wasi_snapshot_preview1.Instantiate(ctx, rt)
	return err
}

// quotaFuncs are the WASI functions through which a GuestFS change may
// pass the disk quota.
var quotaFuncs = map[string]bool{
	"fd_write":              true,
	"fd_pwrite":             true,
	"fd_filestat_set_size":  true,
	"fd_allocate":           true,
	"fd_close":              true,
	"path_open":             true,
	"path_create_directory": true,
	"path_symlink":          true,
	"path_link":             true,
	"path_rename":           true,
}

type nospcListenerFactory struct{}

// NewFunctionListener listens to quotaFuncs only; the others run as they are.
func (nospcListenerFactory) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	if quotaFuncs[def.Name()] {
		return nospcListener{}
	}
	return nil
}

// nospcListener rewrites a file function's ENOTSOCK result to ENOSPC, and
// path_open's ERANGE to EMFILE.
type nospcListener struct{}

func (nospcListener) Before(context.Context, api.Module, api.FunctionDefinition, []uint64, experimental.StackIterator) {
}

// After changes the errno the function returns: results is a view of the
// guest's stack, which the engine hands back to the guest after this. (The
// compiler engine passes the whole call frame, as long as the parameters;
// the one result, the errno, is first either way.)
func (nospcListener) After(_ context.Context, _ api.Module, def api.FunctionDefinition, results []uint64) {
	switch {
	case len(results) == 0:
	case uint32(results[0]) == wasiErrnoNotsock:
		results[0] = wasiErrnoNospc
	case uint32(results[0]) == wasiErrnoRange && def.Name() == "path_open":
		results[0] = wasiErrnoMfile
	}
}

func (nospcListener) Abort(context.Context, api.Module, api.FunctionDefinition, error) {}
