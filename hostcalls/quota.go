package hostcalls

import (
	"github.com/wasmeval/wasmeval/wasm"
)

// Default disk quota of a session root: what DispatcherOptions and
// sandbox.SessionOptions give when their quota fields are zero.
const (
	DefaultDiskQuotaBytes = wasm.DefaultDiskQuotaBytes // 1 GiB
	DefaultDiskQuotaFiles = wasm.DefaultDiskQuotaFiles
)

// ErrDiskQuota is what every refusal for the disk quota matches with
// errors.Is. The error itself is a *QuotaError.
var ErrDiskQuota = wasm.ErrDiskQuota

// QuotaError is a change of the session root that the disk quota refused.
type QuotaError = wasm.QuotaError

// DiskQuota bounds what one session stores in its root: bytes and files.
// One DiskQuota serves a session's guest filesystem (wasm.GuestFS) and its
// file helpers (FS), which both record every change they make through it
// (the wasm.DiskQuota interface, where the rule of what counts lives, once:
// see wasm.RootQuota).
type DiskQuota = wasm.RootQuota

// NewDiskQuota returns the quota of the session root dir with caps of
// maxBytes and maxFiles. Zero means the default (DefaultDiskQuotaBytes,
// DefaultDiskQuotaFiles), a negative value no cap. See wasm.NewRootQuota.
func NewDiskQuota(dir string, maxBytes, maxFiles int64) (*DiskQuota, error) {
	return wasm.NewRootQuota(dir, maxBytes, maxFiles)
}

// sizeText writes n bytes for people: "512 bytes", "3.5 MiB", "1 GiB".
func sizeText(n int64) string { return wasm.SizeText(n) }
