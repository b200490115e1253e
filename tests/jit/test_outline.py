"""A long routine compiles as an entry and helpers of bounded size (targets/numba/outline.py,
issue 36: compile time linear in size). The structure, without compiling: the helpers' sizes
and names, the statements moved in order, short and recursive routines left whole; on random
Python functions, that an outlined function computes what the original did (the variables a
helper takes and returns); and one routine outlined into helpers of a few lines, compiled,
against the interpreter (output, steps, an error's position and call stack, a step limit);
loops ended by a generated ``break`` (``repeat``, a ``while`` whose test has effects) that must stay
with its loop, at the tier's sizes and compiled against the interpreter; random functions
with ``break`` and ``continue``."""
from __future__ import annotations

import ast
import gc
import io
import random
import numpy as np
import pytest

import starvm
from starvm.check import Checker, Environment
from starvm.frontend.parser import parse
from starvm.ir.lower import lower_unit
from starvm.targets.numba import lower
from starvm.targets.numba.lower import ModuleGen
from starvm.targets.numba.outline import CHUNK_LINES, OUTLINE_OVER, outline
from reference.jit_differential import jit_cache  # noqa: F401 - the compiled-code cache, a fresh folder

STATEMENTS = ["a := a + b;", "b := (a * 3) mod 17;", "V := V or W;", "W := COL((a mod n) + 1, P);",
              "X := ROW((b mod n) + 1, P);", "c := NUMB(V) + c;"]


