# Pinned Debian source packages for the CPython-WASI artifact. The Makefile
# downloads each with `apt-get source --download-only` and checks every file
# against the SHA-256 below before anything is unpacked.
PY_DEB_VERSION   := 3.11.2-6+deb12u8
PY_ORIG          := python3.11_3.11.2.orig.tar.gz
PY_ORIG_SHA256   := 2411c74bda5bbcfcddaf4531f66d1adc73f247f529aee981b029513aefdbf849
PY_DEB_TAR       := python3.11_3.11.2-6+deb12u8.debian.tar.xz
PY_DEB_SHA256    := ece2d63c70ac0b7a401fbe6b51b0103be997c294a01a3865549be1862794ba97

ZLIB_DEB_VERSION := 1:1.2.13.dfsg-1
ZLIB_ORIG        := zlib_1.2.13.dfsg.orig.tar.bz2
ZLIB_ORIG_SHA256 := 71feb7947e3c00ef125f83b79a4e529bde31171e5babe48b391f06758d1ab0a1

SQLITE_DEB_VERSION := 3.40.1-2+deb12u2
SQLITE_ORIG        := sqlite3_3.40.1.orig.tar.xz
SQLITE_ORIG_SHA256 := aaa776260ab4dc976db34aa7891819484c8676b5b2783123ebc6301e2ca5d655

# The IANA tz database for zoneinfo, put into the stdlib zip as the `tzdata`
# package (what PyPI's tzdata holds), from Debian's binary package (the zone
# files compiled by zic), fetched with `apt-get download`. Only the stdlib
# zip depends on these lines: the Makefile leaves them out of python.wasm's
# hash, so a tzdata update does not recompile CPython.
TZDATA_DEB_VERSION := 2026b-0+deb12u1
TZDATA_DEB         := tzdata_2026b-0+deb12u1_all.deb
TZDATA_DEB_SHA256  := 0edb49f4dffe0d5608069f7e4ba4d69544d3b9e86fc314dd8b75e9958d8e5e98
