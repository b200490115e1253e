"""Each standard-library file parsed once per process, for the test suite.

Every machine parses the library files its program calls into (Lark: 0.1-0.8 s a file), and
tests make many machines; the files do not change during a run (``stdlib.index`` is cached
too). Each file's tree is kept, pickled: the checker annotates the tree it is given, so each
machine gets a fresh copy.
"""
from __future__ import annotations

import pickle

from starvm import stdlib


def keep_library_parses() -> None:
    parse, kept = stdlib._parse_file, {}

    def parse_once(path):
        if path not in kept:
            kept[path] = pickle.dumps(parse(path))
        return pickle.loads(kept[path])
    if not getattr(stdlib._parse_file, "kept", False):
        parse_once.kept = True
        stdlib._parse_file = parse_once
