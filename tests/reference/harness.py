"""Run one generated program on the reference model and on starvm; report any difference."""
from __future__ import annotations

import io

import starvm

from .gen import Gen, render
from .model import Interp


def run_starvm(src: str, backend: str, fuse: bool):
    out = io.StringIO()
    m = starvm.Machine(backend=backend, out=out, fuse=fuse)
    m.run(src, "fuzz.star")
    return out.getvalue(), list(m.counts)


def differential(src_random, backends=("numpy",), max_stmts: int = 8):
    """Generate a program; return (source, list of mismatch descriptions)."""
    prog = Gen(src_random, max_stmts).program()
    src = render(prog)
    want = Interp(prog).run()
    problems = []
    counts = {}
    for b in backends:
        for fuse in (True, False):
            try:
                got, counts[(b, fuse)] = run_starvm(src, b, fuse)
            except Exception as e:  # noqa: BLE001 - any failure of a valid program is a bug
                problems.append(f"{b} fuse={fuse}: {type(e).__name__}: {e}")
                continue
            if got != want:
                problems.append(f"{b} fuse={fuse}: output differs from the reference model\n"
                                + first_difference(want, got))
    if len(set(map(tuple, counts.values()))) > 1:
        problems.append(f"step counts differ: {counts}")
    return src, problems


def first_difference(want: str, got: str) -> str:
    w, g = want.splitlines(), got.splitlines()
    for i, (a, b) in enumerate(zip(w, g)):
        if a != b:
            return f"line {i + 1}:\n  model : {a}\n  starvm: {b}"
    return f"model printed {len(w)} lines, starvm {len(g)}"
