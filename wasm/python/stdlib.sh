#!/usr/bin/env bash
# Builds the stdlib zip (python311.zip) without compiling anything: CPython's
# Lib/ from the upstream tarball as .pyc, the sysconfigdata that build.sh
# kept from the interpreter build, and the IANA tz database from Debian's
# tzdata package as the `tzdata` package (mkstdlib.py does the zip).
#
#   stdlib.sh PY_ORIG_TARBALL TZDATA_DEB WASM_DIR WORK_DIR OUT_DIR
#
# Both files are checked against their SHA-256 by the Makefile. WASM_DIR is
# build.sh's output folder. OUT_DIR receives python311.zip and
# stdlib-excluded.txt.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tarball=$(realpath "$1")
deb=$(realpath "$2")
wasm=$(realpath "$3")
work=$(realpath -m "$4")
out=$(realpath -m "$5")

rm -rf "$work"
mkdir -p "$work/cpython" "$work/tzdata" "$out"
tar -xzf "$tarball" -C "$work/cpython" --strip-components=1 --wildcards 'Python-*/Lib/*'
dpkg-deb -x "$deb" "$work/tzdata"
# Debian's version is the IANA release plus Debian's suffix: 2026b-0+deb12u1.
tzversion=$(dpkg-deb -f "$deb" Version)
tzversion=${tzversion%%-*}

/usr/bin/python3.11 "$here/mkstdlib.py" "$work/cpython/Lib" "$wasm"/_sysconfigdata_*.py \
  "$work/tzdata/usr/share/zoneinfo" "$tzversion" \
  "$out/python311.zip" "$out/stdlib-excluded.txt"
rm -rf "$work"
ls -l "$out"
