"""Run Star programs on the interpreter and on the compiled tier; say what differs.

``differences`` compares two runs of one text (``--jit off`` and ``--jit on``). ``check_program``
does the differential test of one generated program (tests/reference/gen.py) for the compiled
tier's campaign (bench/fuzz_compiled.py, tests/jit/test_fuzz_compiled.py): the reference model,
the interpreter and the compiled tier, compared in output, step counts by kind and runtime
errors (message, position and Star call stack), then both tiers again under a step limit; it
also says which of the generator's features ran compiled and why the others did not.
"""
from __future__ import annotations

import contextlib
import io
import operator
import os
import random
import re
import sys
from time import perf_counter

import pytest

import starvm


def run(src, filename: str, jit: str, **kw):
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
    return _tier_differences(a, b)


def _tier_differences(a, b, what: str = "") -> list[str]:
    problems = []
    if a[0] != b[0]:
        problems.append(f"{what}output differs:\n--- interpreter\n{a[0]}\n--- compiled\n{b[0]}")
    if a[1] != b[1]:
        problems.append(f"{what}step counts differ: {a[1]} vs {b[1]}")
    if a[2] != b[2]:
        problems.append(f"{what}errors differ:\n--- interpreter\n{a[2]}\n--- compiled\n{b[2]}")
    return problems


def compiled_routines(machine) -> list[str]:
    return [r.display for r in machine.jit.routines.values() if r.state == "compiled"]


# ------------------------------------------------------------------ one generated program, three ways
# What the generator's programs exercise, and where it lives (reported per feature: in how
# many programs it ran, and in how many it ran compiled).
FEATURES = ("main block", "procedure with var parameters (P1)", "local table (P1)",
            "function result in an expression (F1, F2)", "recursion (RP, RF)", "mutual recursion (RP, RQ)",
            "parallel for (main block)", "library routine body", "runtime error", "step limit")
FILENAME = "fuzz.star"
_BIG = 1 << 40
_AT = re.compile(r" \(at [^)]*\)")


def check_program(prog, backend="numpy", error_at: str | None = None, limit_seed: int | None = None) -> dict:
    """The differential test of one program of ``gen.Gen`` (``error_at``: the Gen's
    ``error_at``, where it put a failing statement). ``limit_seed``: also run both tiers
    under a step limit drawn from it, below what the program needs. Returns a record:
    problems (empty: all agree), features {name: [ran, ran compiled]}, fallbacks {routine:
    why it ran interpreted}, error (the model's exception name or None), compile_s, seconds."""
    from . import harness  # noqa: F401 - keeps each library file's parse tree (several machines per program)
    from .gen import render
    from .model import Interp
    t0 = perf_counter()
    src = render(prog)
    model = Interp(prog)
    try:
        with _python_frames(prog.max_depth):
            model.run()
        model_error = None
    except (AssertionError, ZeroDivisionError) as e:     # the model's checks: a Star runtime error
        model_error = type(e).__name__
    want = "".join(model.out)
    want_steps = {k: c for k, c in model.counts.items() if c}
    parsed = starvm.compile(src, FILENAME, check=False)
    kw = dict(backend=backend, native=False)     # natives off: the library bodies are compiled too
    if prog.max_depth:
        kw["max_depth"] = prog.max_depth
    interp = run(parsed, FILENAME, "off", **kw)
    comp = run(parsed, FILENAME, "on", **kw)
    problems = _against_model("interpreter", interp, want, want_steps, model_error)
    # the compiled tier's integers are the interpreter's, past 64 bits too (a call that passes
    # them runs again interpreted): an overflow error of the tier's own is a mismatch
    problems += _against_model("compiled", comp, want, want_steps, model_error)
    problems += _tier_differences(interp, comp)
    if prog.edges:       # --jit auto, every routine compiled at its first call
        with _environment(STARVM_JIT_THRESHOLD="0"):
            problems += _tier_differences(interp, run(parsed, FILENAME, "auto", **kw), "on --jit auto: ")
    limit = None
    if limit_seed is not None and model_error is None and not problems:
        limit, more = _step_limit_runs(parsed, kw, limit_seed, natives=prog.edges)
        problems += more
    record = dict(problems=problems, error=model_error, limit=limit,
                  compile_s=round(sum(getattr(r, "compile_seconds", 0.0) for r in comp[3].jit.routines.values()), 3))
    record.update(_features(prog, model, comp[3], error_at, model_error, limit))
    record["beyond_64_bits"] = _beyond_64_bits(prog)    # its integers passed 64 bits (checked as any other)
    # the compiled routines that stopped and ran again from their entry (call.JitRoutine.restart)
    record["restarted"] = sorted(r.display for r in comp[3].jit.routines.values() if getattr(r, "restarts", 0))
    record["cache_keys"] = sorted(program_cache_keys(comp[3]))
    record["seconds"] = round(perf_counter() - t0, 3)
    return record


