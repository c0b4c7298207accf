package jupyter

import (
	"github.com/wasmeval/wasmeval/hostcalls"
	kernel "github.com/wasmeval/wasmeval/jupyter"
)

var _ hostcalls.RootOwnerUser = (*instance)(nil)

// UseRootOwner takes the session's RootOwner: when a local kernel runs as
// another user than wasmeval (wasmeval runs as root), what the host
// creates in the root from then on is given to that user, so that the
// kernel can edit the files write() and the files API make, not only
// replace them.
func (i *instance) UseRootOwner(o *hostcalls.RootOwner) {
	i.mu.Lock()
	i.owner = o
	i.mu.Unlock()
}

// noteUser tells the session's RootOwner the user k runs as. It stays set
// after the kernel goes: the next one, started for the same root, runs as
// the same user.
func (i *instance) noteUser(k kernel.Kernel) {
	i.mu.Lock()
	o := i.owner
	i.mu.Unlock()
	u, ok := k.(interface {
		User() (uid, gid int, ok bool)
	})
	if o == nil || !ok {
		return
	}
	if uid, gid, ok := u.User(); ok {
		o.Set(uid, gid)
	}
}
