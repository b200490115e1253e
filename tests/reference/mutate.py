"""Front-end fuzzing: mutated and truncated Star programs and random bytes.

The only acceptable outcomes of checking or running any input are success or a StarError
with a source position (CLI exit 0 or 1). ``classify_run`` / ``classify_cli`` return
"ok", "star_error" or a failure label; anything else is a bug in starvm.
"""
from __future__ import annotations

import contextlib
import io
import re
import signal
from pathlib import Path

import starvm
from starvm.ui import cli

ROOT = Path(__file__).resolve().parents[2]
SPECIAL = ["__import__", "open", "eval", "exec", "getattr", "__builtins__", "__class__", "v_x", "g_x", "r_p",
           "_op_or", "_writeln", "init_", "main_", "result_", "'", "''", "{", "}", "(*", "*)", "/*", "*/", "//",
           "\x00", "\u00e9", "\t", "\r", "\n", "99999999999999999999", "0", "-1", "parallel", "for", ":=", ": =",
           "=", "(", ")", ";", ",", ".", "begin", "end", "end.", "var", "proc", "function", "table(3, 4)",
           "table(-1, 2)", "BITS('')", "BITS('2')", "BITS('1')", "slice", "word", "integer", "boolean",
           "COL(0, P)", "ROW(1, P)", "STEP(X)", "writeln('x')", "while true do", "repeat", "until", "if", "then",
           "else", "not", "div 0", "mod 0", "xor", "TRIM(2, 1, w)", "REP(1, 1, BITS('11'), w)", "x(0)",
           "recurse(n)", "-", "WARSHALL-C", "WARSHALL(n, P)"]


def corpus() -> list[tuple[str, str]]:
    files = sorted((ROOT / "programs").glob("*.star")) + sorted((ROOT / "stdlib").glob("*.star")) \
        + sorted((ROOT / "tests" / "star").glob("*.star"))
    return [(f.name, f.read_text()) for f in files]


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|'[^'\n]*'|:=|<=|>=|<>|\s+|.", re.S)


def mutate(rnd, text: str, vocab: list[str]) -> str:
    """One to three random edits of a program text."""
    for _ in range(rnd.randint(1, 3)):
        toks = _TOKEN.findall(text) or [""]
        c = rnd.randint(0, 8)
        i = rnd.randrange(len(toks))
        if c == 0:                                   # truncate
            text = text[:rnd.randint(0, len(text))]
            continue
        if c == 1:                                   # delete tokens
            del toks[i:i + rnd.randint(1, 4)]
        elif c == 2:                                 # duplicate a span
            j = min(len(toks), i + rnd.randint(1, 30))
            toks[i:i] = toks[i:j]
        elif c == 3:                                 # insert a token
            toks.insert(i, rnd.choice(vocab) if rnd.random() < 0.7 else rnd.choice(SPECIAL))
        elif c == 4:                                 # replace a token
            toks[i] = rnd.choice(vocab) if rnd.random() < 0.6 else rnd.choice(SPECIAL)
        elif c == 5:                                 # swap two tokens
            j = rnd.randrange(len(toks))
            toks[i], toks[j] = toks[j], toks[i]
        elif c == 6:                                 # change a number
            nums = [k for k, t in enumerate(toks) if t.isdigit()]
            if nums:
                k = rnd.choice(nums)
                toks[k] = str(rnd.choice([0, 1, 2, 63, 64, 65, 1000, -1, 10 ** 6, 2 ** 40]))
        elif c == 7:                                 # a random character
            pos = rnd.randint(0, len(text))
            text = text[:pos] + chr(rnd.choice([rnd.randint(0, 127), rnd.randint(128, 0x2FFF)])) + text[pos:]
            continue
        else:                                        # splice with another part of the text
            j = rnd.randrange(len(toks))
            toks = toks[:i] + toks[j:j + rnd.randint(1, 40)] + toks[i:]
        text = "".join(toks)
    return text


