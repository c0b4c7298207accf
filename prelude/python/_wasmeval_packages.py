"""The package layer: third-party pure-Python packages, read-only.

The host mounts the operator's folder of installed distributions (what
``pip install --target DIR`` leaves, or Debian's dist-packages) at a guest
path and calls ``install`` through the prelude's control op "packages" once,
in the template, before the snapshot every session starts from. The folder
goes on sys.path after the session root and the standard library; a finder
at the end of sys.meta_path turns "No module named X" into a message naming
the C extension when the layer holds one for X; the preloaded packages are
imported, so a new session starts with them in sys.modules.
"""
import importlib
import os
import site
import sys

_SUFFIXES = (".so", ".pyd")

_HINT = (
    "which cannot run in wasmeval's WebAssembly Python: it is native machine "
    "code, and only pure-Python modules load here. Use a pure-Python package "
    "(many packages fall back to one when this import fails), or run the code "
    "in a native Python"
)


class NativeExtensionFinder:
    """Last on sys.meta_path, so it is asked only after every other finder
    failed: when the layer holds a compiled extension (X.cpython-311-x86_64-
    linux-gnu.so, X.abi3.so, X.so, X.pyd) for the module, raise an
    ImportError naming it instead of answering "not found"."""

    def __init__(self, root):
        self._root = root
        self._listings = {}  # the layer is read-only: list each folder once

    def _listing(self, folder):
        names = self._listings.get(folder)
        if names is None:
            try:
                names = os.listdir(folder)
            except OSError:
                names = []
            self._listings[folder] = names
        return names

    def _in_layer(self, folder):
        return isinstance(folder, str) and (folder == self._root or folder.startswith(self._root + "/"))

    def find_spec(self, fullname, path=None, target=None):
        name = fullname.rpartition(".")[2]
        folders = [self._root] if path is None else [p for p in path if self._in_layer(p)]
        for folder in folders:
            for entry in self._listing(folder):
                if entry.endswith(_SUFFIXES) and entry.startswith(name + ".") and "/" not in entry:
                    raise ImportError(
                        f"module {fullname!r} needs the C extension {entry} ({folder}/{entry}), {_HINT}",
                        name=fullname, path=f"{folder}/{entry}")
        return None

    def invalidate_caches(self):
        self._listings.clear()


def install(req):
    """Put the layer at req["path"] on sys.path and import req["preload"].
    Returns 0, or 1 after writing what failed to stderr."""
    root = req["path"]
    # As site-packages: appended to sys.path, its .pth files read (pip's
    # namespace-package and path entries).
    site.addsitedir(root)
    if not any(isinstance(f, NativeExtensionFinder) for f in sys.meta_path):
        sys.meta_path.append(NativeExtensionFinder(root))
    importlib.invalidate_caches()
    for name in req.get("preload") or ():
        try:
            importlib.import_module(name)
        except BaseException as e:  # noqa: B036 - report whatever the package raised
            sys.stderr.write(f"preloading {name} failed: {type(e).__name__}: {e}\n")
            return 1
    return 0
