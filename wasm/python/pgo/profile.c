/*
 * The part of LLVM's profile runtime that an instrumented python.wasm
 * (build.sh with PYBUILD_PGO_GENERATE) needs besides
 * compiler-rt's own files, which README.md's steps compile from Debian's
 * llvm-toolchain-14 source (Debian ships no libclang_rt.profile for
 * wasm32): the hook variable every instrumented file refers to, the two
 * helpers of InstrProfilingUtil.c that the others use (that file needs
 * mmap), and a writer of the raw profile, counters and value profile
 * (indirect call targets, memcpy sizes), to a file, which
 * _wasmeval.profile_write calls (shim/wasmeval.c, under WASMEVAL_PROFILE).
 * compiler-rt's InstrProfilingFile.c writes at exit and leans on POSIX file
 * locking; a reactor never exits.
 *
 * On wasm32-wasi the instrumented code registers each function's data at
 * start-up (__llvm_profile_register_function, InstrProfilingPlatformOther.c)
 * from the module's constructors, which _initialize runs.
 */
#include <stdint.h>
#include <stdio.h>

#include "InstrProfiling.h"
#include "InstrProfilingInternal.h"

int __llvm_profile_runtime;

/* Single-threaded: no atomics needed. */
uint32_t lprofBoolCmpXchg(void **ptr, void *old, void *new_) {
    if (*ptr != old) {
        return 0;
    }
    *ptr = new_;
    return 1;
}

void *lprofPtrFetchAdd(void **mem, long incr) {
    void *old = *mem;
    *(char **)mem += incr;
    return old;
}

static uint32_t file_writer(ProfDataWriter *w, ProfDataIOVec *iov, uint32_t n) {
    FILE *f = (FILE *)w->WriterCtx;
    static const char zeros[8];
    for (uint32_t i = 0; i < n; i++) {
        if (iov[i].Data) {
            if (fwrite(iov[i].Data, iov[i].ElmSize, iov[i].NumElm, f) != iov[i].NumElm) {
                return 1;
            }
            continue;
        }
        /* Padding: zeros. */
        size_t left = iov[i].ElmSize * iov[i].NumElm;
        while (left > 0) {
            size_t k = left > sizeof zeros ? sizeof zeros : left;
            if (fwrite(zeros, 1, k, f) != k) {
                return 1;
            }
            left -= k;
        }
    }
    return 0;
}

/* Writes the raw profile of everything counted so far to path; 0 on
 * success. */
int wasmeval_profile_write(const char *path) {
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        return -1;
    }
    ProfDataWriter w = {file_writer, f};
    int rc = lprofWriteData(&w, lprofGetVPDataReader(), 0);
    if (fclose(f) != 0) {
        rc = -1;
    }
    return rc;
}
