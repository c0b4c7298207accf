/* Force-included when compiling sqlite3.c for wasm32-wasi.
 *
 * WASI has no advisory locks, no fchmod/fchown and no user ids. The sandbox
 * gives each database one process, and the default VFS is "unix-none" (no
 * locking), so these stubs are declared only so that the other unix VFS
 * variants compile; the lock calls fail with ENOTSUP if ever reached. */
#ifndef WASMEVAL_SQLITE_WASI_COMPAT_H
#define WASMEVAL_SQLITE_WASI_COMPAT_H
#include <errno.h>
#include <sys/types.h>
#include <fcntl.h>

#define F_GETLK 5
#define F_SETLK 6
#define F_SETLKW 7
#define F_RDLCK 0
#define F_WRLCK 1
#define F_UNLCK 2


static inline int fchmod(int fd, mode_t mode) { (void)fd; (void)mode; return 0; }
static inline int fchown(int fd, uid_t u, gid_t g) { (void)fd; (void)u; (void)g; return 0; }
static inline uid_t geteuid(void) { return 0; }
#endif
