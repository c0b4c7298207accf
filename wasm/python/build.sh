#!/usr/bin/env bash
# Builds the CPython-WASI reactor (python.wasm) from Debian's source
# packages. The stdlib zip is built apart from it, by stdlib.sh, so that a
# change to the zip does not recompile the interpreter.
#
#   build.sh SRC_DIR WORK_DIR OUT_DIR
#
# SRC_DIR holds the Debian source files named in pins.mk (already checked
# against their SHA-256 by the Makefile). WORK_DIR is scratch space. OUT_DIR
# receives python.wasm, builtin-modules.txt and the build's
# _sysconfigdata_*.py (which stdlib.sh puts into the zip). Toolchain:
# Debian's clang-14, lld-14, wasi-libc and libclang-rt-14-dev-wasm32.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(realpath "$1")
work=$(realpath -m "$2")
out=$(realpath -m "$3")
jobs=${JOBS:-$(nproc)}

rm -rf "$work"
mkdir -p "$work" "$out"

# A sysroot whose wasm32-wasi folders are Debian's wasi-libc: plain
# --target=wasm32-wasi would also search /usr/include and pick up host headers.
sysroot=$work/sysroot
mkdir -p "$sysroot/include" "$sysroot/lib"
ln -s /usr/include/wasm32-wasi "$sysroot/include/wasm32-wasi"
ln -s /usr/lib/wasm32-wasi "$sysroot/lib/wasm32-wasi"

deps=$work/deps
mkdir -p "$deps/include" "$deps/lib/pkgconfig"

export CC="clang-14 --target=wasm32-wasi --sysroot=$sysroot"
export AR=llvm-ar-14
export RANLIB=llvm-ranlib-14
export PKG_CONFIG_LIBDIR=$deps/lib/pkgconfig
export PKG_CONFIG_PATH=
export PKG_CONFIG_SYSROOT_DIR=
opt="-O2 -g0"

# ---- zlib ------------------------------------------------------------------
echo "== zlib"
mkdir -p "$work/zlib"
tar -xjf "$src"/zlib_*.orig.tar.bz2 -C "$work/zlib" --strip-components=1
(
  cd "$work/zlib"
  objs=()
  for f in adler32 crc32 deflate infback inffast inflate inftrees trees zutil \
           compress uncompr gzclose gzlib gzread gzwrite; do
    $CC $opt -D_LARGEFILE64_SOURCE=1 -DHAVE_UNISTD_H -c "$f.c" -o "$f.o"
    objs+=("$f.o")
  done
  $AR rcs "$deps/lib/libz.a" "${objs[@]}"
  cp zlib.h zconf.h "$deps/include/"
  version=$(sed -n 's/#define ZLIB_VERSION "\(.*\)"/\1/p' zlib.h)
  cat >"$deps/lib/pkgconfig/zlib.pc" <<EOF
Name: zlib
Description: zlib for wasm32-wasi
Version: $version
Libs: -L$deps/lib -lz
Cflags: -I$deps/include
EOF
)

