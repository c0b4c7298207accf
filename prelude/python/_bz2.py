"""Stand-in for CPython's _bz2 C module, which wasmeval's WebAssembly build
lacks (it has no libbz2).

With it ``import bz2`` works, so packages that import bz2 at the top without
using it (networkx does) load; compressing or decompressing raises an error
that says why. A real _bz2 built into the interpreter would win: builtin
modules are found before sys.path.
"""

_MESSAGE = (
    "bz2 compression is not available in wasmeval's WebAssembly Python (it is "
    "built without libbz2); use zlib, gzip or zipfile instead"
)


class BZ2Compressor:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(_MESSAGE)


class BZ2Decompressor:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(_MESSAGE)
