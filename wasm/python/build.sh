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
# Debian's clang-14, lld-14, wasi-libc and libclang-rt-14-dev-wasm32, and
# Debian's binaryen (wasm-opt) for the last pass over the linked module.
#
# Reproducible: the same inputs give the same bytes whatever WORK_DIR is and
# whenever it runs (reproduce.sh checks it). The build time CPython records
# (getbuildinfo.c's DATE and TIME) is SOURCE_DATE_EPOCH, the date of the
# Debian source's changelog entry; the work folder is mapped to /wasmeval-build
# in every compile (-ffile-prefix-map, for __FILE__) and rewritten to it in
# the kept _sysconfigdata.
#
# The flags below are the measured winners (README.md, "Speed flags"). The
# PYBUILD_* variables override them for measuring other variants only; the
# Makefile never sets them, so a cached or committed artifact is always built
# with the defaults. The default build is profile-guided, with the committed
# profile pgo/python.proftext.zst (ceval.c left out of it; README.md, "Speed
# flags"); PYBUILD_PGO_GENERATE builds the instrumented module that takes a
# profile (pgo/README.md says how; the build never takes one itself).
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
# PYBUILD_PGO_GENERATE: a folder of wasm32-wasi objects of LLVM's profile
# runtime (pgo/README.md; Debian ships none for wasm32), for an instrumented
# build (-fprofile-generate) whose _wasmeval.profile_write writes the raw
# profile. They go into a copy of the sysroot's libc.a, so that every link,
# configure's checks too, finds what the instrumented code calls.
pgo_gen=${PYBUILD_PGO_GENERATE:-}
if [ -n "$pgo_gen" ]; then
  cp -r /usr/lib/wasm32-wasi "$sysroot/lib/wasm32-wasi"
  llvm-ar-"${PYBUILD_CLANG:-14}" q "$sysroot/lib/wasm32-wasi/libc.a" "$pgo_gen"/*.o
  llvm-ranlib-"${PYBUILD_CLANG:-14}" "$sysroot/lib/wasm32-wasi/libc.a"
else
  ln -s /usr/lib/wasm32-wasi "$sysroot/lib/wasm32-wasi"
fi

deps=$work/deps
mkdir -p "$deps/include" "$deps/lib/pkgconfig"

# -B: clang-14 runs the first wasm-opt it finds (in -B folders, then its
# own folder, /usr/bin, then PATH) after every optimized link, and binaryen
# 108 cannot read configure's link-test modules ("Fatal: error parsing
# wasm"), so with Debian's binaryen installed configure would find no
# sqlite3. The wasm-opt in no-wasm-opt/ does nothing; the real one runs
# once, on the linked module, below.
mkdir -p "$work/no-wasm-opt"
printf '#!/bin/sh\nexit 0\n' >"$work/no-wasm-opt/wasm-opt"
chmod +x "$work/no-wasm-opt/wasm-opt"
# PYBUILD_CLANG: another Debian clang (e.g. 19: clang-19, lld-19 and
# libclang-rt-19-dev-wasm32), which makes int-conversion an error where
# clang-14 warns (CPython 3.11's timemodule.c passes wasi-libc's clockid_t
# pointers as long); configure's results are the same (pyconfig.h is
# identical). PYBUILD_CFLAGS: flags for every compile and link, e.g.
# -mbulk-memory (the compiler command, so configure's checks see them too).
cc_ver=${PYBUILD_CLANG:-14}
cc_extra=${PYBUILD_CFLAGS:-}
[ "$cc_ver" = 14 ] || cc_extra="-Wno-error=int-conversion${cc_extra:+ $cc_extra}"
export CC="clang-$cc_ver --target=wasm32-wasi --sysroot=$sysroot -B$work/no-wasm-opt${cc_extra:+ $cc_extra}"
export AR=llvm-ar-$cc_ver
export RANLIB=llvm-ranlib-$cc_ver
export PKG_CONFIG_LIBDIR=$deps/lib/pkgconfig
export PKG_CONFIG_PATH=
export PKG_CONFIG_SYSROOT_DIR=
WASM_OPT=${PYBUILD_WASM_OPT_BIN:-/usr/bin/wasm-opt}

fixed=/wasmeval-build
opt="${PYBUILD_OPT:--O3} -g0 -ffile-prefix-map=$work=$fixed"
# PYBUILD_PGO: a profile to build with (LLVM's .proftext, zstd-compressed
# or not, or .profdata), copied into the work folder, so that the path in
# _sysconfigdata's CFLAGS is the fixed one; unset: the committed
# pgo/python.proftext.zst (an input of the artifact: the Makefile's
# PY_WASM_INPUTS), turned into the indexed form by llvm-profdata (Debian's
# llvm-14; the same text gives the same bytes); empty: none.
pgo=${PYBUILD_PGO-$here/pgo/python.proftext.zst}
if [ -n "$pgo_gen" ]; then
  opt="$opt -fprofile-generate"
elif [ -n "$pgo" ]; then
  case "$pgo" in
    *.proftext.zst) zstd -q -d -c "$pgo" >"$work/python.proftext" ;;
    *.proftext) cp "$pgo" "$work/python.proftext" ;;
    *.profdata) cp "$pgo" "$work/python.profdata" ;;
    *) echo "build.sh: PYBUILD_PGO=$pgo: want a .proftext.zst, .proftext or .profdata file"; exit 1 ;;
  esac
  [ -f "$work/python.profdata" ] || llvm-profdata-"$cc_ver" merge -o "$work/python.profdata" "$work/python.proftext"
  # A function whose control flow changed since the profile was taken (a
  # patch) is compiled as without one; clang would warn about each.
  opt="$opt -fprofile-use=$work/python.profdata -Wno-profile-instr-out-of-date -Wno-profile-instr-unprofiled"
fi
lto=${PYBUILD_LTO:-}                        # e.g. -flto (compile and link)
pymalloc=${PYBUILD_PYMALLOC:-yes}           # --with-pymalloc=
wasm_opt_flags=${PYBUILD_WASM_OPT--O3}      # binaryen's passes; empty: none
opt="$opt${lto:+ $lto}"
if [ -n "$wasm_opt_flags" ]; then
  # Another binaryen optimizes differently: the bytes would not reproduce.
  v=$("$WASM_OPT" --version 2>/dev/null || echo "none")
  case "$v" in
    "wasm-opt version 108"*) ;;
    *) echo "build.sh: $WASM_OPT is \"$v\"; the artifact is built with binaryen 108 (Debian bookworm's package binaryen; make deps installs it)"; exit 1 ;;
  esac
fi

# Always the changelog's date, even when the caller's environment sets one.
tar -xJf "$src"/python3.11_*.debian.tar.xz -C "$work" debian/changelog
SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -l "$work/debian/changelog" -STimestamp)
export SOURCE_DATE_EPOCH

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
# The build time sys.version and platform report: SOURCE_DATE_EPOCH, not now.
build_date=$(LC_ALL=C date -u -d "@$SOURCE_DATE_EPOCH" '+%b %e %Y')
build_time=$(LC_ALL=C date -u -d "@$SOURCE_DATE_EPOCH" '+%H:%M:%S')
sed -i "1i #define DATE \"$build_date\"\n#define TIME \"$build_time\"" "$py/Modules/getbuildinfo.c"
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
    --with-pymalloc="$pymalloc" \
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
    ${pgo_gen:+-DWASMEVAL_PROFILE} -c "$here/shim/wasmeval.c" -o "$work/wasmeval.o"
  $CC $opt -mexec-model=reactor \
    -z stack-size=8388608 -Wl,--stack-first -Wl,--initial-memory=20971520 \
    -o "$work/python.wasm" "$work/wasmeval.o" libpython3.11.a $libs -lm
  if [ -n "$wasm_opt_flags" ]; then
    # shellcheck disable=SC2086
    "$WASM_OPT" $wasm_opt_flags "$work/python.wasm" -o "$out/python.wasm"
  else
    cp "$work/python.wasm" "$out/python.wasm"
  fi
  # The module list, for the README and for checks.
  grep -o '{"[a-zA-Z0-9_.]*", PyInit_' Modules/config.c | sed 's/{"\(.*\)", PyInit_/\1/' | sort >"$out/builtin-modules.txt"
  echo "_wasmeval" >>"$out/builtin-modules.txt"
  for m in zlib _sqlite3 _json _decimal pyexpat; do
    grep -qx "$m" "$out/builtin-modules.txt" || { echo "build.sh: module $m was not built in (see $work/configure.log)"; exit 1; }
  done
  sysconfigdata=$(cat pybuilddir.txt)
  # It records the work folder (srcdir, CFLAGS, ...): the fixed name instead.
  for f in "$sysconfigdata"/_sysconfigdata_*.py; do
    sed "s|$work|$fixed|g" "$f" >"$out/$(basename "$f")"
  done
)
ls -l "$out"
