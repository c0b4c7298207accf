#!/usr/bin/env bash
# Checks that the committed CPython artifact is reproducible: builds
# python.wasm (build.sh) and the stdlib zip (stdlib.sh) again from the pinned
# sources, in a fresh temporary folder (not the one `make python` used), and
# compares them byte for byte with wasm/python/dist's files, decompressed.
# `make python-reproduce` runs it; it compiles CPython (minutes on 2 idle
# cores, much longer on a loaded machine), so `make test` does not.
#
#   reproduce.sh SRC_DIR DIST_DIR [KEEP_DIR]
#
# SRC_DIR holds the Debian source files named in pins.mk (already checked
# against their SHA-256 by the Makefile); DIST_DIR is wasm/python/dist.
# KEEP_DIR, when given, receives the rebuilt python.wasm and python311.zip
# (for a look at a difference); otherwise they are removed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(realpath "$1")
dist=$(realpath "$2")
keep=${3:-}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wasmeval-reproduce-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

JOBS=${JOBS:-$(nproc)} bash "$here/build.sh" "$src" "$tmp/work" "$tmp/wasm" >"$tmp/build.log" 2>&1 ||
  { tail -40 "$tmp/build.log"; echo "reproduce.sh: build.sh failed (log above)"; exit 1; }
bash "$here/stdlib.sh" "$src"/python3.11_*.orig.tar.gz "$src"/tzdata_*_all.deb "$tmp/wasm" \
  "$tmp/work-stdlib" "$tmp/lib" >"$tmp/stdlib.log" 2>&1 ||
  { tail -40 "$tmp/stdlib.log"; echo "reproduce.sh: stdlib.sh failed (log above)"; exit 1; }

status=0
for f in "wasm/python.wasm" "lib/python311.zip"; do
  name=$(basename "$f")
  zstd -q -d -f "$dist/$name.zst" -o "$tmp/committed-$name"
  if cmp -s "$tmp/$f" "$tmp/committed-$name"; then
    echo "$name: identical ($(sha256sum <"$tmp/$f" | cut -c1-16), $(stat -c %s "$tmp/$f") bytes)"
  else
    diff=$(cmp -l "$tmp/$f" "$tmp/committed-$name" 2>/dev/null | wc -l || true)
    echo "$name: NOT identical to $dist/$name.zst: $diff bytes differ (sizes $(stat -c %s "$tmp/$f") rebuilt, $(stat -c %s "$tmp/committed-$name") committed)"
    status=1
  fi
done
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  cp "$tmp/wasm/python.wasm" "$tmp/lib/python311.zip" "$keep/"
fi
if [ $status != 0 ]; then
  echo "reproduce.sh: the rebuild differs from the committed artifact: a build input outside the pinned sources (toolchain version, date, folder) leaks into it"
fi
exit $status
