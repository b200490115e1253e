"""Cases at the compiled tier's edges that gen.Gen's programs do not reach (issue 36, item 8).

``EdgeGen(seed)`` writes three kinds of small random program, each with the parameters it runs
with (constants given with -D / Machine(params=...), so that a handful of program texts, each a
Numba module compiled once, serve many runs):

- ``deep``: routines recursing (directly, through a second routine, or as a function whose
  result is used) to a depth drawn near and past a recursion limit drawn in 200-2000;
- ``output``: loops inside a compiled routine writing 10^4-10^5 lines, in some cases stopped
  by a failing statement inside the loop or after the routine returned;
- ``interrupt``: a long loop inside a routine that prints every K iterations, run as a
  ``star run`` subprocess and sent SIGINT after a random delay.

``check_case`` runs one on the interpreter and on the compiled tier and returns the problems
(empty: they agree): for ``deep`` and ``output`` output (line for line), step counts by kind and
the runtime error (message, position, Star call stack) equal; for ``interrupt`` exit 130, a
``star: interrupted at FILE:LINE:COL`` line naming a statement or call of the program, and the
output printed before it a prefix of the uninterrupted run's (the tiers stop at different
steps, so prefixes are compared, and the uninterrupted runs of both tiers agree on what they
share). bench/fuzz_compiled.py --cases runs campaigns of them, tests/jit/test_fuzz_compiled.py
a few.
"""
from __future__ import annotations

import dataclasses
import io
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import starvm

KINDS = ("deep", "output", "interrupt")
MOD = 1000003                     # keeps the integers of long chains small (exactness is Gen's edge_pct's)


@dataclasses.dataclass
class Case:
    kind: str
    seed: int
    source: str
    params: dict                  # the program's constants for this run
    max_depth: int | None = None  # the recursion limit (deep)
    delay: float = 0.0            # seconds after the first line before SIGINT (interrupt)
    note: str = ""                # what was drawn, for the report


