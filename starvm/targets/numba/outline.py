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

Left in the entry: statements with ``return``, ones that borrow an array (kernels.borrow:
its view must not outlive the array, which a helper's own variables may be) and ones with a
``break`` or ``continue`` of a loop around them (lower.py's ``repeat`` and ``while`` are
``while True:`` loops that end in ``if ...: break``: moved into a helper, away from its loop,
the jump is Python's "SyntaxError: 'break' outside loop" and the whole unit runs interpreted).
Such a statement stays in the function that holds the loop; one longer than a helper is
split inside like any other.
"""
from __future__ import annotations

import ast
import gc
import re
from collections import Counter
from functools import lru_cache

CHUNK_LINES = 300         # most lines of one helper's body (each helper costs a compile of its own)
OUTLINE_OVER = 600        # a function whose body is longer is outlined
_STAYS = ("borrow(",)     # a statement naming one of these stays where it is
_RETURN = re.compile(r"\breturn\b")
_JUMP = re.compile(r"\b(?:break|continue)\b")
# helpers (and lower.py's cycle functions) are called by compiled code only: without Numba's
# CPython and C wrappers, which are a fifth to a third of a small function's compile
INNER_DECORATOR = "@njit(cache=True, no_cfunc_wrapper=True, no_cpython_wrapper=True)"


def outline(text: str, prefix: str, chunk_lines: int = CHUNK_LINES, over: int = OUTLINE_OVER) -> str:
    """The source of one ``@njit`` function (``text``), its long statement runs moved into
    helpers named ``{prefix}{k}_{function}``, the helpers first; unchanged where its body has
    ``over`` lines or fewer."""
    if text.count("\n") <= over:      # shorter than `over` lines whole: nothing to parse
        return text
    return _outlined(text, prefix, chunk_lines, over)


@lru_cache(maxsize=4)
def _outlined(text: str, prefix: str, chunk_lines: int, over: int) -> str:
    """outline's work, remembered: the tier renders a routine once to see that it compiles
    and again for its module (a 10^4-statement routine's function parses and walks in seconds).
    The garbage collector waits meanwhile: its passes over the growing syntax tree made the
    parse of a function grow as the square of its length (10^4 statements: 2.7 s, 0.8 s without)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _outline_now(text, prefix, chunk_lines, over)
    finally:
        if enabled:
            gc.enable()


def _outline_now(text: str, prefix: str, chunk_lines: int, over: int) -> str:
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
    stores_at, loads_at = _names_by_line(fn)     # line -> names stored, loaded on it
    moved = {line for g in groups for line in range(g[0].lineno, g[-1].end_lineno + 1)}
    # lines loading each name (a name a group reads is read outside it where lines remain)
    load_lines = Counter(n for names in loads_at.values() for n in names)
    stored_before: set[str] = set()              # the entry's own stores on lines before the group
    stores_in_order = sorted(stores_at.items())
    seen = 0                                     # stores_in_order[:seen] are in stored_before
    returned: set[str] = set()                    # what earlier helpers hand back to the entry
    helpers: list[str] = []
    for k, group in enumerate(groups):           # in source order (_collect)
        first, last = group[0].lineno, group[-1].end_lineno
        used, loaded, stored = _names(group)
        while seen < len(stores_in_order) and stores_in_order[seen][0] < first:
            line, names = stores_in_order[seen]
            if line not in moved:
                stored_before |= names
            seen += 1
        # the entry's variables at the call: its own lines before it, what helpers returned
        defined = set(params) | returned | stored_before
        inside = Counter(n for line in range(first, last + 1) for n in loads_at.get(line, ()))
        read_outside = {n for n in stored if load_lines[n] > inside[n]}
        # inside a loop, what the group reads of the entry's variables may come from its last iteration
        carried = {n for n in loaded if n in defined} if id(group[0]) in in_loop else set()
        outs = [n for n in stored if n in read_outside or n in carried]
        # an assigned variable the entry reads on keeps its value where the group does not assign it
        args = [n for n in used if n in defined and (n in loaded or n in outs)]
        returned |= set(outs)
        name = f"{prefix}{k}_{fn.name}"
        indent = lines[first - 1][:len(lines[first - 1]) - len(lines[first - 1].lstrip())]
        body = [line[len(indent) - 4:] if line.strip() else line for line in lines[first - 1:last]]
        helper = [INNER_DECORATOR, f"def {name}({', '.join(args)}):", *body]
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
    if any(m in text for m in _STAYS):
        return True
    # generated names never hold these words: only a statement with one in its text is walked
    if _RETURN.search(text) is not None and any(isinstance(n, ast.Return) for n in ast.walk(s)):
        return True
    return _JUMP.search(text) is not None and _jumps_out(s)


def _jumps_out(s: ast.stmt) -> bool:
    """Whether ``s`` holds a ``break`` or ``continue`` of a loop outside it (one that a loop
    inside ``s`` holds in its body is that loop's: the body is not searched, its else is)."""
    stack: list[ast.AST] = [s]
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Break, ast.Continue)):
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While)):
            stack.extend(n.orelse)
            continue
        stack.extend(ast.iter_child_nodes(n))
    return False


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


def _names_by_line(fn: ast.FunctionDef) -> tuple[dict[int, set[str]], dict[int, set[str]]]:
    """(line -> the names stored on it, line -> the names loaded on it), in one walk."""
    stores: dict[int, set[str]] = {}
    loads: dict[int, set[str]] = {}
    stack: list = [fn]
    while stack:                 # ast.walk's nodes in another order, without its generators
        n = stack.pop()
        if type(n) is ast.Name:
            (stores if type(n.ctx) is ast.Store else loads).setdefault(n.lineno, set()).add(n.id)
            continue
        for field in n._fields:
            v = getattr(n, field, None)
            if type(v) is list:
                stack.extend(x for x in v if isinstance(x, ast.AST))
            elif isinstance(v, ast.AST):
                stack.append(v)
    return stores, loads
