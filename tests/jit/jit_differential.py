"""Run one Star program on the interpreter and on the compiled tier; say what differs."""
from __future__ import annotations

import io

import starvm


def run(src: str, filename: str, jit: str, **kw):
    """(output, step counts, rendered error or None, machine)."""
    out = io.StringIO()
    m = starvm.Machine(out=out, jit=jit, **kw)
    err = None
    try:
        m.run(src, filename)
    except starvm.StarError as e:
        err = e.render()
    return out.getvalue(), list(m.counts), err, m


def differences(src: str, filename: str = "prog.star", **kw) -> list[str]:
    """What differs between --jit off and --jit on (empty: nothing)."""
    a = run(src, filename, "off", **kw)
    b = run(src, filename, "on", **kw)
    problems = []
    if a[0] != b[0]:
        problems.append(f"output differs:\n--- interpreter\n{a[0]}\n--- compiled\n{b[0]}")
    if a[1] != b[1]:
        problems.append(f"step counts differ: {a[1]} vs {b[1]}")
    if a[2] != b[2]:
        problems.append(f"errors differ:\n--- interpreter\n{a[2]}\n--- compiled\n{b[2]}")
    return problems


def compiled_routines(machine) -> list[str]:
    return [r.display for r in machine.jit.routines.values() if r.state == "compiled"]
