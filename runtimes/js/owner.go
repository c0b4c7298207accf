package js

import "github.com/wasmeval/wasmeval/hostcalls"

var _ hostcalls.RootOwnerUser = (*instance)(nil)

// UseRootOwner takes the session's RootOwner. In a session whose Python
// is a local Jupyter kernel running as another user (wasmeval runs as
// root), the files and folders the fs module creates in the root are
// given to that user, as write()'s are, so the kernel can edit them in
// place: the fs module writes through wasm.GuestFS as wasmeval's own user.
func (in *instance) UseRootOwner(o *hostcalls.RootOwner) { in.owner = o }