# ---- sqlite3 -----------------------------------------------------------------
echo "== sqlite3"
mkdir -p "$work/sqlite"
tar -xJf "$src"/sqlite3_*.orig.tar.xz -C "$work/sqlite" --strip-components=1
(
  cd "$work/sqlite"
  # The amalgamation is generated with host tools (gcc, tclsh).
  mkdir host && cd host
  CC=gcc AR=ar RANLIB=ranlib PKG_CONFIG_LIBDIR= ../configure --disable-tcl --disable-readline >/dev/null
  make -s sqlite3.c >/dev/null
  # WASI has no advisory locks, no shared memory and no dlopen: one process
  # owns the database, so locking is a no-op (SQLITE_ENABLE_LOCKING_STYLE=0
  # with the "unix-none" VFS as default) and WAL is left out.
  $CC $opt -c sqlite3.c -o sqlite3.o -include "$here/sqlite/wasi_compat.h" \
    -D_WASI_EMULATED_GETPID -D_WASI_EMULATED_MMAN -D_WASI_EMULATED_PROCESS_CLOCKS \
    -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_OMIT_WAL \
    -DSQLITE_ENABLE_LOCKING_STYLE=0 \
    -DSQLITE_DEFAULT_UNIX_VFS='"unix-none"' -DSQLITE_ENABLE_FTS5 \
    -DSQLITE_ENABLE_JSON1 -DSQLITE_ENABLE_MATH_FUNCTIONS \
    -DSQLITE_TEMP_STORE=3 -DSQLITE_MAX_MMAP_SIZE=0 -DSQLITE_OMIT_POPEN \
    -DHAVE_USLEEP=1
  $AR rcs "$deps/lib/libsqlite3.a" sqlite3.o
  cp sqlite3.h sqlite3ext.h "$deps/include/"
  version=$(sed -n 's/#define SQLITE_VERSION *"\(.*\)"/\1/p' sqlite3.h)
  cat >"$deps/lib/pkgconfig/sqlite3.pc" <<EOF
Name: SQLite
Description: SQLite for wasm32-wasi
Version: $version
Libs: -L$deps/lib -lsqlite3 -lwasi-emulated-getpid -lwasi-emulated-mman -lwasi-emulated-process-clocks
Cflags: -I$deps/include
EOF
)

# ---- CPython -----------------------------------------------------------------
echo "== cpython"
py=$work/cpython
mkdir -p "$py"
tar -xzf "$src"/python3.11_*.orig.tar.gz -C "$py" --strip-components=1
cat "$here/patches/signalmodule-wasmeval.c" >>"$py/Modules/signalmodule.c"
for p in "$here"/patches/*.patch; do
  patch -d "$py" -p1 --quiet --forward <"$p"
done
cat "$py/Tools/wasm/config.site-wasm32-wasi" "$here/config.site-wasmeval" >"$work/config.site"
(
  cd "$py"
  mkdir -p builddir/wasi && cd builddir/wasi
  CONFIG_SITE=$work/config.site \
  CFLAGS="$opt" \
  LDFLAGS="-L$deps/lib" \
  ../../configure -C \
    --host=wasm32-unknown-wasi \
    --build="$(../../config.guess)" \
    --with-build-python=/usr/bin/python3.11 \
    --without-ensurepip \
    --disable-test-modules \
    --with-pymalloc=no \
    >"$work/configure.log" 2>&1 || { tail -40 "$work/configure.log"; exit 1; }
  make -j"$jobs" libpython3.11.a pybuilddir.txt >"$work/make.log" 2>&1 || { tail -60 "$work/make.log"; exit 1; }
  # What the interpreter links against (module libraries, emulation libs).
  cat >"$work/print.mk" <<'EOF'
print-libs:
	@echo $(MODLIBS) $(LIBS) $(SYSLIBS)
EOF
  libs=$(make -s -f Makefile -f "$work/print.mk" print-libs)
  echo "link libs: $libs"
  $CC $opt -I. -I../../Include -I../../Include/internal \
    -c "$here/shim/wasmeval.c" -o "$work/wasmeval.o"
  $CC $opt -mexec-model=reactor \
    -z stack-size=8388608 -Wl,--stack-first -Wl,--initial-memory=20971520 \
    -o "$out/python.wasm" "$work/wasmeval.o" libpython3.11.a $libs -lm
  # The module list, for the README and for checks.
  grep -o '{"[a-zA-Z0-9_.]*", PyInit_' Modules/config.c | sed 's/{"\(.*\)", PyInit_/\1/' | sort >"$out/builtin-modules.txt"
  echo "_wasmeval" >>"$out/builtin-modules.txt"
  for m in zlib _sqlite3 _json _decimal pyexpat; do
    grep -qx "$m" "$out/builtin-modules.txt" || { echo "build.sh: module $m was not built in (see $work/configure.log)"; exit 1; }
  done
  sysconfigdata=$(cat pybuilddir.txt)
  cp "$sysconfigdata"/_sysconfigdata_*.py "$out/"
)
ls -l "$out"
