"""Native kernels of one target from several modules (starvm/native/<routine>/numpy.py or
cuda.py, and the shared helpers of native/shared/) as one object, for the tests that drive them
directly: ``rows.gather(...)``, ``rows.GATHER_WORDS``. Reading a name, or setting it
(monkeypatch.setattr), goes to the first module that defines it."""
from __future__ import annotations

import importlib

ROUTINES = ("iota", "gather", "scatter", "groupmin", "compact", "expand")
# shared modules first: fake_cupy_installed imports them in this order, a module before its importers
CUDA_MODULES = ("starvm.native.shared.cuda_rows", *(f"starvm.native.{r}.cuda" for r in ROUTINES))
NUMPY_MODULES = tuple(f"starvm.native.{r}.numpy" for r in ROUTINES)
SEARCH_MODULES = ("starvm.native.shared.cuda_search", "starvm.native.match.cuda", "starvm.native.min.cuda")


def Kernels(modules):
    """One object whose attributes are the modules' names, each a property that reads and writes
    the module's own (monkeypatch.setattr restores a property's value through it; a name in two
    modules is the first one's). Other attributes are the object's own."""
    owners: dict = {}
    for m in modules:
        for name in vars(m):
            if not name.startswith("__"):
                owners.setdefault(name, m)

    def prop(m, name):
        return property(lambda self: getattr(m, name), lambda self, value: setattr(m, name, value))
    return type("Kernels", (), {name: prop(m, name) for name, m in owners.items()})()


def numpy_rows() -> Kernels:
    return Kernels(importlib.import_module(m) for m in NUMPY_MODULES)


def cuda_rows() -> Kernels:
    """The CUDA row kernels (CuPy must be importable: the real one, or fake_cupy's stand-in)."""
    return Kernels(importlib.import_module(m) for m in CUDA_MODULES)


def cuda_search() -> Kernels:
    """MATCH's, MIN's and MAX's CUDA kernels with their launch shape (configure, launch_shape)."""
    return Kernels(importlib.import_module(m) for m in SEARCH_MODULES)