def random_text(rnd) -> str:
    n = rnd.randint(0, 300)
    if rnd.random() < 0.5:
        return bytes(rnd.randrange(256) for _ in range(n)).decode("latin-1")
    return "".join(rnd.choice(SPECIAL + [" ", " ", "\n", "x", "P", "1"]) for _ in range(n // 5))


_HEAD = "var T: table(4, 3); U, V: slice(T); w: word(T); x, i, k: integer; b: boolean;\n"
_FUNC = "function F(a: integer): integer;\nbegin\n  F := a + 1\nend;\n"


def _huge(rnd) -> str:
    return str(rnd.randint(1, 9)) + "".join(rnd.choice("0123456789") for _ in range(rnd.choice([20, 4299, 4301, 6000])))


def _flat(rnd, n: int) -> str:
    """A long flat expression (`1+1+...`, `b and b or ...`, `U and V xor ...`) in a statement."""
    kind = rnd.randint(0, 2)
    if kind == 0:
        terms = [rnd.choice(["1", "x", "i", "2", "F(1)", "NUMB(U)"]) for _ in range(n)]
        ops = [rnd.choice(["+", "-", "*", "+", "-", " div ", " mod "]) for _ in range(n - 1)]
        target = "x"
    elif kind == 1:
        terms = [rnd.choice(["b", "true", "false", "(x = 1)", "(i < k)", "SOME(U)"]) for _ in range(n)]
        ops = [rnd.choice([" and ", " or ", " xor "]) for _ in range(n - 1)]
        target = "b"
    else:
        terms = [rnd.choice(["U", "V", "COL(1, T)", "not U"]) for _ in range(n)]
        ops = [rnd.choice([" and ", " or ", " xor "]) for _ in range(n - 1)]
        target = "V"
    return target + " := " + terms[0] + "".join(o + t for o, t in zip(ops, terms[1:]))


def _nested(rnd, d: int) -> str:
    """One construct nested d deep around a statement."""
    c = rnd.randint(0, 11)
    if c == 0:
        return "x := " + "(" * d + "x + 1" + ")" * d
    if c == 1:
        return "x := " + "-" * d + "1"
    if c == 2:
        return "b := " + "not " * d + "true"
    if c == 3:
        return "begin " * d + "x := x + 1" + " end" * d
    if c == 4:
        return "if x >= 0 then " * d + "x := x + 1"
    if c == 5:
        return "if x < 0 then x := 1 else " * d + "x := x + 1"
    if c == 6:
        return "while x < 1 do " * d + "x := x + 1"
    if c == 7:
        return "repeat " * d + "x := x + 1" + " until x > 0" * d
    if c == 8:
        return "".join(f"for k := 1 to 1 do " if j % 2 else "for i := 1 to 1 do " for j in range(min(d, 2))) + \
            "begin " * d + "x := x + 1" + " end" * d
    if c == 9:
        return "x := " + "F(" * d + "1" + ")" * d
    if c == 10:
        return "x := " + "(x + " * d + "1" + ")" * d
    return "b := " + "(b and " * (d // 2) + "(b or " * (d - d // 2) + "true" + ")" * d


def structured_text(rnd, quick: bool = False) -> str:
    """A program at the edges of the front end: a long flat expression, a construct nested
    deeply, integers past 4300 digits (literals, computed, as indexes and sizes). ``quick``:
    sizes just past Python's limits (200 parentheses, 100 indentation levels, 20 loops)."""
    c = rnd.randint(0, 2)
    if c == 0:
        body = _flat(rnd, rnd.choice([210, 250] if quick else [50, 210, 700, 1500]))
    elif c == 1:
        body = _nested(rnd, rnd.choice([25, 110] if quick else [30, 120, 600, 1500]))
    else:
        big = _huge(rnd)
        body = rnd.choice([f"x := {big}; writeln(x, ' ', x - 1, ' ', x div 7)",
                           "x := 1; for i := 1 to 15000 do x := x * 2; writeln(x)",
                           f"writeln(ROW({big}, T))", f"x := {big}; U(x) := 1", f"writeln(TRIM(1, {big}, w))",
                           f"x := -{big}; writeln(x mod 3, x)"])
        if rnd.random() < 0.2:
            return f"var P: table({big}, 2);\nbegin\n  writeln(1)\nend.\n"
    text = _HEAD + _FUNC + "begin\n  x := 0; i := 1; k := 2; b := true; SET(U); CLR(V); w := ROW(1, T);\n  " + body + \
        ";\n  writeln(x, b, V)\nend.\n"
    if rnd.random() < 0.2:      # broken at a random place
        text = text[:rnd.randint(0, len(text))]
    return text


def inputs(rnd, count: int, edges: bool = True):
    """``count`` (name, text) inputs: mostly mutations of the shipped programs, some random,
    with ``edges`` one in 20 at the edges (``structured_text``: long, deep, huge numbers)."""
    base = corpus()
    vocab = sorted({t for _, text in base for t in _TOKEN.findall(text) if t.strip()})
    for k in range(count):
        if k % 10 == 9:
            yield "random", random_text(rnd)
        elif k % 20 == 4 and edges:
            yield "structured", structured_text(rnd)
        else:
            name, text = base[rnd.randrange(len(base))]
            yield name, mutate(rnd, text, vocab)


class Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise Timeout()


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise Timeout after ``seconds`` of this process's CPU time (not wall time: on a loaded
    machine a quick input can take many wall seconds, and a hang burns CPU all the same)."""
    old = signal.signal(signal.SIGPROF, _alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


# The step limit bounds every run; the time limit only catches a hang outside counted steps
# (parsing, checking), so it is generous: 5 s timed out once on a 16-worker GPU-machine run.
SECONDS = 20.0


def classify_run(text: str, max_steps: int = 20_000, seconds: float = SECONDS, fuse: bool = True) -> tuple[str, str]:
    """Run a text through Machine (like `star run`): ('ok' | 'star_error' | failure, detail)."""
    m = starvm.Machine(backend="numpy", out=io.StringIO(), max_steps=max_steps, fuse=fuse)
    m.env.warn = lambda w: w.render()    # warnings must render; the run goes on
    try:
        with time_limit(seconds):
            m.run(text, "fuzz.star")
    except Timeout:
        return "timeout", ""
    except starvm.StarError as e:
        if e.loc is None and text.strip():
            return "error_without_position", e.render()
        e.render()          # rendering must work too
        return "star_error", e.message
    except RecursionError as e:     # e.g. the parser on deeply nested brackets
        return "crash", f"RecursionError: {e}"
    except Exception as e:  # noqa: BLE001
        return "crash", f"{type(e).__name__}: {e}"
    return "ok", ""


def classify_cli(path: str, command: str = "check") -> tuple[str, str]:
    """cli.main(['check' | 'run', path]) in-process: exit 0, or 1 with a positioned message."""
    err, out = io.StringIO(), io.StringIO()
    argv = [command, path] + (["--max-steps", "20000"] if command == "run" else [])
    try:
        with time_limit(SECONDS), contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            rc = cli.main(argv)
    except Timeout:
        return "timeout", ""
    except SystemExit as e:
        return "crash", f"SystemExit {e.code}: {err.getvalue()[:300]}"
    msg = err.getvalue()
    if rc == 0:
        return "ok", ""
    if rc == 1:
        if re.match(r"^.*:\d+:\d+: error: ", msg):
            return "star_error", msg.splitlines()[0]
        return "error_without_position", msg[:300]
    if rc == 2 and "cannot read" in msg:
        return "unreadable", msg.strip()   # not UTF-8: an I/O error (exit 2), not a Star error
    return "crash", f"exit {rc}: {msg[:500]}"