def _against_model(name, got, want, want_steps, model_error) -> list[str]:
    out, _counts, err, m = got
    problems = []
    if out != want:
        problems.append(f"{name}: output differs from the reference model\n" + _first_difference(want, out))
    if model_error is None:
        if err is not None:
            problems.append(f"{name}: a runtime error where the model ran to the end:\n{err}")
        problems += _steps_against_model(name, m.stats, want_steps)
    elif err is None:
        problems.append(f"{name}: ran to the end where the model stopped ({model_error})")
    return problems


def _steps_against_model(name, steps, want_steps) -> list[str]:
    if steps == want_steps:
        return []
    diff = {k: (want_steps.get(k, 0), steps.get(k, 0)) for k in sorted(set(steps) | set(want_steps))
            if want_steps.get(k, 0) != steps.get(k, 0)}
    return [f"{name}: steps differ from the reference model (model, starvm): {diff}"]


def _beyond_64_bits(prog) -> bool:
    """Does the model computing in 64 bits stop where a result passes them?"""
    from .model import Int64Overflow, Interp
    try:
        with _python_frames(prog.max_depth):
            Interp(prog, int64=True).run()
    except Int64Overflow:
        return True
    except (AssertionError, ZeroDivisionError):
        pass
    return False


@contextlib.contextmanager
def _python_frames(depth):
    """Python's recursion limit raised for the model's Star calls ``depth`` deep."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20 * (depth or 0) + 1000))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


@contextlib.contextmanager
def _environment(**values):
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _step_limit_runs(parsed, kw, seed, natives: bool = False):
    """Both tiers under --max-steps L, L below the loop iterations and calls the program
    needs: the same stop (message, position, stack), output before it and steps; with
    ``natives`` the interpreter with the native kernels too (a kernel past the limit leaves
    what its Star body leaves)."""
    probe = starvm.Machine(out=io.StringIO(), jit="off", max_steps=_BIG, **kw)
    probe.run(parsed, FILENAME)
    gen = probe.ns["_tick"].__self__
    used = 0 if gen.gi_yieldfrom is None else _BIG - operator.length_hint(gen.gi_yieldfrom)   # None: never ticked
    if used <= 0:
        return None, []
    limit = random.Random(seed).randint(0, used - 1)
    a = run(parsed, FILENAME, "off", max_steps=limit, **kw)
    b = run(parsed, FILENAME, "on", max_steps=limit, **kw)
    problems = _tier_differences(a, b, f"under --max-steps {limit}: ")
    if natives:
        problems += _tier_differences(a, run(parsed, FILENAME, "off", max_steps=limit, **{**kw, "native": True}),
                                      f"under --max-steps {limit}, natives on: ")
    if a[2] is None or "step limit" not in a[2]:
        problems.append(f"under --max-steps {limit} (the program takes {used}) the interpreter did not stop: {a[2]}")
    return limit, problems


def _features(prog, model, m, error_at, model_error, limit) -> dict:
    jit = m.jit
    by_display = {r.display: r for r in jit.routines.values()}
    # a call that stopped and ran again interpreted (JitRoutine.restart) ran compiled up to there
    ran_compiled = {d for d, r in by_display.items() if getattr(r, "compiled_calls", 0) or getattr(r, "restarts", 0)}
    main_compiled = "main block" in ran_compiled
    calls = model.calls

    def compiled(name):          # everything a compiled main block calls runs compiled with it
        return main_compiled or name in ran_compiled

    called = lambda *names: [n for n in names if calls.get(n)]          # noqa: E731
    library = [n for n in calls if n not in prog.routines]
    p1 = bool(calls.get("P1"))
    feats = {
        "main block": [True, main_compiled],
        "procedure with var parameters (P1)": [p1, p1 and compiled("P1")],
        "local table (P1)": [p1 and any(s[0] == "tasg" for s in prog.routines["P1"].body), p1 and compiled("P1")],
        "function result in an expression (F1, F2)": [bool(called("F1", "F2")),
                                                      any(compiled(n) for n in called("F1", "F2"))],
        "recursion (RP, RF)": [bool(called("RP", "RF")), any(compiled(n) for n in called("RP", "RF"))],
        "mutual recursion (RP, RQ)": [bool(called("RQ")), any(compiled(n) for n in called("RP", "RQ"))],
        "parallel for (main block)": [_holds(prog.main, "pfor"), _holds(prog.main, "pfor") and main_compiled],
        "library routine body": [bool(library), any(compiled(n) for n in library)],
        "runtime error": [model_error is not None,
                          model_error is not None and compiled("main" if error_at == "main" else error_at or "")],
        "step limit": [limit is not None, limit is not None and main_compiled],
    }
    feats = {k: [bool(a), bool(a) and bool(b)] for k, (a, b) in feats.items()}     # compiled only where it ran
    fallbacks = {}
    if not main_compiled:
        for name in ["main block", *prog.routines, *library]:
            if name != "main block" and not calls.get(name):
                continue
            if name in ran_compiled:
                continue
            r = by_display.get(name)
            why = getattr(r, "why", "") or jit.skipped.get(name, "not compiled (no reason given)")
            fallbacks[name] = _AT.sub("", why)
    return {"features": feats, "fallbacks": fallbacks, "ran_compiled": sorted(ran_compiled)}


def _holds(stmts, op) -> bool:
    nested = {"if": (2, 3), "for": (5,), "while": (3,), "repeat": (3,)}
    for s in stmts:
        if s[0] == op:
            return True
        if any(s[i] and _holds(s[i], op) for i in nested.get(s[0], ())):
            return True
    return False


def program_cache_keys(machine) -> set[str]:
    """The disk-cache keys (starvm/jit/cache.py) of the modules holding this machine's
    program (not the library's, which the next program reuses)."""
    from starvm.jit import cache
    keys = set()
    for r in machine.jit.routines.values():
        try:
            info, unit = r.compiled.info, r.unit
            if info is None or info.node.loc is None or not info.node.loc.filename.startswith("stdlib/"):
                keys.add(cache.key(unit.lowered.source, unit.backend_name))
        except AttributeError:      # a tier that keeps no such module (the GPU's): nothing on disk to forget
            continue
    return keys


def _first_difference(want: str, got: str) -> str:
    w, g = want.splitlines(), got.splitlines()
    for i, (a, b) in enumerate(zip(w, g)):
        if a != b:
            return f"line {i + 1}:\n  model : {a}\n  starvm: {b}"
    return f"model printed {len(w)} lines, starvm {len(g)}"


@pytest.fixture(scope="module", autouse=True)
def jit_cache():
    """The folder compiled code goes to: the cache every run uses (STARVM_JIT_CACHE, default
    ~/.cache/starvm/jit), as for the rest of the suite. A module Numba compiled once (seconds)
    is loaded from there by the other test modules, the other xdist worker, later runs and
    subprocesses; its key hashes its text, the kernels and the versions (starvm/jit/cache.py),
    so changed code compiles anew. Only tests OF the cache need an empty one: they give their
    fresh processes a tmp_path. A fixture imported by each test module, not a
    tests/jit/conftest.py: a second conftest module would shadow tests/conftest.py for the
    tests that import from it."""
    from starvm.config import jit_cache_dir
    return jit_cache_dir()
