"""IPython and IPython.display for cells, where no real IPython is
installed: the seed's tool runs Python in an IPython kernel, and agents
reach for ``from IPython.display import display, Markdown, HTML, Image``.
The classes have the rich reprs (_repr_markdown_, _repr_png_, ...) that
display() turns into outputs, as IPython's do. get_ipython() is None, as
outside an IPython shell: there are no magics and no shell here.

The prelude's finder (_wasmeval_prelude._IPythonFallback, last on
sys.meta_path, so a real IPython in the package layer wins) makes the
modules from fill_ipython and fill_display.
"""
import base64 as _b64
import builtins as _builtins
import json as _json
import os as _os


def fill_ipython(ns):
    """The names of the IPython module."""
    ns.update({
        "__version__": "8.0.0",
        "version_info": (8, 0, 0, ""),
        "get_ipython": lambda: None,
        "display": _builtins.display,
    })


class DisplayObject:
    """Data to display: given as data=, or read from filename=."""

    _binary = False

    def __init__(self, data=None, url=None, filename=None, metadata=None):
        if url is not None:
            raise ValueError(f"{type(self).__name__}(url=...): there is no network in the sandbox; "
                             "pass data= or filename= (a file in the session root)")
        if filename is not None:
            if self._binary:
                with open(filename, "rb") as f:
                    data = f.read()
            else:
                with open(filename, encoding="utf-8") as f:
                    data = f.read()
        self.data = data
        self.filename = filename
        self.metadata = metadata

    def __repr__(self):
        return f"<IPython.core.display.{type(self).__name__} object>"


class TextDisplayObject(DisplayObject):
    pass


class Markdown(TextDisplayObject):
    def _repr_markdown_(self):
        return self.data


class HTML(TextDisplayObject):
    def _repr_html_(self):
        return self.data


class Latex(TextDisplayObject):
    def _repr_latex_(self):
        return self.data


class Math(TextDisplayObject):
    def _repr_latex_(self):
        return "$\\displaystyle " + str(self.data).strip().strip("$") + "$"


class SVG(DisplayObject):
    def _repr_svg_(self):
        data = self.data
        return data.decode("utf-8") if isinstance(data, bytes) else data


class Pretty(TextDisplayObject):
    def __repr__(self):
        return str(self.data)


class Code(TextDisplayObject):
    def __init__(self, data=None, url=None, filename=None, language=None):
        super().__init__(data, url, filename)
        self.language = language

    def _repr_markdown_(self):
        return f"```{self.language or ''}\n{self.data}\n```"


class JSON(DisplayObject):
    def __init__(self, data=None, url=None, filename=None, expanded=False, metadata=None, root="root", **kwargs):
        super().__init__(data, url, filename, metadata)
        if isinstance(self.data, str):
            self.data = _json.loads(self.data)

    def _repr_json_(self):
        return self.data


_FORMATS = {"png": "png", "jpg": "jpeg", "jpeg": "jpeg", "gif": "gif", "webp": "webp"}


class Image(DisplayObject):
    """An image from bytes (data=) or a file (filename=, or a path as
    data); PNG and JPEG show as images, other formats by their MIME type."""

    _binary = True

    def __init__(self, data=None, url=None, filename=None, format=None, embed=None, width=None, height=None,
                 retina=False, unconfined=False, metadata=None, alt=None):
        if isinstance(data, str) and filename is None and url is None:
            if data.startswith(("http://", "https://")):
                url, data = data, None
            elif _os.path.exists(data):
                filename, data = data, None
            else:
                data = _b64.b64decode(data)
        super().__init__(data, url, filename, metadata)
        self.width, self.height, self.alt = width, height, alt
        fmt = format
        if fmt is None and filename is not None:
            fmt = _os.path.splitext(filename)[1].lstrip(".")
        if fmt is None and isinstance(self.data, (bytes, bytearray)):
            head = bytes(self.data[:8])
            fmt = ("png" if head.startswith(b"\x89PNG") else "jpeg" if head.startswith(b"\xff\xd8")
                   else "gif" if head.startswith(b"GIF8") else "webp" if head[:4] == b"RIFF" else "png")
        self.format = _FORMATS.get(str(fmt).lower(), str(fmt).lower())

    def _repr_png_(self):
        return self.data if self.format == "png" else None

    def _repr_jpeg_(self):
        return self.data if self.format == "jpeg" else None

    def _repr_mimebundle_(self, include=None, exclude=None):
        if self.format in ("png", "jpeg"):
            return None
        return {f"image/{self.format}": self.data}


for _cls in (DisplayObject, TextDisplayObject, Markdown, HTML, Latex, Math, SVG, Pretty, Code, JSON, Image):
    _cls.__module__ = "IPython.core.display"


def clear_output(wait=False):
    """Nothing to clear: a cell's outputs are kept."""


def _display_as(kind):
    def show(*objs, raw=False, metadata=None):
        for obj in objs:
            _builtins.display({kind: obj} if raw else obj, raw=raw)
    show.__name__ = "display_" + kind.split("/")[-1].replace("+xml", "")
    return show


def fill_display(ns):
    """The names of IPython.display (and IPython.core.display)."""
    ns.update({
        "display": _builtins.display, "clear_output": clear_output,
        "DisplayObject": DisplayObject, "TextDisplayObject": TextDisplayObject,
        "Markdown": Markdown, "HTML": HTML, "Latex": Latex, "Math": Math, "SVG": SVG, "Pretty": Pretty,
        "Code": Code, "JSON": JSON, "Image": Image,
        "display_markdown": _display_as("text/markdown"), "display_html": _display_as("text/html"),
        "display_json": _display_as("application/json"), "display_png": _display_as("image/png"),
        "display_jpeg": _display_as("image/jpeg"), "display_svg": _display_as("image/svg+xml"),
        "display_latex": _display_as("text/latex"), "display_pretty": _display_as("text/plain"),
    })
