"""Builds python311.zip: the stdlib as compiled .pyc, pruned.

    mkstdlib.py LIB_DIR SYSCONFIGDATA_PY OUT_ZIP EXCLUDED_LIST

Run with Debian's python3.11, whose bytecode matches the guest's (both are
CPython 3.11). Entries are stored, not deflated: the whole zip is
zstd-compressed when embedded, and stored entries import faster.
"""
import importlib.util
import marshal
import os
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


def main(lib, sysconfigdata, out, excluded_list):
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
        add(zf, sysconfigdata, os.path.basename(sysconfigdata))
    os.replace(tmp, out)
    with open(excluded_list, "w") as fh:
        fh.write("\n".join(sorted(excluded)) + "\n")


def add(zf, src, rel):
    with open(src, "rb") as fh:
        source = fh.read()
    code = compile(source, "/usr/local/lib/python3.11/" + rel, "exec",
                   dont_inherit=True, optimize=0)
    # Unchecked hash-based pyc: valid without a source file or an mtime.
    data = bytearray(importlib.util.MAGIC_NUMBER)
    data += (0b01).to_bytes(4, "little")
    data += importlib.util.source_hash(source)
    data += marshal.dumps(code)
    info = zipfile.ZipInfo(rel[:-3] + ".pyc", date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = 0o644 << 16
    zf.writestr(info, bytes(data))


if __name__ == "__main__":
    main(*sys.argv[1:])