class EdgeGen:
    """Random programs of one kind; ``shapes`` bounds how many distinct texts a kind draws
    from (each text is a Numba compile: tests use few, campaigns many)."""

    def __init__(self, seed: int, shapes: int | None = None):
        self.seed = seed
        self.R = random.Random(seed)
        # the text is drawn from its own stream: seeds that share a shape share a text
        self.T = random.Random(seed % shapes if shapes else seed)

    # ------------------------------------------------------------------ expressions and statements
    def expr(self, names, depth=2) -> str:
        T = self.T
        if depth <= 0 or T.random() < 0.3:
            return T.choice(names) if T.random() < 0.7 else str(T.randint(0, 9))
        op = T.choice(["+", "-", "*", "mod", "div", "+", "*"])
        left = self.expr(names, depth - 1)
        if op in ("mod", "div"):
            return f"({left} {op} {T.randint(1, 97)})"
        return f"({left} {op} {self.expr(names, depth - 1)})"

    def stmts(self, targets, names, count, ind) -> list[str]:
        T, pad, out = self.T, "  " * ind, []
        for _ in range(count):
            t = T.choice(targets)
            if T.random() < 0.25:
                out.append(f"{pad}if {self.expr(names)} > {self.expr(names)} then {t} := "
                           f"{self.expr(names)} mod {MOD} else {t} := {self.expr(names)} mod {MOD};")
            else:
                out.append(f"{pad}{t} := {self.expr(names)} mod {MOD};")
        return out

    # ------------------------------------------------------------------ deep recursion
    def deep(self) -> Case:
        T, R = self.T, self.R
        shape = T.choice(["procedure", "mutual", "function", "nested"])
        lines = ["program deep;", "const D = 10; D2 = 5;", "var a, b, c: integer;"]
        vs = ["d", "m", "t", "u"]
        period = T.randint(1, 60)
        report = f"  if d mod {period} = 0 then writeln('R ', d, ' ', m);" if T.random() < 0.6 else ""
        down = "Q(d - 1, m);" if shape == "mutual" else "R(d - 1, m);"
        lines += ["procedure R(d: integer; var m: integer);", "var t, u: integer;", "begin",
                  "  t := d; u := m;", *self.stmts(["t", "u"], vs, T.randint(0, 2), 1),
                  "  if d > 0 then", "  begin", *self.stmts(["m", "t"], vs, T.randint(0, 2), 2),
                  f"    {down}", *self.stmts(["m", "u"], vs, T.randint(0, 2), 2), "    m := m + t mod 5", "  end"]
        if T.random() < 0.5:
            lines += ["  else", "  begin", *self.stmts(["m", "u"], vs, T.randint(1, 2), 2), "    m := m + u", "  end"]
        lines[-1] += ";"
        if report:
            lines.append(report)
        lines.append("  t := t + 1")
        lines += ["end;"]
        if shape == "mutual":
            lines += ["procedure Q(d: integer; var m: integer);", "begin",
                      *self.stmts(["m"], ["d", "m"], T.randint(0, 2), 1), "  R(d, m)", "end;"]
        fvs = ["d", "e", "t"]
        lines += ["function F(d, e: integer): integer;", "var t: integer;", "begin", "  t := e;",
                  *self.stmts(["t"], fvs, T.randint(0, 2), 1),
                  f"  if d <= 0 then F := {self.expr(fvs)} mod {MOD}",
                  f"  else F := (F(d - 1, {self.expr(fvs)} mod {MOD}) + {self.expr(fvs)}) mod {MOD}", "end;"]
        lines += ["procedure O(d: integer; var m: integer);", "var k: integer;", "begin",
                  "  for k := 1 to 2 do", "  begin", "    R(d - k + 1, m);", "    m := m mod 1000", "  end", "end;"]
        main = {"procedure": "  R(D, a);", "mutual": "  R(D, a);", "function": "  b := F(D, a + 1);",
                "nested": "  O(D, a);"}[shape]
        lines += ["begin", f"  a := {T.randint(0, 50)}; b := {T.randint(0, 50)}; c := 0;", "  writeln('start');",
                  main, "  writeln(a, ' ', b);"]
        if T.random() < 0.5:            # a second, shallower recursion after the first
            lines += ["  c := F(D2, b);" if T.random() < 0.5 else "  R(D2, c);", "  writeln(c)"]
        else:
            lines[-1] = lines[-1].rstrip(";")
        lines.append("end.")
        # the calls a level: R (+ Q when mutual); the main block and O are frames too
        per_level = 2 if shape == "mutual" else 1
        limit = R.randint(200, 2000)
        frames = lambda d: per_level * (d + 1) + (1 if shape == "nested" else 0)   # noqa: E731
        target = limit + R.randint(-15, 15)               # near the limit, on either side
        d = max(0, (target - (1 if shape == "nested" else 0)) // per_level - 1)
        d2 = R.choice([d, d // 2, d + 1, R.randint(0, d)])
        return Case("deep", self.seed, "\n".join(lines) + "\n", {"D": d, "D2": d2}, max_depth=limit,
                    note=f"{shape}, depth {d} ({frames(d)} frames), limit {limit}")

    # ------------------------------------------------------------------ big output
    def output(self) -> Case:
        T, R = self.T, self.R
        shape = T.choice(["procedure", "function", "while"])
        inner = T.random() < 0.6
        fail = R.choice(["none", "none", "loop", "after"])     # data: one text serves every kind of ending
        vs = ["s", "t", "i"] + (["j"] if inner else [])
        args = T.choice(["i, ' ', s", "s", "'line ', i, ' ', t, ' ', s", "i, ' ', j, ' ', s" if inner else "t, ' ', i"])
        body = [*self.stmts(["t"], vs, T.randint(0, 2), 3),
                f"      s := (s * 31 + {self.expr(vs)}) mod {MOD};", f"      writeln({args});",
                "      c := c + 1;"]
        body.append("      if c = f then s := s div z;")
        body[-1] = body[-1].rstrip(";")
        loop = []
        if inner:
            loop += ["    for j := 1 to m do", "    begin", *body, "    end"]
        else:
            loop += ["    begin", *body, "    end"]
        head = ("W(n, m, f: integer; var s: integer)" if shape != "function"
                else "W(n, m, f, s0: integer): integer")
        local = "var s, i, j, t, c, z: integer;" if shape == "function" else "var i, j, t, c, z: integer;"
        lines = ["program output;", "const N = 100; M = 10; FAIL = 0; AFTER = 0;", "var s, r, z: integer;",
                 f"{'function' if shape == 'function' else 'procedure'} {head};",
                 local, "begin", "  z := 0; c := 0; t := 1; j := 0;"]
        if shape == "function":
            lines.append("  s := s0;")
        if shape == "while":
            lines += ["  i := 0;", "  while i < n do", "  begin", "    i := i + 1;", *loop, "  end"]
        else:
            lines += ["  for i := 1 to n do", "  begin", *loop, "  end"]
        if shape == "function":
            lines[-1] += ";"
            lines.append("  W := s")
        lines += ["end;", "begin", f"  s := {T.randint(1, 99)}; z := 0; r := 0;", "  writeln('start');",
                  "  r := W(N, M, FAIL, s);" if shape == "function" else "  W(N, M, FAIL, s);",
                  "  writeln('s = ', s);"]
        lines.append("  if AFTER = 1 then r := s div z;")
        lines += ["  writeln(r)", "end."]
        total = R.randint(10_000, 100_000)
        m = R.randint(2, 60) if inner else 1
        n = max(1, total // m)
        at = R.randint(1, n * m) if fail == "loop" else 0
        return Case("output", self.seed, "\n".join(lines) + "\n", {"N": n, "M": m, "FAIL": at, "AFTER": int(fail == "after")},
                    note=f"{shape}, {n * m} lines, {'fails at line %d' % at if at else fail}")

    # ------------------------------------------------------------------ interrupts
    def interrupt(self) -> Case:
        T, R = self.T, self.R
        vs = ["s", "t", "i"]
        lines = ["program interrupt;", "const N = 1000; K = 10;", "var s: integer;",
                 "procedure L(n, k: integer; var s: integer);", "var i, t: integer;", "begin", "  t := 1;",
                 "  for i := 1 to n do", "  begin", *self.stmts(["t"], vs, T.randint(0, 3), 2),
                 f"    s := (s * 31 + {self.expr(vs)}) mod {MOD};",
                 f"    if i mod k = 0 then writeln(i, ' ', {T.choice(['s', 't', 's + t'])})", "  end", "end;"]
        if T.random() < 0.4:            # a second routine the loop calls (a call as well as a back edge)
            lines.insert(3, "function G(x: integer): integer;")
            lines.insert(4, f"begin G := {self.expr(['x'])} mod {MOD} end;")
            lines[lines.index("  t := 1;")] = "  t := G(1);"
        lines += ["begin", f"  s := {T.randint(1, 99)};", "  writeln('start');", "  L(N, K, s)", "end."]
        k = R.randint(200, 20_000)
        return Case("interrupt", self.seed, "\n".join(lines) + "\n", {"N": 10 ** 12, "K": k},
                    delay=R.uniform(0.0, 2.0), note=f"every {k} iterations")

    def case(self, kind: str) -> Case:
        return getattr(self, kind)()


# ---------------------------------------------------------------------- checking
FILENAME = "edge.star"


def run(case: Case, jit: str, backend: str = "numpy", params: dict | None = None):
    """(output, step counts, rendered error or None, machine) of one in-process run."""
    out = io.StringIO()
    m = starvm.Machine(out=out, jit=jit, backend=backend, max_depth=case.max_depth,
                       params=params or case.params)
    err = None
    try:
        m.run(case.source, FILENAME)
    except starvm.StarError as e:
        err = e.render()
    return out.getvalue(), list(m.counts), err, m


def check_case(case: Case, backend: str = "numpy", star: list[str] | None = None) -> dict:
    """Run ``case`` on both tiers: {problems, compiled (routines that ran compiled), error,
    seconds, ...}. ``star``: the command that runs ``star`` (interrupt cases)."""
    t0 = time.perf_counter()
    if case.kind == "interrupt":
        rec = _check_interrupt(case, backend, star)
    else:
        rec = _check_in_process(case, backend)
    rec["seconds"] = round(time.perf_counter() - t0, 3)
    return rec


def _check_in_process(case: Case, backend: str) -> dict:
    a = run(case, "off", backend)
    b = run(case, "on", backend)
    problems = []
    if a[0] != b[0]:
        problems.append("output differs: " + first_difference(a[0], b[0]))
    if a[1] != b[1]:
        problems.append(f"step counts differ: {a[1]} vs {b[1]}")
    if a[2] != b[2]:
        problems.append(f"errors differ:\n--- interpreter\n{a[2]}\n--- compiled\n{b[2]}")
    compiled = sorted(r.display for r in b[3].jit.routines.values()
                      if getattr(r, "compiled_calls", 0) or getattr(r, "restarts", 0))
    # (not a mismatch: a tier may leave a routine interpreted, e.g. the GPU tier recursion;
    # the campaign counts the cases that ran compiled, the tests require it on the CPU)
    fallbacks = {} if compiled else {k: str(v) for k, v in b[3].jit.skipped.items()}
    error = None if a[2] is None else a[2].split(": error: ", 1)[-1].splitlines()[0]
    if case.kind == "deep" and error is not None and "recursion too deep" not in error:
        problems.append(f"a deep case stopped on something else than its depth: {error}")
    return dict(problems=problems, compiled=compiled, fallbacks=fallbacks, error=error, lines=a[0].count("\n"))


def first_difference(want: str, got: str, names=("interpreter", "compiled")) -> str:
    w, g = want.splitlines(), got.splitlines()
    for i, (x, y) in enumerate(zip(w, g)):
        if x != y:
            return f"line {i + 1}: {names[0]} {x!r}, {names[1]} {y!r}"
    return f"{names[0]} printed {len(w)} lines, {names[1]} {len(g)}"


def statement_positions(source: str) -> set[tuple[int, int]]:
    """(line, column) of every statement of a program and of the expressions in them: where
    an interrupt may stop (the interpreter names the node it was evaluating, an operator's
    position for a binary expression; the compiled tier the loop or call polling)."""
    from starvm.frontend import ast as A
    from starvm.frontend.parser import parse
    declarations = (A.TypeSpec, A.VarDecl, A.Param, A.Routine, A.Program)
    found, todo = set(), [parse(source, FILENAME)]
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            todo.extend(node)
            continue
        if not isinstance(node, A.Node):
            continue
        if not isinstance(node, declarations) and node.loc is not None:
            found.add((node.loc.line, node.loc.column))
        todo.extend(getattr(node, f.name) for f in dataclasses.fields(node)
                    if f.name not in ("loc", "ref", "type"))
    return found


_INTERRUPTED = re.compile(r"^star: interrupted at (.*):(\d+):(\d+)$", re.M)


def star_command() -> list[str]:
    return [sys.executable, "-m", "starvm"]


def interrupted_run(case: Case, jit: str, backend: str, path: Path, star: list[str]) -> dict:
    """``star run`` in a subprocess, SIGINT ``case.delay`` s after its first line."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")        # the first line is seen as soon as it is written
    env.pop("STARVM_JIT", None)
    cmd = [*star, "run", "--jit", jit, "--backend", backend,
           *(f"-D{k}={v}" for k, v in case.params.items()), str(path)]
    # SIGINT as a terminal gives it: a shell's background job (a campaign started with &)
    # ignores SIGINT, and Python keeps an ignored SIGINT ignored
    # unbuffered: communicate() reads the pipe itself, so a buffered readline() would keep
    # (and lose) whatever it read past the first line
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, bufsize=0,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        first = p.stdout.readline()          # 'start': the program runs (imports and parsing done)
        time.sleep(case.delay)
        p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            return dict(rc="hang", out=(first + out).decode(), err=err.decode())
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    return dict(rc=p.returncode, out=(first + out).decode(errors="replace"), err=err.decode(errors="replace"))


def _check_interrupt(case: Case, backend: str, star: list[str] | None) -> dict:
    star = star or star_command()
    positions = statement_positions(case.source)
    problems, lines, where = [], {}, {}
    with tempfile.TemporaryDirectory(prefix="starvm-edge-") as tmp:
        path = Path(tmp) / FILENAME
        path.write_text(case.source)
        for jit in ("off", "on"):
            got = interrupted_run(case, jit, backend, path, star)
            tier = {"off": "interpreter", "on": "compiled"}[jit]
            if got["rc"] != 130:
                problems.append(f"{tier}: exit {got['rc']}, not 130; stderr:\n{got['err'][-2000:]}")
                continue
            found = _INTERRUPTED.search(got["err"])
            if not found or found.group(1) != str(path):
                problems.append(f"{tier}: no 'star: interrupted at {path}:LINE:COL' line; stderr:\n{got['err'][-2000:]}")
            else:
                at = (int(found.group(2)), int(found.group(3)))
                where[tier] = at
                if at not in positions:
                    problems.append(f"{tier}: interrupted at {at}, not a statement (or an expression in one) of the program")
            if got["err"].count("Traceback"):
                problems.append(f"{tier}: a traceback:\n{got['err'][-2000:]}")
            lines[tier] = got["out"].count("\n")
            problems += _prefix_problems(case, jit, backend, got["out"], tier)
    return dict(problems=problems, compiled=["(subprocess)"], error="interrupted", lines=lines, where=where)


def _prefix_problems(case: Case, jit: str, backend: str, printed: str, tier: str) -> list[str]:
    """Is ``printed`` a prefix of the uninterrupted run's output? The program prints only
    in its loop (after 'start'), so a run of N = K * lines iterations prints all of it; the
    other tier's uninterrupted run of the iterations the interpreter can afford must agree
    with it on the lines both print."""
    k = case.params["K"]
    done = printed.count("\n") - 1 + (not printed.endswith("\n"))       # the loop's lines, a cut one too
    full = run(case, jit, backend, params={**case.params, "N": k * max(done, 0)})[0]
    problems = []
    if not full.startswith(printed):
        problems.append(f"{tier}: the output before the interrupt is not a prefix of the uninterrupted run's: "
                        + first_difference(full, printed, ("uninterrupted", "interrupted")))
    # (what the interpreter runs in about half a second)
    other = run(case, "off" if jit == "on" else "on", backend,
                params={**case.params, "N": min(k * (done + 1), 300_000)})[0]
    if not full.startswith(other) and not other.startswith(full):
        problems.append(f"{tier}: the tiers' uninterrupted runs differ: "
                        + first_difference(other, full, ("the other tier", tier)))
    return problems
