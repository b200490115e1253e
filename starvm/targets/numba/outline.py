"""Split a long generated function into helper functions of bounded size (outlining).

Numba and LLVM compile one function in time that grows faster than its length (LLVM's
optimisation of one function whose kernels are all inlined into it: a 1000-statement routine
took 5x as long as two of 500), so a long routine is compiled as an entry function that calls
helpers of at most ``CHUNK_LINES`` lines each: runs of consecutive statements move into a
helper ``@njit`` function that takes the variables they use that are defined before them and
returns the ones they assign that are read outside them. Statements too long for one helper
are split inside (a loop's or an if's body, at any depth). The statements, their order,
their sites and so their steps, errors and output are unchanged; only where they run.
The entry calls its helpers through linked calls (jit/linking.py): each helper's machine code is
made once, not again inside the entry as Numba's linking of a callee would.

Left in the entry: statements with ``return`` and ones that borrow an array (kernels.borrow:
its view must not outlive the array, which a helper's own variables may be).
"""
from __future__ import annotations

import ast

CHUNK_LINES = 300         # most lines of one helper's body (each helper costs a compile of its own)
OUTLINE_OVER = 600        # a function whose body is longer is outlined
_STAYS = ("borrow(",)     # a statement naming one of these stays where it is


def outline(text: str, prefix: str, chunk_lines: int = CHUNK_LINES, over: int = OUTLINE_OVER) -> str:
    """The source of one ``@njit`` function (``text``), its long statement runs moved into
    helpers named ``{prefix}{k}_{function}``, the helpers first; unchanged where its body has
    ``over`` lines or fewer."""
    if text.count("\n") <= over:      # shorter than `over` lines whole: nothing to parse
        return text
    lines = text.split("\n")
    tree = ast.parse(text)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return text
    fn = tree.body[0]
    if fn.body[-1].end_lineno - fn.body[0].lineno + 1 <= over:
        return text
    params = [a.arg for a in fn.args.args]
    groups: list[list[ast.stmt]] = []
    in_loop: set[int] = set()     # id() of the first statement of each group inside a loop
    _collect(fn.body, lines, chunk_lines, groups, in_loop, False)
    groups = [g for g in groups if _span(g) > 1]
    if not groups:
        return text
    stores_at = _names_by_line(fn, ast.Store)    # line -> names stored on it
    loads_at = _names_by_line(fn, ast.Load)
    moved = {line for g in groups for line in range(g[0].lineno, g[-1].end_lineno + 1)}
    returned: set[str] = set()                    # what earlier helpers hand back to the entry
    helpers: list[str] = []
    for k, group in enumerate(groups):
        first, last = group[0].lineno, group[-1].end_lineno
        used, loaded, stored = _names(group)
        # the entry's variables at the call: its own lines before it, what helpers returned
        defined = set(params) | returned | {n for line, names in stores_at.items()
                                            if line < first and line not in moved for n in names}
        read_outside = {n for line, names in loads_at.items() if not first <= line <= last for n in names}
        # inside a loop, what the group reads of the entry's variables may come from its last iteration
        carried = {n for n in loaded if n in defined} if id(group[0]) in in_loop else set()
        outs = [n for n in stored if n in read_outside or n in carried]
        # an assigned variable the entry reads on keeps its value where the group does not assign it
        args = [n for n in used if n in defined and (n in loaded or n in outs)]
        returned |= set(outs)
        name = f"{prefix}{k}_{fn.name}"
        indent = lines[first - 1][:len(lines[first - 1]) - len(lines[first - 1].lstrip())]
        body = [line[len(indent) - 4:] if line.strip() else line for line in lines[first - 1:last]]
        helper = ["@njit(cache=True)", f"def {name}({', '.join(args)}):", *body]
        if outs:
            helper.append(f"    return ({''.join(o + ', ' for o in outs)})")
        helpers.append("\n".join(helper) + "\n")
        call = f"{name}({', '.join(args)})"
        lines[first - 1] = indent + (f"{''.join(o + ', ' for o in outs)}= {call}" if outs else call)
        for i in range(first, last):
            lines[i] = None
    return "\n".join(helpers) + "\n" + "\n".join(line for line in lines if line is not None)


def _span(stmts: list[ast.stmt]) -> int:
    return stmts[-1].end_lineno - stmts[0].lineno + 1


def _stays(s: ast.stmt, lines: list[str]) -> bool:
    text = "\n".join(lines[s.lineno - 1:s.end_lineno])
    return any(isinstance(n, ast.Return) for n in ast.walk(s)) or any(m in text for m in _STAYS)


def _collect(stmts: list[ast.stmt], lines: list[str], limit: int, groups: list, in_loop: set, looped: bool) -> None:
    """Runs of consecutive statements of ``stmts`` of at most ``limit`` lines into ``groups``
    (``in_loop``: those inside a loop); a statement longer than that is split inside, one that
    stays ends a run."""
    run: list[ast.stmt] = []

    def close():
        if run:
            groups.append(list(run))
            if looped:
                in_loop.add(id(run[0]))
            run.clear()
    for s in stmts:
        size = s.end_lineno - s.lineno + 1
        if _stays(s, lines) or size > limit:
            close()
            if size > limit:
                for body in _bodies(s):
                    _collect(body, lines, limit, groups, in_loop, looped or isinstance(s, (ast.For, ast.While)))
            continue
        if run and _span(run + [s]) > limit:
            close()
        run.append(s)
    close()


def _bodies(s: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists directly inside s (a loop's body, an if's branches)."""
    return [b for b in (getattr(s, "body", None), getattr(s, "orelse", None)) if isinstance(b, list) and b]


def _names(stmts: list[ast.stmt]) -> tuple[list[str], set[str], list[str]]:
    """(every variable the statements name, in order of first use; those they read; those
    they assign, in order)."""
    used: dict[str, None] = {}
    loaded: set[str] = set()
    stored: dict[str, None] = {}
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Name):
                used.setdefault(n.id)
                if isinstance(n.ctx, ast.Store):
                    stored.setdefault(n.id)
                else:
                    loaded.add(n.id)
    return list(used), loaded, list(stored)


def _names_by_line(fn: ast.FunctionDef, ctx) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ctx):
            out.setdefault(n.lineno, set()).add(n.id)
    return out