def long_routine(name: str, statements: int, loops: bool = False, recursive: bool = False) -> str:
    if loops:
        body = [f"for i := 1 to 2 do begin {' '.join(STATEMENTS[(k + j) % 6] for j in range(3))} end;"
                for k in range(statements // 4)]
    else:
        body = [STATEMENTS[k % 6] for k in range(statements)]
    if recursive:
        body.append(f"if n > 1 then {name}(n - 1, P);")
    return (f"proc {name}(n: integer; var P: table);\nvar a, b, c, i: integer; V, W: slice; X: word;\nbegin\n"
            "  a := 1; b := 2; c := 0; V := COL(1, P); W := COL(2, P);\n  " + "\n  ".join(body)
            + "\n  writeln(a, ' ', b, ' ', c, ' ', NUMB(V));\nend;\n")


def bodies_of(text: str, filename: str = "long.star") -> dict:
    unit = lower_unit(Checker(Environment(library=starvm.stdlib.lookup)).check_program(parse(text, filename)))
    bodies = {info.pyname: (info, body) for info, body in unit.routines}
    if unit.main is not None:
        bodies["main_"] = (None, unit.main)
    return bodies


def functions(source: str) -> dict[str, ast.FunctionDef]:
    return {f.name: f for f in ast.parse(source).body if isinstance(f, ast.FunctionDef)}


def body_lines(f: ast.FunctionDef) -> int:
    return f.body[-1].end_lineno - f.body[0].lineno + 1


def small_helpers(monkeypatch, chunk_lines=20, over=40):
    """Outlining as the tier does it, with helpers of a few lines (rendering stays fast)."""
    monkeypatch.setattr(lower, "outline", lambda text, prefix: outline(text, prefix, chunk_lines=chunk_lines, over=over))


@pytest.mark.parametrize("loops", [False, True], ids=["straight", "small loops"])
def test_a_long_routine_is_an_entry_and_helpers_of_bounded_size(loops, monkeypatch):
    bodies = bodies_of(long_routine("LONG", 200, loops))
    monkeypatch.setattr(lower, "outline", lambda text, prefix: text)
    whole = ModuleGen(bodies).render(["r_long"]).source
    small_helpers(monkeypatch)
    source = ModuleGen(bodies).render(["r_long"]).source
    funcs = functions(source)
    helpers = [n for n in funcs if n != "f_r_long"]
    assert len(helpers) >= (200 // 4 * 5 if loops else 200) // 20 - 1
    assert all(n == f"o{k}_f_r_long" for k, n in enumerate(helpers))
    # each helper: at most 20 moved lines and its return; the entry: its prologue and one call a helper
    assert max(body_lines(funcs[n]) for n in helpers) <= 20 + 1
    assert body_lines(funcs["f_r_long"]) <= 5 + len(helpers)
    # the statements are the ones rendered without outlining, in the same order
    moved = [line.strip() for n in helpers for line in ast.get_source_segment(source, funcs[n]).split("\n")[1:-1]]
    assert moved == [line.strip() for line in whole.split("\n") if line.strip() in set(moved)]
    assert len(moved) > 200 * 0.9


def test_the_tier_outlines_past_outline_over_lines_into_chunk_lines():
    def function(lines: int) -> str:
        return "@njit(cache=True)\ndef f_r_x(p0):\n" + "".join(f"    v{i} = p0 + {i}\n" for i in range(lines - 1)) + "    return (p0,)\n"
    assert outline(function(OUTLINE_OVER), "o") == function(OUTLINE_OVER)
    funcs = functions(outline(function(OUTLINE_OVER + 1), "o"))
    assert len(funcs) == 1 + -(-OUTLINE_OVER // CHUNK_LINES)
    assert max(body_lines(f) for n, f in funcs.items() if n != "f_r_x") <= CHUNK_LINES + 1


def test_short_and_recursive_routines_stay_whole(monkeypatch):
    small_helpers(monkeypatch)
    bodies = bodies_of(long_routine("SHORT", 10) + long_routine("SELF", 100, recursive=True)
                       + long_routine("A", 100, recursive=True).replace("A(n - 1, P)", "B(n - 1, P)")
                       + "proc B(n: integer; var P: table); begin A(n, P); end;\n")
    source = ModuleGen(bodies).render(["r_short", "r_self", "r_a"]).source
    assert not [n for n in functions(source) if n.startswith("o")]
    assert body_lines(functions(source)["f_r_self"]) > 100
    assert [n for n in functions(ModuleGen(bodies).render(["r_b"]).source) if n.startswith("o")] == []


ROUTINE = """
proc R(n, m: integer; var P: table);
var a, b, c, i: integer; V, W: slice; X: word;
begin
  a := 1; b := 2; c := 0; V := COL(1, P); W := COL(2, P);
  for i := 1 to m do
  begin
    a := a + b; b := (a * 3) mod 17;
    V := V or W; W := COL((a mod n) + 1, P);
    if SOME(W) then c := c + 1 else X := ROW((b mod n) + 1, P);
    writeln(i, ' ', a, ' ', NUMB(V));
  end;
  c := c + NUMB(V);
  W := COL((c mod n) + 1, P);
  writeln(a, ' ', b, ' ', c, ' ', NUMB(W));
end;
"""


def test_an_outlined_routine_compiled_equals_the_interpreter(monkeypatch, jit_cache):
    """Helpers of 3 lines (so a short routine is outlined, and one compile is all the test
    costs): the same output, steps by kind, error (n = 0: mod by zero inside a helper, in a
    loop) and step limit as interpreted."""
    small_helpers(monkeypatch, chunk_lines=3, over=0)
    assert len([n for n in functions(ModuleGen(bodies_of(ROUTINE)).render(["r_r"]).source) if n.startswith("o")]) >= 5

    def call(jit: str, n: int, m: int, max_steps=None):
        out = io.StringIO()
        machine = starvm.Machine(out=out, jit=jit, **({"max_steps": max_steps} if max_steps else {}))
        machine.load(ROUTINE, "outlined.star")
        bits = np.zeros((7, 7), bool)
        for j in range(7):
            bits[j, j] = bits[(j + 1) % 7, j] = True
        table = machine.table(bits)
        try:
            machine.call("R", n, m, table)
            err = None
        except starvm.StarError as e:
            err = e.render()
        states = {r.display: r.state for r in machine.jit.routines.values()} if machine.jit else {}
        return out.getvalue(), list(machine.counts), err, states
    for args in [(7, 5, None), (0, 3, None), (7, 40, 60)]:
        a, b = call("off", *args), call("on", *args)
        assert b[3] == {"R": "compiled"}
        assert a[:3] == b[:3], args
    assert "division by zero" in call("off", 0, 3)[2]


# ------------------------------------------------------------------ loops left by lower.py's break
# Star has no break, but lower.py writes one: `repeat` is `while True: ... if cond: break`, and
# a `while` whose test calls a routine with effects is `while True: t = ...; if not t: break`.
# A run of the loop's body moved into a helper must leave that break with its loop.
LOOPS = """
function nextk(var k: integer): integer;
begin k := k + 1; nextk := k end;

proc L(n, m, q, r: integer; var P: table);
var a, b, c, i, k: integer; V, W: slice;
begin
  a := 1; b := 2; c := 0; k := 0; V := COL(1, P); W := COL(2, P);
  repeat
    a := a + b; b := (a * 3) mod 17;
    V := V or W; W := COL((a mod n) + 1, P);
    if SOME(W) then c := c + 1;
    k := k + 1;
    writeln('repeat ', k, ' ', a, ' ', NUMB(V));
  until k >= m;
  k := 0;
  while nextk(k) <= q do
  begin
    a := (a + c) mod 1000; b := (a * 5) mod 13;
    V := V xor W; W := COL((b mod n) + 1, P);
    writeln('while ', k, ' ', a, ' ', NUMB(V));
  end;
  i := 0;
  while i < r do
  begin
    i := i + 1; c := c + a mod 3; a := (a * 7 + b) mod 1009;
    if a > 500 then V := V and W else V := V or W;
    writeln('plain ', i, ' ', a);
  end;
  writeln(a, ' ', b, ' ', c, ' ', k, ' ', NUMB(V));
end;
"""


def breaks_stay_with_their_loops(source: str) -> None:
    """The source compiles as Python (a break outside its loop is a SyntaxError, and Numba's
    failure the tier would fall back from), and no helper holds a break or continue."""
    compile(source, "unit.py", "exec")
    for name, f in functions(source).items():
        if name.startswith("o"):
            assert not [n for n in ast.walk(f) if isinstance(n, (ast.Break, ast.Continue))], name


@pytest.mark.parametrize("loop", ["repeat", "while"])
def test_a_loop_longer_than_a_helper_keeps_its_break_at_the_tiers_sizes(loop):
    """A `repeat` or an effectful `while` around 700 statements, rendered at the tier's own
    CHUNK_LINES and OUTLINE_OVER (not compiled by Numba): its body is split into helpers, its
    break stays in the entry, the module compiles as Python (it failed with "'break' outside loop", and every
    routine of the unit ran interpreted)."""
    body = "\n    ".join(STATEMENTS[k % 2] for k in range(700))
    if loop == "repeat":
        text = f"repeat\n    {body}\n    k := k + 1;\n  until k >= n;"
    else:
        text = f"while nextk(k) <= n do\n  begin\n    {body}\n  end;"
    source = ModuleGen(bodies_of(LOOPS.split("proc L")[0] + "proc R(n: integer);\nvar a, b, k: integer;\nbegin\n"
                                 f"  a := 1; b := 2; k := 0;\n  {text}\n  writeln(a, ' ', b, ' ', k);\nend;\n")
                       ).render(["r_r"]).source
    funcs = functions(source)
    assert len([n for n in funcs if n.startswith("o")]) >= 700 // CHUNK_LINES
    assert sum(isinstance(n, ast.Break) for n in ast.walk(funcs["f_r_r"])) == 1
    breaks_stay_with_their_loops(source)


def test_loops_with_breaks_outlined_compiled_equal_the_interpreter(monkeypatch, jit_cache):
    """LOOPS outlined into helpers of 3 lines, compiled once: the same output, steps by kind
    and step-limit error as interpreted, with each loop ended by its condition (sizes as data:
    m iterations of `repeat`, q of the effectful `while`, r of the plain one) and then by
    the step limit inside each of the three in turn."""
    small_helpers(monkeypatch, chunk_lines=3, over=0)
    source = ModuleGen(bodies_of(LOOPS)).render(["r_l"]).source
    assert len([n for n in functions(source) if n.startswith("o")]) >= 10
    breaks_stay_with_their_loops(source)

    def call(jit: str, n: int, m: int, q: int, r: int, max_steps=None):
        out = io.StringIO()
        machine = starvm.Machine(out=out, jit=jit, **({"max_steps": max_steps} if max_steps else {}))
        machine.load(LOOPS, "loops.star")
        bits = np.zeros((7, 7), bool)
        for j in range(7):
            bits[j, j] = bits[(j + 2) % 7, j] = True
        table = machine.table(bits)
        try:
            machine.call("L", n, m, q, r, table)
            err = None
        except starvm.StarError as e:
            err = e.render()
        states = {r.display: r.state for r in machine.jit.routines.values()} if machine.jit else {}
        return out.getvalue(), list(machine.counts), err, states
    for args in [(7, 1, 0, 0), (5, 6, 4, 30)]:       # each loop ended by its condition
        a, b = call("off", *args), call("on", *args)
        assert b[3]["L"] == "compiled", b[3]
        assert a[:3] == b[:3], args
        lines = a[0].split("\n")
        assert [sum(x.startswith(k + " ") for x in lines) for k in ("repeat", "while", "plain")] == list(args[1:])
        assert a[2] is None
    for args, loop in [((7, 10**9, 0, 0), "repeat"), ((7, 2, 10**9, 0), "while"), ((7, 1, 1, 10**9), "plain")]:
        a, b = call("off", *args, max_steps=400), call("on", *args, max_steps=400)
        assert b[3]["L"] == "compiled", b[3]
        assert a[:3] == b[:3], args
        assert a[0].split("\n")[-2].startswith(loop + " ") and "step" in a[2], (args, a[0][-200:], a[2])


# ------------------------------------------------------------------ random functions, run as Python
def random_block(rng: random.Random, depth: int, names: list[str], temps: list[int], looped: bool = False) -> list[str]:
    out = []
    for _ in range(rng.randint(1, 6)):
        kind = rng.random()
        a, b, c = (rng.choice(names) for _ in range(3))
        if looped and depth < 4 and rng.random() < 0.2:     # a break or continue of the loop around, under an if
            out.append(f"if {a} > {b}:")
            out += ["    " + s for s in random_block(rng, depth + 1, names, temps, looped)]
            out.append("    " + rng.choice(["break", "continue"]))
            continue
        if kind < 0.5 or depth > 2 or len(names) < 2:
            out.append(f"{a} = ({b} + {c} * {rng.randint(1, 5)}) % 1009")
        elif kind < 0.6:
            temps[0] += 1
            out += [f"t{temps[0]} = {b} - {c}", f"{a} = t{temps[0]} % 97"]
        elif kind < 0.75:
            out.append(f"if {a} > {b}:")
            out += ["    " + s for s in random_block(rng, depth + 1, names, temps, looped)]
            if rng.random() < 0.5:
                out.append("else:")
                out += ["    " + s for s in random_block(rng, depth + 1, names, temps, looped)]
        elif kind < 0.9:
            out.append(f"for {a} in range({rng.randint(0, 3)}):")
            out += ["    " + s for s in random_block(rng, depth + 1, names, temps, True)]
        else:
            out.append(f"while {a} > 50:")
            out += ["    " + s for s in [f"{a} = {a} // 2"] + random_block(rng, depth + 1, [n for n in names if n != a], temps, True)]
    return out


def njit(**_options):
    return lambda f: f


@pytest.mark.parametrize("seed", range(40))
def test_an_outlined_function_computes_what_the_original_does(seed):
    rng = random.Random(seed)
    names = [f"v{i}" for i in range(rng.randint(2, 6))]
    temps = [0]
    body = [f"{n} = p{i % 2}" for i, n in enumerate(names)]
    for _ in range(rng.randint(3, 25)):
        body += random_block(rng, 0, names, temps)
    body.append(f"return ({', '.join(names)},)")
    text = "@njit(cache=True)\ndef f_r_x(p0, p1):\n" + "\n".join("    " + s for s in body) + "\n"
    chunk = rng.randint(2, 8)
    outlined = outline(text, "o", chunk_lines=chunk, over=0)
    assert outlined != text
    assert max(body_lines(f) for n, f in functions(outlined).items() if n != "f_r_x") <= chunk + 1
    want, got = {"njit": njit}, {"njit": njit}
    exec(text, want)
    exec(outlined, got)
    for p in [(0, 0), (3, 70), (123, 999), (-5, 60)]:
        assert got["f_r_x"](*p) == want["f_r_x"](*p), outlined


def test_a_loop_carries_what_a_helper_reads_and_assigns():
    text = ("@njit(cache=True)\ndef f_r_x(p0, p1):\n    v0 = p0\n    v1 = p1\n    for v2 in range(3):\n"
            "        v0 = v0 + 1\n        v1 = v1 + v0\n    return (v1,)\n")
    outlined = outline(text, "o", chunk_lines=2, over=0)
    assert "o0_f_r_x" in outlined
    want, got = {"njit": njit}, {"njit": njit}
    exec(text, want)
    exec(outlined, got)
    assert got["f_r_x"](1, 0) == want["f_r_x"](1, 0) == (2 + 3 + 4,)


def test_a_routine_rendered_again_is_not_outlined_again(monkeypatch):
    """The tier renders a routine to see that it compiles, then for its module: the second
    outline is the first's (a 10^4-statement function parses and walks in seconds); the
    garbage collector, paused while it parses, runs again after."""
    from starvm.targets.numba import outline as outline_module
    small_helpers(monkeypatch)
    outline_module._outlined.cache_clear()
    parses, parse = [], ast.parse
    monkeypatch.setattr(outline_module.ast, "parse", lambda *a, **k: (parses.append(1), parse(*a, **k))[1])
    bodies = bodies_of(long_routine("LONG", 100))
    first = ModuleGen(bodies).render(["r_long"]).source
    assert ModuleGen(bodies).render(["r_long"]).source == first
    assert len(parses) == 1 and len([n for n in functions(first) if n.startswith("o")]) >= 4
    assert gc.isenabled()
