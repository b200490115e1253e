"""Graph input for Star programs (docs/stdlib.md, "Graph input").

    import starvm, starvm.graphs as sg
    g = sg.load("road.gr")                      # .mtx, .gr (DIMACS), .npy, else an edge list
    g = sg.generate("rmat:scale=8,ef=8,seed=1")  # or sg.gnp / sg.rmat / sg.ssca2
    g = sg.bundled("karate")                    # a graph shipped in data/
    m = starvm.Machine(graph=g)                 # Star reads it with GRAPH_N, GRAPH_ADJ, GRAPH_EDGES, ...

``graph.py`` (the one ``Graph`` value), ``io.py`` (the file readers and writers, which try
``fast_io.py``'s vectorised reader first), ``fields.py`` (how a file's fields appear in error
messages), ``weights.py`` (``--weights MODE``: weights to integer codes), ``generators.py``
(seeded G(n, p), R-MAT, SSCA#2-like graphs), ``star.py`` (what the GRAPH_* built-ins do) and
``cli.py`` (`star run`'s --graph / --generate options).
"""
from __future__ import annotations

from ..errors import GraphFileError
from .generators import generate, gnp, rmat, ssca2
from .graph import Graph, from_edges
from .io import FORMATS, guess_format, load, write_dimacs, write_edgelist, write_mtx, write_npy

_GRAPH_SUFFIXES = (".mtx", ".gr", ".txt", ".npy")


def bundled_names() -> list[str]:
    """The names of the graphs shipped in data/ (file stems)."""
    from ..resources import data_dir
    try:
        d = data_dir()
    except FileNotFoundError:
        return []
    return sorted(p.stem for p in d.iterdir() if p.suffix in _GRAPH_SUFFIXES)


def bundled(name: str) -> Graph:
    """A graph shipped in data/, by name (see bundled_names()); no other file can be named."""
    from ..resources import data_dir
    key = name.lower()
    if key not in bundled_names():
        raise ValueError(f"no bundled graph '{name}' (bundled: {', '.join(bundled_names())})")
    path = next(p for p in data_dir().iterdir() if p.stem == key and p.suffix in _GRAPH_SUFFIXES)
    return load(path, name=key)


__all__ = ["Graph", "GraphFileError", "FORMATS", "load", "guess_format", "generate", "gnp", "rmat", "ssca2",
           "from_edges", "bundled", "bundled_names", "write_mtx", "write_dimacs", "write_edgelist", "write_npy"]
