"""Builds python311.zip: the stdlib as compiled .pyc, pruned, plus the IANA
tz database as the `tzdata` package.

    mkstdlib.py LIB_DIR SYSCONFIGDATA_PY ZONEINFO_DIR IANA_VERSION OUT_ZIP EXCLUDED_LIST

Run with Debian's python3.11, whose bytecode matches the guest's (both are
CPython 3.11). Entries are stored, not deflated: the whole zip is
zstd-compressed when embedded, and stored entries import faster.

ZONEINFO_DIR is a zic output tree (Debian's /usr/share/zoneinfo). It goes in
laid out as PyPI's tzdata package, which zoneinfo falls back to when no
TZPATH folder exists (none does in the guest): tzdata/zoneinfo/<Area>/<City>
with an __init__ in every folder (zoneinfo reads a zone as a resource of the
package tzdata.zoneinfo.<Area>), and tzdata/zones listing every key, for
zoneinfo.available_timezones(). Links are stored as copies.
"""
import importlib.util
import marshal
import os
import pprint
import sys
import zipfile

# Packages and modules left out: tests, GUI, packaging and things that need
# subprocess, threads, ctypes or a terminal, none of which the sandbox has.
EXCLUDE = {
    "test", "tests", "idlelib", "tkinter", "turtledemo", "turtle.py",
    "ensurepip", "venv", "lib2to3", "pydoc_data", "ctypes", "curses",
    "multiprocessing", "distutils", "msilib", "site-packages", "__phello__",
    "_bootsubprocess.py", "_osx_support.py", "_aix_support.py",
    "idle_test", "xxlimited.py", "config-3.11-wasm32-wasi",
}


def main(lib, sysconfigdata, zoneinfo, iana_version, out, excluded_list):
    lib = os.path.abspath(lib)
    excluded = []
    tmp = out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as zf:
        for dirpath, dirnames, filenames in os.walk(lib):
            rel = os.path.relpath(dirpath, lib)
            keep = []
            for d in sorted(dirnames):
                if d in EXCLUDE or d == "__pycache__":
                    if d != "__pycache__":
                        excluded.append(os.path.normpath(os.path.join(rel, d)) + "/")
                else:
                    keep.append(d)
            dirnames[:] = keep
            for f in sorted(filenames):
                if not f.endswith(".py"):
                    continue
                path = os.path.normpath(os.path.join(rel, f))
                if f in EXCLUDE:
                    excluded.append(path)
                    continue
                add(zf, os.path.join(dirpath, f), path)
        add_source(zf, sysconfig_source(sysconfigdata), os.path.basename(sysconfigdata))
        add_tzdata(zf, zoneinfo, iana_version)
    os.replace(tmp, out)
    with open(excluded_list, "w") as fh:
        fh.write("\n".join(sorted(excluded)) + "\n")


def sysconfig_source(path):
    """The interpreter build's _sysconfigdata, printed again: CPython's build
    pprints it, which wraps long strings by their length, and build.sh
    rewrote the work folder (of any length) to a fixed one afterwards, so the
    same values came wrapped differently from builds in different folders."""
    ns = {}
    with open(path, encoding="utf-8") as fh:
        exec(fh.read(), ns)
    return ("# system configuration generated and used by the sysconfig module\n"
            "build_time_vars = " + pprint.pformat(ns["build_time_vars"]) + "\n").encode()


def add(zf, src, rel):
    with open(src, "rb") as fh:
        source = fh.read()
    add_source(zf, source, rel)


def add_source(zf, source, rel):
    code = compile(source, "/usr/local/lib/python3.11/" + rel, "exec",
                   dont_inherit=True, optimize=0)
    # Unchecked hash-based pyc: valid without a source file or an mtime.
    data = bytearray(importlib.util.MAGIC_NUMBER)
    data += (0b01).to_bytes(4, "little")
    data += importlib.util.source_hash(source)
    data += marshal.dumps(code)
    add_data(zf, bytes(data), rel[:-3] + ".pyc")


def add_data(zf, data, rel):
    info = zipfile.ZipInfo(rel, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = 0o644 << 16
    zf.writestr(info, data)


# Zone data besides the zones, as PyPI's tzdata ships them.
TZ_TABLES = {"iso3166.tab", "zone.tab", "zone1970.tab", "zonenow.tab",
             "tzdata.zi", "leapseconds"}
# zic's alternative trees and Debian's links outside the database.
TZ_SKIP = {"posix", "right", "posixrules", "localtime"}


def add_tzdata(zf, zoneinfo, iana_version):
    year, letter = iana_version[:4], iana_version[4:]
    if not (year.isdigit() and len(letter) == 1 and letter.isalpha()):
        raise SystemExit(f"mkstdlib: IANA version {iana_version!r} is not like 2026b")
    version = f"{year}.{ord(letter) - ord('a') + 1}"  # as PyPI numbers it
    add_source(zf, (
        '"""The IANA time zone database (Debian\'s tzdata), for zoneinfo."""\n'
        f'IANA_VERSION = "{iana_version}"\n__version__ = "{version}"\n'
    ).encode(), "tzdata/__init__.py")
    zones = []
    for dirpath, dirnames, filenames in os.walk(zoneinfo, followlinks=False):
        rel = os.path.relpath(dirpath, zoneinfo)
        dirnames[:] = sorted(d for d in dirnames if not (rel == "." and d in TZ_SKIP))
        pkg = "tzdata/zoneinfo" if rel == "." else "tzdata/zoneinfo/" + rel
        add_source(zf, b"", pkg + "/__init__.py")
        for f in sorted(filenames):
            if rel == "." and f in TZ_SKIP:
                continue
            path = os.path.join(dirpath, f)
            if not os.path.exists(path):  # a dangling link
                continue
            with open(path, "rb") as fh:
                data = fh.read()
            if data.startswith(b"TZif"):
                zones.append(f if rel == "." else rel + "/" + f)
            elif not (rel == "." and f in TZ_TABLES):
                continue
            add_data(zf, data, pkg + "/" + f)
    if "America/New_York" not in zones:
        raise SystemExit(f"mkstdlib: no America/New_York under {zoneinfo}: not a zoneinfo tree")
    add_data(zf, ("\n".join(sorted(zones)) + "\n").encode(), "tzdata/zones")


if __name__ == "__main__":
    main(*sys.argv[1:])
