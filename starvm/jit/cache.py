"""The on-disk cache of compiled modules.

A generated module is written once to ``<cache dir>/star_<key>.py``, where the key hashes
the module's text, the backend, and the versions of starvm, Numba and Python; it is then
imported from there, so Numba's ``cache=True`` keeps the machine code beside it
(``__pycache__``) and a later process loads it instead of compiling. Numba checks each
cached entry against the file's time stamp, so an existing file is never rewritten.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import tempfile
from pathlib import Path

from ..config import jit_cache_dir


def key(source: str, backend: str) -> str:
    import numba
    salt = (f"starvm {_version()}|numba {numba.__version__}|python {sys.version_info[:3]}|{backend}|"
            f"kernels {_kernels_hash()}\n")
    return hashlib.sha256((salt + source).encode()).hexdigest()[:32]


def _kernels_hash() -> str:
    """The kernels the generated code calls are compiled into it: Numba's cache of a module
    does not notice when they change, so their text is part of the key."""
    global _KERNELS
    if _KERNELS is None:
        here = Path(__file__).parent
        text = "".join((here / f).read_text() for f in ("kernels.py", "layout.py"))
        _KERNELS = hashlib.sha256(text.encode()).hexdigest()[:16]
    return _KERNELS


_KERNELS = None


def _version() -> str:
    """starvm's version, read from its __init__.py (importing the package here would make an
    import circle: starvm -> machine -> jit -> starvm)."""
    text = (Path(__file__).parents[1] / "__init__.py").read_text()
    found = re.search(r'__version__ = "([^"]+)"', text)
    return found.group(1) if found else "?"


def load(source: str, backend: str):
    """The module of this source (imported once per process)."""
    k = key(source, backend)
    name = f"starvm_jit_{k}"
    if name in sys.modules:
        return sys.modules[name]
    folder = Path(jit_cache_dir())
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"star_{k}.py"
    if not path.exists():
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(source)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module
